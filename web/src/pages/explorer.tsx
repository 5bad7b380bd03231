/**
 * The catalog: every dataset with its list price, your price from the Terminal and by key, and access.
 * The parts are in ./explorer/.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ProblemBox } from '../components/problem-box.tsx';
import { navigate } from '../router.tsx';
import { CatalogFilters } from './explorer/catalog-filters.tsx';
import { type Filters, maxCostValid, type Sort, shownLines } from './explorer/catalog-lines.ts';
import { CatalogTable } from './explorer/catalog-table.tsx';
import { useCatalog, useRanking } from './explorer/use-catalog.ts';

const noFilters: Filters = { q: '', domain: '', free: '', maxCost: '' };

function filtersOf(search: string): Filters {
  const params = new URLSearchParams(search);
  return {
    q: params.get('q') ?? '',
    domain: params.get('domain') ?? '',
    free: params.get('free') ?? '',
    maxCost: params.get('max_cost') ?? '',
  };
}

export function ExplorerPage({ search }: { search: string }) {
  const [filters, setFilters] = useState<Filters>(() => filtersOf(search));
  const [error, setError] = useState<unknown>(null);
  const [sort, setSort] = useState<Sort | null>(null);
  const { lines, tier } = useCatalog(setError);
  const ranked = useRanking(filters.q, setError);
  const { q, domain, free, maxCost } = filters;

  // The filters live in the address too, so a filtered view can be linked and comes back on Back.
  useEffect(() => {
    const next = new URLSearchParams();
    if (q) next.set('q', q);
    if (domain) next.set('domain', domain);
    if (free) next.set('free', free);
    if (maxCost) next.set('max_cost', maxCost);
    const query = next.toString();
    history.replaceState(null, '', `${location.pathname}${query ? `?${query}` : ''}`);
  }, [q, domain, free, maxCost]);

  const domains = useMemo(() => [...new Set((lines ?? []).map((l) => l.domain))].sort(), [lines]);
  const shown = useMemo(() => shownLines(lines ?? [], filters, ranked, sort), [lines, filters, ranked, sort]);

  return (
    <>
      <h1>Catalog explorer</h1>
      <p class="muted">
        Prices are per read, for you now ({tier || '…'}): from the Terminal they include the 35% surcharge
        after your discount; with an API key they do not.
      </p>
      <CatalogFilters
        filters={filters}
        onChange={(patch) => setFilters((f) => ({ ...f, ...patch }))}
        domains={domains}
        summary={
          lines
            ? `${shown.length} of ${lines.length} datasets${q.trim() && !sort ? ', best matches first' : ''}`
            : null
        }
      />
      {!maxCostValid(maxCost) && (
        <p id="max-cost-invalid" class="problem" role="alert">
          Max list cost must be a whole number of tokens.
        </p>
      )}
      {error !== null && <ProblemBox error={error} />}
      {lines && <CatalogTable lines={shown} sort={sort} onSort={setSort} />}
      {lines && shown.length === 0 && (
        <p>
          No dataset matches.{' '}
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setFilters(noFilters);
              navigate('/explorer', true);
            }}
          >
            Clear the filters
          </button>
        </p>
      )}
    </>
  );
}
