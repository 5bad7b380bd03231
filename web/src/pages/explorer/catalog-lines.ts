/** The explorer's lines (a dataset with your price), how they are filtered and sorted. */
import type { CatalogEntry, Price } from '../../types.ts';

export interface Line extends CatalogEntry {
  price: Price | undefined;
}

export type SortKey = 'key' | 'list' | 'terminal' | 'api';

export interface Sort {
  by: SortKey;
  descending: boolean;
}

export interface Filters {
  q: string;
  domain: string;
  /** '' (both), 'p0' or 'paid'. */
  free: string;
  maxCost: string;
}

/** The service's ranked answer for the words (tickers and series ids included). */
export interface Ranked {
  q: string;
  keys: string[];
}

const sortValue: Record<SortKey, (l: Line) => string | number> = {
  key: (l) => l.key,
  list: (l) => l.list_cost,
  terminal: (l) => Number(l.price?.terminal_cost ?? Number.POSITIVE_INFINITY),
  api: (l) => Number(l.price?.api_key_cost ?? Number.POSITIVE_INFINITY),
};

export const maxCostValid = (maxCost: string) => maxCost === '' || /^\d{1,9}$/.test(maxCost);

/** The lines the filters keep: sorted by a column when asked, else best matches of the words first. */
export function shownLines(lines: Line[], f: Filters, ranked: Ranked | null, sort: Sort | null): Line[] {
  const order = ranked && ranked.q === f.q.trim() ? new Map(ranked.keys.map((k, i) => [k, i])) : null;
  const kept = lines.filter((l) => {
    if (f.domain && l.domain !== f.domain) return false;
    if (f.free === 'p0' && !l.p0) return false;
    if (f.free === 'paid' && l.p0) return false;
    if (f.maxCost && maxCostValid(f.maxCost) && l.list_cost > Number(f.maxCost)) return false;
    if (f.q.trim() === '') return true;
    return order ? order.has(l.key) : false;
  });
  if (sort) {
    const value = sortValue[sort.by];
    kept.sort((a, b) => {
      const [x, y] = [value(a), value(b)];
      const cmp = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return sort.descending ? -cmp : cmp;
    });
  } else if (order) kept.sort((a, b) => (order.get(a.key) ?? 0) - (order.get(b.key) ?? 0));
  return kept;
}
