/**
 * The part of the Store port that loads real rows by natural key and keeps the record of each import
 * (docs/operators.md#importing-real-data): which file supplied which rows, under what licence.
 */
import type { Row } from '../catalog/types.ts';

/** One run of a named importer into one dataset, as recorded in the transaction that loaded its rows. */
export interface ImportRun {
  id: number;
  /** The dataset's canonical key. */
  dataset: string;
  /** The importer's name (`fred-series`), or `generic` for a column-mapped file. */
  importer: string;
  /** Who publishes the data (`SEC EDGAR`). */
  sourceName: string;
  /** The file's base name, as the operator gave it. */
  fileName: string;
  sha256: string;
  licence: string;
  /** The credit the licence asks for, when it asks for one. */
  attribution: string | null;
  importedAt: number;
  rowsRead: number;
  /** Rows new to the dataset. */
  rowsInserted: number;
  /** Rows that took the place of a stored row with the same natural key and other values (a row
   * stored with the same values is left as it is, and counted in neither). */
  rowsReplaced: number;
  rowsRejected: number;
  /** The earliest and latest time field of the rows this run loaded. */
  firstT: string | null;
  lastT: string | null;
  /**
   * `loading`: rows are being written beside the live ones; `swapped`: they became the dataset's rows
   * at swappedAt; `failed`: refused or broken off (error says why), the dataset kept its rows;
   * `interrupted`: the importing process ended before the swap, the dataset kept its rows.
   */
  outcome: ImportOutcome;
  swappedAt: number | null;
  error: string | null;
}

export type ImportOutcome = 'loading' | 'swapped' | 'failed' | 'interrupted';

export type NewImportRun = Omit<
  ImportRun,
  'id' | 'dataset' | 'rowsInserted' | 'rowsReplaced' | 'firstT' | 'lastT' | 'outcome' | 'swappedAt' | 'error'
>;

/**
 * The natural key of a row of a generic import: its entity fields' and time field's values as JSON
 * (`g:["AAPL","2026-01-02"]`), the key the stores also compute from a stored row's JSON.
 */
export function generatedKey(row: Row, fields: readonly string[]): string {
  return `g:${JSON.stringify(fields.map((f) => row[f] ?? null))}`;
}

/** A row with its natural key (entity + time, or accession + line) as one string. */
export interface KeyedRow {
  key: string;
  row: Row;
}

/** What a dataset holds: its rows' span and where they came from. */
export interface DatasetSpan {
  source: 'sample' | 'import' | 'external';
  /** For an external dataset: what the operator says its rows are (their provenance). */
  origin?: string;
  rows: number;
  /** The earliest and latest time field, null for an empty dataset. */
  firstT: string | null;
  lastT: string | null;
  loadedAt: number;
}

export interface ImportStore {
  /**
   * In one transaction: replaces each stored row whose natural key a new row carries, adds the others,
   * and records the run. Sample rows are dropped first (real rows never sit beside generated ones).
   * With csvColumns, each row's CSV line over them is stored as loadRows stores it.
   */
  upsertRows(
    dataset: string,
    timeField: string,
    rows: readonly KeyedRow[],
    run: NewImportRun,
    csvColumns?: readonly string[],
  ): Promise<ImportRun>;
  /**
   * upsertRows over rows that arrive in batches (a file read as it is parsed), in one transaction: the
   * dataset holds all of them or, if the iterable throws, none (its rows are as they were). No more than
   * one batch is held at a time. A key a later row repeats replaces what the earlier one wrote; the run's
   * counts and span are of distinct keys. With `naturalKey` (rows keyed by `generatedKey` over those
   * fields), stored rows that have no key yet (a replacing load wrote them) are given theirs first, so
   * the import replaces them rather than adding them again.
   */
  upsertRowsStream(
    dataset: string,
    timeField: string,
    batches: AsyncIterable<readonly KeyedRow[]>,
    run: NewImportRun,
    csvColumns?: readonly string[],
    options?: { naturalKey?: readonly string[] },
  ): Promise<ImportRun>;
  /** Import runs, newest first: of one dataset, of the given ids, or of every dataset. */
  listImportRuns(filter: { dataset?: string; ids?: readonly number[] }, limit: number): Promise<ImportRun[]>;
  /** The dataset's row count, first and last time, and source; null before anything was loaded. */
  datasetSpan(dataset: string): Promise<DatasetSpan | null>;
}

export function keyedSpan(rows: readonly KeyedRow[], timeField: string): [string | null, string | null] {
  let first: string | null = null;
  let last: string | null = null;
  for (const { row } of rows) {
    const t = String(row[timeField] ?? '');
    if (first === null || t < first) first = t;
    if (last === null || t > last) last = t;
  }
  return [first, last];
}

/** The rows with each natural key once: a later row of the same key takes the earlier one's place. */
export function distinctByKey(rows: readonly KeyedRow[]): KeyedRow[] {
  const byKey = new Map<string, KeyedRow>();
  for (const keyed of rows) {
    byKey.delete(keyed.key);
    byKey.set(keyed.key, keyed);
  }
  return byKey.size === rows.length ? [...rows] : [...byKey.values()];
}

/** Import ids of a page's rows: distinct, ascending. */
export function importIdsOf(ids: Iterable<number | null | undefined>): number[] {
  const seen = new Set<number>();
  for (const id of ids) if (typeof id === 'number') seen.add(id);
  return [...seen].sort((a, b) => a - b);
}
