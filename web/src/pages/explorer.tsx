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

type SortKey = 'key' | 'list' | 'terminal' | 'api';

const sortValue: Record<SortKey, (l: Line) => string | number> = {
  key: (l) => l.key,
  list: (l) => l.list_cost,
  terminal: (l) => Number(l.price?.terminal_cost ?? Number.POSITIVE_INFINITY),
  api: (l) => Number(l.price?.api_key_cost ?? Number.POSITIVE_INFINITY),
};

/**
 * Access worded for the viewer: P0 means free for free keys (the public test), not for a wallet, so a
 * wallet account sees "open data (P0)" beside what it pays, and "free for you" only where it pays 0.
 */
function AccessBadge({ line }: { line: Line }) {
  if (line.price && Number(line.price.terminal_cost) === 0) return <span class="badge p0">free for you</span>;
  if (line.p0)
    return (
      <span class="badge" title="Free for public-test keys; a wallet pays the price shown">
        open data (P0)
      </span>
    );
  return <span class="badge">paid</span>;
}

export function ExplorerPage({ search }: { search: string }) {
  const params = new URLSearchParams(search);
  const [q, setQ] = useState(params.get('q') ?? '');
  const [domain, setDomain] = useState(params.get('domain') ?? '');
  const [free, setFree] = useState(params.get('free') ?? '');
  const [maxCost, setMaxCost] = useState(params.get('max_cost') ?? '');
  const [lines, setLines] = useState<Line[] | null>(null);
  const [tier, setTier] = useState<string>('');
  const [error, setError] = useState<unknown>(null);
  /** The service's ranked answer for the words (tickers and series ids included), once it arrives. */
  const [ranked, setRanked] = useState<{ q: string; keys: string[] } | null>(null);
  const [sort, setSort] = useState<{ by: SortKey; descending: boolean } | null>(null);

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

  useEffect(() => {
    const words = q.trim();
    if (words === '') {
      setRanked(null);
      return;
    }
    // The catalog search runs on the service (it knows which datasets hold AAPL); typing settles first.
    const timer = setTimeout(() => {
      api<{ data: CatalogEntry[] }>(`/api/v1/catalog?q=${encodeURIComponent(words)}`)
        .then((a) => setRanked({ q: words, keys: a.body.data.map((e) => e.key) }))
        .catch(setError);
    }, 200);
    return () => clearTimeout(timer);
  }, [q]);

  const domains = useMemo(() => [...new Set((lines ?? []).map((l) => l.domain))].sort(), [lines]);
  const maxCostValid = maxCost === '' || /^\d{1,9}$/.test(maxCost);
  const shown = useMemo(() => {
    const order = ranked && ranked.q === q.trim() ? new Map(ranked.keys.map((k, i) => [k, i])) : null;
    const kept = (lines ?? []).filter((l) => {
      if (domain && l.domain !== domain) return false;
      if (free === 'p0' && !l.p0) return false;
      if (free === 'paid' && l.p0) return false;
      if (maxCost && maxCostValid && l.list_cost > Number(maxCost)) return false;
      if (q.trim() === '') return true;
      return order ? order.has(l.key) : false;
    });
    if (sort) {
      const value = sortValue[sort.by];
      kept.sort((a, b) => {
        const [x, y] = [value(a), value(b)];
        const cmp =
          typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
        return sort.descending ? -cmp : cmp;
      });
    } else if (order) kept.sort((a, b) => (order.get(a.key) ?? 0) - (order.get(b.key) ?? 0));
    return kept;
  }, [lines, q, ranked, domain, free, maxCost, maxCostValid, sort]);

  /** A column header that sorts by it: once ascending, again descending. */
  const sortable = (by: SortKey, label: string, numeric = false) => {
    const active = sort?.by === by;
    return (
      <th
        scope="col"
        class={numeric ? 'num' : undefined}
        aria-sort={active ? (sort?.descending ? 'descending' : 'ascending') : 'none'}
      >
        <button
          type="button"
          class="sort"
          onClick={() => setSort({ by, descending: active ? !sort?.descending : false })}
        >
          {label}
          <span aria-hidden="true">{active ? (sort?.descending ? ' ▼' : ' ▲') : ''}</span>
        </button>
      </th>
    );
  };

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
            placeholder="name, ticker, series id, field"
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
          {lines
            ? `${shown.length} of ${lines.length} datasets${q.trim() && !sort ? ', best matches first' : ''}`
            : 'Loading…'}
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
          <table class="cards">
            <caption class="visually-hidden">Datasets and what a read costs you</caption>
            <thead>
              <tr>
                {sortable('key', 'Dataset')}
                <th scope="col">Access</th>
                <th scope="col">Data</th>
                {sortable('list', 'List price', true)}
                {sortable('terminal', 'You pay (Terminal)', true)}
                {sortable('api', 'You pay (API key)', true)}
                <th scope="col">Who may read it</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((l) => (
                <tr key={l.key}>
                  <td class="card-title">
                    <div>
                      <Link href={`/dataset/${l.key}`}>{l.key}</Link>
                      <div class="muted small">{l.title}</div>
                    </div>
                  </td>
                  <td data-label="Access">
                    <AccessBadge line={l} />
                  </td>
                  <td data-label="Data">
                    {l.price && (
                      <span class={`badge ${l.price.data_source === 'imported' ? '' : 'sample'}`}>
                        {sourceLabel[l.price.data_source]}
                      </span>
                    )}
                  </td>
                  <td class="num" data-label="List price">
                    {l.list_cost}
                  </td>
                  <td class="num" data-testid="terminal-price" data-label="You pay (Terminal)">
                    {l.price?.terminal_cost}
                  </td>
                  <td class="num" data-label="You pay (API key)">
                    {l.price?.api_key_cost}
                  </td>
                  <td class="small who">
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
