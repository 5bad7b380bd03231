/** The catalog: every dataset with its list price, your price from the Terminal and by key, and access. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ProblemBox } from '../components/problem-box.tsx';
import { ScrollRegion } from '../components/scroll-region.tsx';
import { Link, navigate } from '../router.tsx';
import type { CatalogEntry, Price } from '../types.ts';

interface Line extends CatalogEntry {
  price: Price | undefined;
}

const sourceLabel = {
  sample: 'sample',
  imported: 'imported',
  external: 'operator table',
  none_yet: 'sample',
} as const;

export function ExplorerPage({ search }: { search: string }) {
  const params = new URLSearchParams(search);
  const [q, setQ] = useState(params.get('q') ?? '');
  const [domain, setDomain] = useState(params.get('domain') ?? '');
  const [free, setFree] = useState(params.get('free') ?? '');
  const [maxCost, setMaxCost] = useState(params.get('max_cost') ?? '');
  const [lines, setLines] = useState<Line[] | null>(null);
  const [tier, setTier] = useState<string>('');
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    Promise.all([
      api<{ data: CatalogEntry[] }>('/api/v1/catalog'),
      api<{ data: Price[]; meta: { tier: { name: string; discount_pct: number } } }>('/api/v1/me/prices'),
    ])
      .then(([catalog, prices]) => {
        const byKey = new Map(prices.body.data.map((p) => [p.key, p]));
        setLines(catalog.body.data.map((e) => ({ ...e, price: byKey.get(e.key) })));
        const t = prices.body.meta.tier;
        setTier(`${t.name}, ${t.discount_pct}% discount`);
      })
      .catch(setError);
  }, []);

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
  const maxCostValid = maxCost === '' || /^\d{1,9}$/.test(maxCost);
  const shown = useMemo(() => {
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    return (lines ?? []).filter((l) => {
      if (domain && l.domain !== domain) return false;
      if (free === 'p0' && !l.p0) return false;
      if (free === 'paid' && l.p0) return false;
      if (maxCost && maxCostValid && l.list_cost > Number(maxCost)) return false;
      const text =
        `${l.key} ${l.domain} ${l.title} ${l.description} ${l.entity_fields.join(' ')} ${(l.price?.fields ?? []).join(' ')}`.toLowerCase();
      return words.every((w) => text.includes(w));
    });
  }, [lines, q, domain, free, maxCost, maxCostValid]);

  return (
    <>
      <h1>Catalog explorer</h1>
      <p class="muted">
        Prices are per read, for you now ({tier || '…'}): from the Terminal they include the 35% surcharge
        after your discount; with an API key they do not.
      </p>
      <form class="row" aria-label="Filter the catalog" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input
            type="search"
            value={q}
            onInput={(e) => setQ(e.currentTarget.value)}
            placeholder="name, domain, field, description"
            maxLength={200}
          />
        </label>
        <label>
          Domain
          <select value={domain} onChange={(e) => setDomain(e.currentTarget.value)}>
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
          <select value={free} onChange={(e) => setFree(e.currentTarget.value)}>
            <option value="">Free and paid</option>
            <option value="p0">Free (P0) only</option>
            <option value="paid">Paid only</option>
          </select>
        </label>
        <label>
          Max list cost
          <input
            inputMode="numeric"
            value={maxCost}
            size={6}
            onInput={(e) => setMaxCost(e.currentTarget.value.trim())}
            aria-invalid={maxCostValid ? undefined : true}
            aria-describedby={maxCostValid ? undefined : 'max-cost-invalid'}
          />
        </label>
        <p class="muted" aria-live="polite">
          {lines ? `${shown.length} of ${lines.length} datasets` : 'Loading…'}
        </p>
      </form>
      {!maxCostValid && (
        <p id="max-cost-invalid" class="problem" role="alert">
          Max list cost must be a whole number of tokens.
        </p>
      )}
      {error !== null && <ProblemBox error={error} />}
      {lines && (
        <ScrollRegion label="Datasets (scrollable)">
          <table>
            <caption class="visually-hidden">Datasets and what a read costs you</caption>
            <thead>
              <tr>
                <th scope="col">Dataset</th>
                <th scope="col">Access</th>
                <th scope="col">Data</th>
                <th scope="col" class="num">
                  List price
                </th>
                <th scope="col" class="num">
                  You pay (Terminal)
                </th>
                <th scope="col" class="num">
                  You pay (API key)
                </th>
                <th scope="col">Who may read it</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((l) => (
                <tr key={l.key}>
                  <td>
                    <Link href={`/dataset/${l.key}`}>{l.key}</Link>
                    <div class="muted small">{l.title}</div>
                  </td>
                  <td>{l.p0 ? <span class="badge p0">P0 free</span> : <span class="badge">paid</span>}</td>
                  <td>
                    {l.price && (
                      <span class={`badge ${l.price.data_source === 'imported' ? '' : 'sample'}`}>
                        {sourceLabel[l.price.data_source]}
                      </span>
                    )}
                  </td>
                  <td class="num">{l.list_cost}</td>
                  <td class="num" data-testid="terminal-price">
                    {l.price?.terminal_cost}
                  </td>
                  <td class="num">{l.price?.api_key_cost}</td>
                  <td class="small">
                    {l.price?.entitled === false ? (
                      <span class="badge no">402 not_entitled</span>
                    ) : (
                      <span>You, from the Terminal and with wallet keys.</span>
                    )}{' '}
                    {l.p0 ? (
                      <span class="muted">Free keys too (public test: no burn).</span>
                    ) : (
                      <span class="muted">
                        Not free keys: a sandbox or public-test key gets 402 not_entitled; a wallet key or the
                        Terminal entitles you.
                      </span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
      {lines && shown.length === 0 && (
        <p>
          No dataset matches.{' '}
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setQ('');
              setDomain('');
              setFree('');
              setMaxCost('');
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
