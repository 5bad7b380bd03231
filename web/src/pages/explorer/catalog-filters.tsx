/** The explorer's filters: words, domain, access and a maximum list cost; how many datasets they keep. */
import { type Filters, maxCostValid } from './catalog-lines.ts';

export interface CatalogFiltersProps {
  filters: Filters;
  onChange: (patch: Partial<Filters>) => void;
  domains: string[];
  /** What the filters keep, e.g. "3 of 40 datasets" (null while loading). */
  summary: string | null;
}

export function CatalogFilters({ filters, onChange, domains, summary }: CatalogFiltersProps) {
  const valid = maxCostValid(filters.maxCost);
  return (
    <form class="row" aria-label="Filter the catalog" onSubmit={(e) => e.preventDefault()}>
      <label>
        Search
        <input
          type="search"
          value={filters.q}
          onInput={(e) => onChange({ q: e.currentTarget.value })}
          placeholder="name, ticker, series id, field"
          maxLength={200}
        />
      </label>
      <label>
        Domain
        <select value={filters.domain} onChange={(e) => onChange({ domain: e.currentTarget.value })}>
          <option value="">All domains</option>
          {domains.map((d) => (
            <option key={d} value={d}>
              {d}
            </option>
          ))}
        </select>
      </label>
      <label>
        Access
        <select value={filters.free} onChange={(e) => onChange({ free: e.currentTarget.value })}>
          <option value="">Free and paid</option>
          <option value="p0">Free (P0) only</option>
          <option value="paid">Paid only</option>
        </select>
      </label>
      <label>
        Max list cost
        <input
          inputMode="numeric"
          value={filters.maxCost}
          size={6}
          onInput={(e) => onChange({ maxCost: e.currentTarget.value.trim() })}
          aria-invalid={valid ? undefined : true}
          aria-describedby={valid ? undefined : 'max-cost-invalid'}
        />
      </label>
      <p class="muted" aria-live="polite">
        {summary ?? 'Loading…'}
      </p>
    </form>
  );
}
