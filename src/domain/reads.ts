/** Dataset reads: resolve, plan, fetch and meter. REST, recipes and MCP all read through here. */
import type { Catalog, CatalogEntry } from '../catalog/catalog.ts';
import {
  type CursorCodec,
  DEFAULT_LIMIT,
  type FilterValue,
  planRead,
  quoteValue,
  type ReadParams,
} from '../catalog/read-plan.ts';
import { generateSampleRows } from '../catalog/sample-data.ts';
import type { Row } from '../catalog/types.ts';
import type { Tier } from '../config.ts';
import { AppError } from '../errors.ts';
import { importIdsOf } from '../store/import-port.ts';
import type { DatasetSpan, Datasets, ImportRun, RowSource, StoredPage, StoredRow } from '../store/port.ts';
import type { Caller } from './caller.ts';
import { type CostFigures, type Estimate, estimate, type MeterDeps, meter } from './metering.ts';
import { type PriceLine, priceList } from './price-list.ts';
import { costEur } from './pricing.ts';
import { pageOfRecords, recordDatasets, recordRows } from './system-datasets.ts';

interface ReadBase {
  entry: CatalogEntry;
  /** Rows on the page. */
  count: number;
  /** Stored rows the read looked at (at most SCAN_CAP when a filter is checked row by row). */
  examined: number;
  /** Projected fields, or null when every field is returned. */
  fields: string[] | null;
  nextCursor: string | null;
  /** `records`: a system/* dataset made from the service's own records for this read. */
  source: RowSource | 'records';
  /** The import runs that supplied the page's rows, oldest first (none for sample rows). */
  imports: ImportRun[];
  /** The dataset's newest observation (its latest time field), null when it holds no rows. */
  asOf: string | null;
  /** For rows read from the operator's own table: what the operator says they are. */
  origin?: string;
  /** The page was cut short of its limit to stay within `ReadOptions.maxChars`; nextCursor continues it. */
  cut: boolean;
}

/** What a dataset holds, for the catalog: sample or imported rows, how many, their span, the last import. */
export interface DatasetStatus {
  source: RowSource;
  /** For rows read from the operator's own table: what the operator says they are. */
  origin?: string;
  /** For an external dataset, the planner's estimate. */
  rows: number;
  firstT: string | null;
  lastT: string | null;
  /** When the rows now held were loaded (sample rows: generated), null before anything was. */
  loadedAt: number | null;
  lastImport: ImportRun | null;
}

/** A page one row at a time (`rows`), or full rows as one text page as stored (`page`, see ReadOptions). */
export type ReadResult = ReadBase &
  ({ rows: StoredRow[]; page?: undefined } | { page: StoredPage; rows?: undefined });

/** A read's cost: the metered figures, the dataset's list cost, and the burn in euros. */
export interface ReadCost extends CostFigures {
  listCost: number;
  /** What was burned, in euros ("0.5"). */
  costEur: string;
}

/** One metered read: the page with its metadata (`value`) and its cost. Encoders in views/ render it. */
export interface MeteredRead {
  value: ReadResult;
  cost: ReadCost;
}

/** A filter as a face receives it: a value, a comma-separated list, or a list of either. */
export type FilterArg = FilterValue | FilterValue[];

/** A read's arguments as a face received them (aliases already resolved); absent ones take defaults. */
export interface ReadArgs {
  filters?: Record<string, FilterArg | undefined>;
  from?: string | undefined;
  to?: string | undefined;
  /** Comma-separated field names. */
  fields?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
  sort?: 'asc' | 'desc' | undefined;
}

/**
 * The read request of a face's arguments, with the defaults (limit DEFAULT_LIMIT, newest first). In a
 * list, `items` says what each string is: a comma-separated list of values (REST's repeated query
 * parameters), or one value, commas included (an MCP array).
 */
export function readRequestFrom(args: ReadArgs, items: 'lists' | 'values' = 'lists'): ReadParams {
  const filters: ReadParams['filters'] = {};
  for (const [name, value] of Object.entries(args.filters ?? {})) {
    if (value === undefined) continue;
    filters[name] = !Array.isArray(value)
      ? [value]
      : items === 'values'
        ? value.map((v) => (typeof v === 'string' ? quoteValue(v) : v))
        : value;
  }
  return {
    filters,
    from: args.from,
    to: args.to,
    fields: args.fields?.split(','),
    limit: args.limit ?? DEFAULT_LIMIT,
    cursor: args.cursor,
    sort: args.sort ?? 'desc',
  };
}

export interface ReadOptions {
  /**
   * How full rows come: `rows` (the default) one at a time; `json` as one text page of their stored
   * JSON; `csv` and `csv-json` as a text page that also carries their stored CSV lines, joined for a CSV
   * body or as the content of a JSON string (an MCP page text). A projection, and a page whose rows have
   * no stored lines over the dataset's columns (loaded before lines were stored), come as rows.
   */
  as?: 'rows' | 'json' | 'csv' | 'csv-json';
  /** Who reads: system/api-usage shows the caller's own usage, and nothing without a caller. */
  caller?: Caller;
  /**
   * The most characters of row text the page may carry (a model-sized MCP page): rows past it are left
   * for the next page, whose cursor starts after the last row that fits. A single row is always served.
   * Measured on the stored CSV lines (as escaped for the page), or on the projected values' JSON.
   */
  maxChars?: number;
}

/** The characters a row adds to a text page: its CSV line, else its projected values' JSON. */
function rowChars(row: StoredRow, fields: readonly string[] | null, escaped: boolean): number {
  if (fields === null && typeof row.csv === 'string')
    return (escaped ? JSON.stringify(row.csv).length - 2 : row.csv.length) + 1;
  if (fields === null) return row.json.length + 1;
  const projected = projectRow(row, fields);
  let chars = 0;
  for (const field of fields) chars += JSON.stringify(projected[field] ?? '').length + 1;
  return chars;
}

/**
 * The stored CSV lines of rows fetched with `csvColumns`, when every row has one; null otherwise (rows
 * loaded before lines were stored, or a catalog changed since the load): render those from the JSON.
 */
export function storedCsvLines(rows: readonly StoredRow[]): string[] | null {
  const lines: string[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const csv = rows[i]?.csv;
    if (typeof csv !== 'string') return null;
    lines[i] = csv;
  }
  return lines;
}

export interface ReadDeps extends MeterDeps {
  catalog: Catalog;
  cursors: CursorCodec;
  /** Where the rows are read; the metered path's `store` is the ledger. */
  datasets: Datasets;
}

const SOURCE_TTL_MS = 60_000;

export class DataReads {
  readonly #deps: ReadDeps;
  /** Dataset -> where its rows came from, cached briefly: an import by `tmd` shows within a minute. */
  readonly #sources = new Map<string, { source: RowSource; checkedAt: number }>();
  readonly #loading = new Map<string, Promise<RowSource>>();
  /** Dataset -> its span, cached as briefly as its source. */
  readonly #spans = new Map<string, { span: DatasetSpan | null; checkedAt: number }>();
  /** Import runs never change once recorded: kept by id. */
  readonly #runs = new Map<number, ImportRun>();
  /** Dataset -> the most characters a full row has taken on a budgeted page (`maxChars`). */
  readonly #widths = new Map<string, number>();

  constructor(deps: ReadDeps) {
    this.#deps = deps;
  }

  resolve(key: string): CatalogEntry {
    const entry = this.#deps.catalog.resolve(key);
    if (!entry) {
      const suggestions = this.#deps.catalog.suggest(key);
      const hint =
        suggestions.length > 0
          ? ` Did you mean ${suggestions.join(', ')}?`
          : ' Search the catalog by words: GET /api/v1/catalog?q=<words>, or the search_datasets tool.';
      throw new AppError('dataset_not_found', `No dataset "${key}".${hint}`, { suggestions });
    }
    return entry;
  }

  /** Drops what is cached about a dataset (an import in this process changed it). */
  forget(dataset: string): void {
    this.#sources.delete(dataset);
    this.#spans.delete(dataset);
  }

  async #span(dataset: string): Promise<DatasetSpan | null> {
    const cached = this.#spans.get(dataset);
    if (cached && this.#deps.now() - cached.checkedAt < SOURCE_TTL_MS) return cached.span;
    const span = await this.#deps.datasets.datasetSpan(dataset);
    this.#spans.set(dataset, { span, checkedAt: this.#deps.now() });
    return span;
  }

  async #importRuns(ids: readonly number[]): Promise<ImportRun[]> {
    const missing = ids.filter((id) => !this.#runs.has(id));
    if (missing.length > 0)
      for (const run of await this.#deps.datasets.listImportRuns({ ids: missing }, missing.length))
        this.#runs.set(run.id, run);
    return ids.flatMap((id) => this.#runs.get(id) ?? []);
  }

  /** What the dataset holds now: sample or imported rows, their count and span, and its last import. */
  async status(entry: CatalogEntry): Promise<DatasetStatus> {
    await this.ensureRows(entry);
    const span = await this.#deps.datasets.datasetSpan(entry.dataset.key);
    const [lastImport] = await this.#deps.datasets.listImportRuns({ dataset: entry.dataset.key }, 1);
    return {
      source: span?.source ?? 'sample',
      ...(span?.origin === undefined ? {} : { origin: span.origin }),
      rows: span?.rows ?? 0,
      firstT: span?.firstT ?? null,
      lastT: span?.lastT ?? null,
      loadedAt: span?.loadedAt ? span.loadedAt : null,
      lastImport: lastImport ?? null,
    };
  }

  /**
   * Where a dataset's rows come from, without generating any: one that holds none yet is `sample`, as
   * its first read fills it with sample rows.
   */
  async sourceOf(entry: CatalogEntry): Promise<RowSource> {
    const key = entry.dataset.key;
    const cached = this.#sources.get(key);
    if (cached && this.#deps.now() - cached.checkedAt < SOURCE_TTL_MS) return cached.source;
    const found = await this.#deps.datasets.datasetSource(key);
    if (found) this.#sources.set(key, { source: found.source, checkedAt: this.#deps.now() });
    return found?.source ?? 'sample';
  }

  /** Makes sure a dataset has rows: sample rows are generated on first use, once per database. */
  async ensureRows(entry: CatalogEntry): Promise<RowSource> {
    const cached = this.#sources.get(entry.dataset.key);
    if (cached && this.#deps.now() - cached.checkedAt < SOURCE_TTL_MS) return cached.source;
    let pending = this.#loading.get(entry.dataset.key);
    if (!pending) {
      pending = this.#load(entry).finally(() => this.#loading.delete(entry.dataset.key));
      this.#loading.set(entry.dataset.key, pending);
    }
    return pending;
  }

  async #load(entry: CatalogEntry): Promise<RowSource> {
    const store = this.#deps.datasets;
    let found = await store.datasetSource(entry.dataset.key);
    if (!found) {
      await store.loadRows(
        entry.dataset.key,
        entry.dataset.time_field,
        generateSampleRows(entry.dataset, this.#deps.now()),
        'sample',
        entry.columns,
      );
      found = await store.datasetSource(entry.dataset.key);
    }
    const source = found?.source ?? 'sample';
    this.#sources.set(entry.dataset.key, { source, checkedAt: this.#deps.now() });
    return source;
  }

  /** Fetches one page without metering: the caller must meter it (see `read`). */
  async fetch(entry: CatalogEntry, params: ReadParams, options: ReadOptions = {}): Promise<ReadResult> {
    const plan = planRead(entry, params, this.#deps.cursors);
    if (recordDatasets.has(entry.dataset.key)) return this.#fetchRecords(entry, plan, options.caller);
    const source = await this.ensureRows(entry);
    const as = plan.fields === null ? (options.as ?? 'rows') : 'rows';
    const budget = options.maxChars;
    const key = entry.dataset.key;
    // A budgeted page asks for no more rows than the widest page seen so far (chars per row) lets fit.
    const width = budget === undefined || plan.fields !== null ? undefined : this.#widths.get(key);
    const limit =
      width === undefined || budget === undefined
        ? plan.query.limit
        : Math.max(1, Math.min(plan.query.limit, Math.floor(budget / width)));
    const csv =
      as === 'rows'
        ? undefined
        : ({ csvColumns: entry.csvColumns, csvJoin: as === 'csv' ? 'crlf' : 'json' } as const);
    if (as !== 'rows') {
      const page = await this.#deps.datasets.queryPage(
        as === 'json' ? { ...plan.query, limit } : { ...plan.query, limit, ...csv },
      );
      // Without stored lines for every row, the page is read again as rows and rendered from the JSON;
      // a page over its budget is read again as rows to be cut at a row.
      const text = page.csv ?? page.json;
      if (budget !== undefined && page.count > 0)
        this.#widths.set(key, Math.max(this.#widths.get(key) ?? 0, Math.ceil(text.length / page.count)));
      if (page.csv !== null && (budget === undefined || text.length <= budget || page.count <= 1)) {
        const nextCursor = page.next ? this.#deps.cursors.encode(plan.fingerprint, page.next) : null;
        const provenance = await this.#provenance(entry, page.imports);
        return {
          entry,
          page,
          count: page.count,
          examined: page.examined,
          fields: null,
          nextCursor,
          source,
          cut: limit < plan.query.limit && page.next !== null,
          ...provenance,
        };
      }
    }
    const found = await this.#deps.datasets.queryRows(
      budget === undefined ? plan.query : { ...plan.query, limit, ...(plan.fields === null ? csv : {}) },
    );
    const { rows, examined } = found;
    let next = found.next;
    let cut = limit < plan.query.limit && next !== null;
    if (budget !== undefined) {
      let chars = 0;
      const escaped = csv?.csvJoin === 'json';
      for (let i = 0; i < rows.length; i++) {
        chars += rowChars(rows[i] as StoredRow, plan.fields, escaped);
        if (chars > budget && i > 0) {
          rows.length = i;
          const last = rows[i - 1] as StoredRow;
          next = { t: last.t, id: last.id };
          cut = true;
          break;
        }
      }
    }
    const nextCursor = next ? this.#deps.cursors.encode(plan.fingerprint, next) : null;
    const provenance = await this.#provenance(entry, importIdsOf(rows.map((r) => r.importId)));
    return {
      entry,
      rows,
      count: rows.length,
      examined,
      fields: plan.fields,
      nextCursor,
      source,
      cut,
      ...provenance,
    };
  }

  async #fetchRecords(
    entry: CatalogEntry,
    plan: ReturnType<typeof planRead>,
    caller: Caller | undefined,
  ): Promise<ReadResult> {
    const made = await recordRows(
      entry.dataset.key,
      { ledger: this.#deps.store, datasets: this.#deps.datasets },
      caller,
      this.#deps.now(),
    );
    const rows = pageOfRecords(made, entry.dataset.time_field, {
      ...plan.query,
      limit: plan.query.limit + 1,
    });
    let nextCursor: string | null = null;
    if (rows.length > plan.query.limit) {
      rows.length = plan.query.limit;
      const last = rows.at(-1) as StoredRow;
      nextCursor = this.#deps.cursors.encode(plan.fingerprint, { t: last.t, id: last.id });
    }
    const asOf = made.reduce<string | null>((max, row) => {
      const t = String(row[entry.dataset.time_field] ?? '');
      return max === null || t > max ? t : max;
    }, null);
    return {
      entry,
      rows,
      count: rows.length,
      examined: made.length,
      fields: plan.fields,
      nextCursor,
      source: 'records',
      imports: [],
      asOf,
      cut: false,
    };
  }

  async #provenance(
    entry: CatalogEntry,
    ids: readonly number[],
  ): Promise<{ imports: ImportRun[]; asOf: string | null; origin?: string }> {
    const span = await this.#span(entry.dataset.key);
    return {
      imports: await this.#importRuns(ids),
      asOf: span?.lastT ?? null,
      ...(span?.origin === undefined ? {} : { origin: span.origin }),
    };
  }

  /** One page row by row (recipes read rows as objects). */
  async fetchRows(entry: CatalogEntry, params: ReadParams): Promise<ReadResult & { rows: StoredRow[] }> {
    const result = await this.fetch(entry, params);
    if (!result.rows) throw new Error('a page fetched as rows came as text');
    return result as ReadResult & { rows: StoredRow[] };
  }

  /** Every dataset priced for the caller now (GET /api/v1/me/prices). */
  priceList(caller: Caller): Promise<{ tier: Tier; lines: PriceLine[] }> {
    return priceList(this.#deps, caller);
  }

  /** What one read of this dataset would cost the caller now, and whether it would be refused. */
  async estimate(caller: Caller, key: string): Promise<Estimate> {
    const entry = this.resolve(key);
    return estimate(this.#deps, caller, entry.key, [
      { label: entry.key, listCost: entry.listCost, p0: entry.p0 },
    ]);
  }

  async read(
    caller: Caller,
    requestId: string,
    key: string,
    params: ReadParams,
    options: ReadOptions = {},
  ): Promise<MeteredRead> {
    const entry = this.resolve(key);
    const item = { label: entry.key, listCost: entry.listCost, p0: entry.p0 };
    const { value, cost } = await meter(this.#deps, caller, requestId, entry.key, [item], async () => {
      const value = await this.fetch(entry, params, { ...options, caller });
      return { value, rows: value.count };
    });
    const costEuros = costEur(this.#deps.pricing, cost.burnedMicros);
    return { value, cost: { ...cost, listCost: entry.listCost, costEur: costEuros } };
  }
}

/**
 * What the faces are handed (Services.reads): every read of rows metered. The unmetered fetch stays on
 * DataReads, which the domain's own services (exports, recipes, analyses) are given.
 */
export interface MeteredReads {
  resolve(key: string): CatalogEntry;
  status(entry: CatalogEntry): Promise<DatasetStatus>;
  sourceOf(entry: CatalogEntry): Promise<RowSource>;
  priceList(caller: Caller): Promise<{ tier: Tier; lines: PriceLine[] }>;
  estimate(caller: Caller, key: string): Promise<Estimate>;
  read(
    caller: Caller,
    requestId: string,
    key: string,
    params: ReadParams,
    options?: ReadOptions,
  ): Promise<MeteredRead>;
}

/** The metered face of a DataReads: its methods bound, `fetch` and `fetchRows` left out. */
export function meteredReads(reads: DataReads): MeteredReads {
  return {
    resolve: (key) => reads.resolve(key),
    status: (entry) => reads.status(entry),
    sourceOf: (entry) => reads.sourceOf(entry),
    priceList: (caller) => reads.priceList(caller),
    estimate: (caller, key) => reads.estimate(caller, key),
    read: (caller, requestId, key, params, options) => reads.read(caller, requestId, key, params, options),
  };
}

export function parseRow(row: StoredRow): Row {
  return JSON.parse(row.json) as Row;
}

export function projectRow(row: StoredRow, fields: readonly string[] | null): Row {
  const full = parseRow(row);
  if (fields === null) return full;
  const out: Row = {};
  for (const field of fields) out[field] = full[field] ?? null;
  return out;
}
