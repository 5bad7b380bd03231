/** The catalog at run time: every priced key and alias resolved to its dataset, price and P0 status. */
import { csvColumnsKey } from './csv.ts';
import type { DatasetDef } from './types.ts';

export interface CatalogEntry {
  /** The key as the caller named it (canonical or alias). */
  key: string;
  domain: string;
  name: string;
  dataset: DatasetDef;
  listCost: number;
  p0: boolean;
  /** The dataset's field names in catalog order: the columns of a full (unprojected) row. */
  columns: readonly string[];
  /** `csvColumnsKey(columns)`: names the stored CSV lines a full-row CSV answer can use. */
  csvColumns: string;
}

/** How each key is priced: the domain's pricing rules, handed in so the catalog does not depend on them. */
export interface KeyPricing {
  listCostOf(key: string): number;
  isP0(key: string): boolean;
}

export interface CatalogFilters {
  domain?: string | undefined;
  /** true: only P0 keys; false: only the others. */
  p0?: boolean | undefined;
  /** Only keys whose list cost is at most this. */
  maxCost?: number | undefined;
  /**
   * Words that must each match the dataset: its key, title, description or field names, or a value of an
   * entity field the catalog lists (`AAPL`, `DGS10`). With words, the best matches come first.
   */
  q?: string | undefined;
}

/** What a dataset is searched by, lower case, built once. */
interface SearchText {
  key: string;
  domain: string;
  name: string;
  title: Set<string>;
  text: string;
  fields: Set<string>;
  entities: Set<string>;
}

export class Catalog {
  readonly #entries = new Map<string, CatalogEntry>();
  readonly datasets: readonly DatasetDef[];

  /** Each dataset's words (key, title, description), for suggestions by words. */
  readonly #words: { key: string; words: Set<string> }[];
  readonly #search = new Map<DatasetDef, SearchText>();

  constructor(datasets: readonly DatasetDef[], pricing: KeyPricing) {
    this.datasets = datasets;
    this.#words = datasets.map((d) => ({
      key: d.key,
      words: new Set(wordsOf(`${d.key} ${d.title} ${d.description}`)),
    }));
    for (const dataset of datasets) {
      this.#search.set(dataset, searchText(dataset));
      const columns = dataset.fields.map((f) => f.name);
      const csvColumns = csvColumnsKey(columns);
      for (const key of [dataset.key, ...dataset.aliases]) {
        const slash = key.indexOf('/');
        this.#entries.set(key, {
          key,
          domain: key.slice(0, slash),
          name: key.slice(slash + 1),
          dataset,
          listCost: pricing.listCostOf(key),
          p0: pricing.isP0(key),
          columns,
          csvColumns,
        });
      }
    }
  }

  resolve(key: string): CatalogEntry | undefined {
    return this.#entries.get(key);
  }

  entries(): CatalogEntry[] {
    return [...this.#entries.values()].sort((a, b) => a.key.localeCompare(b.key));
  }

  /**
   * The catalog search behind GET /api/v1/catalog and the MCP search_datasets tool: every word must match
   * (see CatalogFilters.q); with words, ranked by how well they match (the dataset's name, an entity it
   * holds, its title, then its fields and description), else by key.
   */
  search(filters: CatalogFilters): CatalogEntry[] {
    const { domain, p0, maxCost, q } = filters;
    const words = (q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const scored: { entry: CatalogEntry; score: number }[] = [];
    for (const e of this.entries()) {
      if (domain !== undefined && e.domain !== domain) continue;
      if (p0 !== undefined && e.p0 !== p0) continue;
      if (maxCost !== undefined && e.listCost > maxCost) continue;
      const score = matchScore(this.#search.get(e.dataset) as SearchText, e.key.toLowerCase(), words);
      if (score > 0) scored.push({ entry: e, score });
    }
    if (words.length > 0) scored.sort((a, b) => b.score - a.score || a.entry.key.localeCompare(b.entry.key));
    return scored.map(({ entry }) => entry);
  }

  /**
   * Up to `max` keys closest to a mistyped one, so a 404 can say what was probably meant: by spelling,
   * or else by the words of the guess (`rates/yield-curve`, `treasury yields`) found in a dataset's key,
   * title or description, the datasets with the most of them first.
   */
  suggest(key: string, max = 3): string[] {
    const needle = key.toLowerCase();
    const spelled = [...this.#entries.keys()]
      .map((candidate) => ({ candidate, distance: similarity(needle, candidate) }))
      .filter(({ distance }) => distance <= Math.max(3, Math.floor(needle.length / 3)))
      .sort((a, b) => a.distance - b.distance || a.candidate.localeCompare(b.candidate))
      .slice(0, max)
      .map(({ candidate }) => candidate);
    if (spelled.length > 0) return spelled;
    const words = [...new Set(wordsOf(needle))].filter((w) => !stopWords.has(w));
    if (words.length === 0) return [];
    return this.#words
      .map(({ key: candidate, words: known }) => ({
        key: candidate,
        hits: words.filter((w) => known.has(w)).length,
      }))
      .filter(({ hits }) => hits > 0)
      .sort((a, b) => b.hits - a.hits || a.key.localeCompare(b.key))
      .slice(0, max)
      .map(({ key: k }) => k);
  }
}

/** The words of a text, lower case, a trailing plural s dropped (yields and yield are one word). */
function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3)
    .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

/** Words too common in the catalog to say which dataset was meant. */
const stopWords = new Set([
  'and',
  'the',
  'for',
  'data',
  'dataset',
  'datasets',
  'series',
  'daily',
  'facts',
  'all',
]);

/** Levenshtein distance, with a substring match counted as close. */
function similarity(a: string, b: string): number {
  const nameA = a.slice(a.indexOf('/') + 1);
  if (nameA.length >= 4 && b.includes(nameA)) return 1;
  const previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = previous[0] as number;
    previous[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = previous[j] as number;
      previous[j] = Math.min(
        above + 1,
        (previous[j - 1] as number) + 1,
        diagonal + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      diagonal = above;
    }
  }
  return previous[b.length] as number;
}

function searchText(d: DatasetDef): SearchText {
  const entities = new Set<string>();
  for (const name of d.entity_fields)
    for (const value of d.fields.find((f) => f.name === name)?.sample?.values ?? [])
      entities.add(String(value).toLowerCase());
  return {
    key: d.key.toLowerCase(),
    domain: d.key.slice(0, d.key.indexOf('/')).toLowerCase(),
    name: d.key.slice(d.key.indexOf('/') + 1).toLowerCase(),
    title: new Set(wordsOf(d.title)),
    text: `${d.key} ${d.title} ${d.description}`.toLowerCase(),
    fields: new Set(d.fields.map((f) => f.name.toLowerCase())),
    entities,
  };
}

/** How well the words match a dataset (0: one of them does not); no words match everything, equally. */
function matchScore(s: SearchText, key: string, words: readonly string[]): number {
  let total = 1;
  for (const word of words) {
    const stem = wordsOf(word)[0] ?? word;
    let best = 0;
    if (key === word || s.name === word) best = 100;
    else if (s.domain === word) best = 70;
    else if (s.entities.has(word)) best = 60;
    else if (s.name.includes(word)) best = 40;
    else if (s.title.has(stem)) best = 30;
    else if (key.includes(word)) best = 20;
    else if (s.fields.has(word)) best = 10;
    else if (s.text.includes(word)) best = 5;
    if (best === 0) return 0;
    total += best;
  }
  return total;
}
