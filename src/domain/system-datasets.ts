/**
 * The system/* datasets the service can fill from its own records: the caller's usage, the import runs,
 * and each imported dataset's provenance and freshness. Their rows are made per read (they change with
 * every read and import) and paged like stored rows; the other system/* datasets stay sample data.
 */

import { createHash } from 'node:crypto';
import type { Row, RowQuery } from '../catalog/types.ts';
import type { CollectionRun, CollectorState, Datasets, ImportRun, Ledger, StoredRow } from '../store/port.ts';
import type { Caller } from './caller.ts';
import { formatMicros } from './money.ts';
import { usageScope } from './usage-summary.ts';

export const recordDatasets = new Set([
  'system/api-usage',
  'system/data-collection-log',
  'system/collection-metadata',
  'system/backfill-state',
  'system/sync-metadata',
]);

const HOUR_MS = 3_600_000;
const MAX_USAGE_EVENTS = 50_000;
const MAX_RUNS = 10_000;

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const day = (t: string | null) => (t === null ? null : t.slice(0, 10));

/** The caller's own usage by hour, dataset and face: never another account's (or key's) events. */
async function apiUsage(store: Ledger, caller: Caller | undefined): Promise<Row[]> {
  if (!caller) return [];
  const scope = usageScope(caller);
  if (!scope) return [];
  // The newest events summed by the store per hour, dataset and channel, newest first; REST and the
  // Terminal's reads are both GET, so their sums meet here.
  const { sums } = await store.sumUsage(scope, { sinceMs: 0, bucketMs: HOUR_MS, limit: MAX_USAGE_EVENTS });
  const groups = new Map<string, { row: Row; requests: number; burned: bigint }>();
  for (const sum of sums) {
    const hour = iso(sum.bucketAt);
    const endpoint = sum.dataset.startsWith('recipe:') ? `recipe ${sum.dataset.slice(7)}` : sum.dataset;
    const method = sum.channel === 'mcp' ? 'MCP tools/call' : 'GET';
    const id = JSON.stringify([hour, endpoint, method]);
    const group = groups.get(id) ?? { row: { hour, endpoint, method }, requests: 0, burned: 0n };
    // A refund is recorded as its burn negated: it lowers the hour's burn, not its requests.
    group.requests += sum.served;
    group.burned += sum.burnedMicros;
    groups.set(id, group);
  }
  return [...groups.values()].map(({ row, requests, burned }) => ({
    ...row,
    requests,
    errors_4xx: null,
    errors_5xx: null,
    tokens_burned: Number(formatMicros(burned)),
    p50_latency_ms: null,
    p95_latency_ms: null,
  }));
}

/** One line per import: what it loaded and when its rows were swapped in, or why they were not. */
function collectionLog(runs: readonly ImportRun[]): Row[] {
  return runs.map((run) => {
    const file = `${run.fileName || 'rows'} into ${run.dataset}`;
    const sha = run.sha256 ? ` (sha256 ${run.sha256})` : '';
    const message =
      run.outcome === 'swapped'
        ? `${file}: ${run.rowsInserted} new, ${run.rowsReplaced} replaced, ${run.rowsRejected} rejected${sha}; swapped in at ${run.swappedAt === null ? 'its import' : iso(run.swappedAt)}`
        : run.outcome === 'loading'
          ? `${file}: loading beside the live rows${sha}`
          : `${file}: ${run.outcome}, the dataset kept its rows: ${run.error ?? 'no reason recorded'}${sha}`;
    return {
      run_at: iso(run.importedAt),
      collector: run.importer,
      status:
        run.outcome === 'swapped'
          ? run.rowsRejected > 0
            ? 'partial'
            : 'ok'
          : run.outcome === 'loading'
            ? 'running'
            : 'failed',
      rows_fetched: run.rowsRead,
      http_status: null,
      duration_ms: run.swappedAt === null ? null : Math.max(0, run.swappedAt - run.importedAt),
      message,
    };
  });
}

/** Per imported dataset: its span and row count now, and its newest import. */
async function datasetFacts(store: Datasets, runs: readonly ImportRun[], now: number): Promise<Row[][]> {
  const latest = new Map<string, ImportRun>();
  for (const run of runs)
    if (run.outcome === 'swapped' && !latest.has(run.dataset)) latest.set(run.dataset, run);
  const today = iso(now).slice(0, 10);
  const out: Row[][] = [[], [], []];
  for (const [dataset, run] of latest) {
    const span = await store.datasetSpan(dataset);
    if (span?.source !== 'import') continue;
    out[0]?.push({
      collection: dataset,
      snapshot_date: today,
      row_count: span.rows,
      first_date: day(span.firstT),
      last_date: day(span.lastT),
      size_bytes: null,
      schema_version: null,
      last_updated_at: iso(run.importedAt),
    });
    out[1]?.push({
      dataset_key: dataset,
      as_of: today,
      earliest_loaded: day(span.firstT),
      latest_loaded: day(span.lastT),
      rows_loaded: span.rows,
      state: 'complete',
      last_error: null,
    });
    out[2]?.push({
      source_id: dataset,
      synced_at: iso(run.importedAt),
      cursor: span.lastT,
      records_upserted: run.rowsInserted + run.rowsReplaced,
      records_deleted: 0,
      lag_seconds: Math.max(0, Math.floor((now - run.importedAt) / 1000)),
      state: 'idle',
    });
  }
  return out;
}

export async function recordRows(
  dataset: string,
  stores: { ledger: Ledger; datasets: Datasets },
  caller: Caller | undefined,
  now: number,
): Promise<Row[]> {
  if (dataset === 'system/api-usage') return apiUsage(stores.ledger, caller);
  const runs = await stores.datasets.listImportRuns({}, MAX_RUNS);
  if (dataset === 'system/data-collection-log') {
    // A collector's run stands for the imports it made (one per chunk it stored).
    const imports = collectionLog(runs.filter((r) => !r.importer.startsWith('collector:')));
    const collected = (await stores.datasets.listCollectionRuns(MAX_RUNS)).map(collectorLog);
    return [...collected, ...imports];
  }
  const [metadata, backfill, sync] = await datasetFacts(stores.datasets, runs, now);
  if (dataset === 'system/collection-metadata') return metadata ?? [];
  if (dataset === 'system/backfill-state') return backfill ?? [];
  const collectors = (await stores.datasets.listCollectorStates())
    .filter((state) => state.lastRunAt !== null)
    .map((state) => collectorSync(state, now));
  return [...collectors, ...(sync ?? [])];
}

/** One line per collector run: what it asked, what it wrote, how it ended. */
function collectorLog(run: CollectionRun): Row {
  const figures = `${run.rowsNew} new, ${run.rowsChanged} changed, ${run.rowsRejected} rejected; ${run.requests} requests (${run.notModified} not modified), ${run.bytes} bytes`;
  return {
    run_at: iso(run.startedAt),
    collector: run.source,
    status: run.outcome,
    rows_fetched: run.rowsNew + run.rowsChanged + run.rowsRejected,
    http_status: null,
    duration_ms: run.finishedAt - run.startedAt,
    message:
      run.outcome === 'failed'
        ? `${figures}; failed, the datasets kept their rows: ${run.error}`
        : `${run.datasets.length > 0 ? `into ${run.datasets.join(', ')}: ` : 'nothing new: '}${figures}`,
  };
}

/** A collector's cursor and health, as system/sync-metadata lists each source. */
function collectorSync(state: CollectorState, now: number): Row {
  return {
    source_id: state.source,
    synced_at: iso(state.lastSuccessAt ?? (state.lastRunAt as number)),
    cursor: state.cursor,
    records_upserted: null,
    records_deleted: 0,
    lag_seconds:
      state.lastSuccessAt === null ? null : Math.max(0, Math.floor((now - state.lastSuccessAt) / 1000)),
    state:
      state.pausedUntil !== null && state.pausedUntil > now
        ? 'paused'
        : state.failures > 0
          ? 'failing'
          : 'idle',
  };
}

function jsonText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The fields that name a row of each record dataset whatever its figures are now: its id is derived from
 * them, so keyset paging over a list made again for every read neither repeats nor skips a row.
 */
const naturalKeys: Readonly<Record<string, readonly string[]>> = {
  'system/api-usage': ['hour', 'endpoint', 'method'],
  // The message names the file, the dataset and the file's sha256.
  'system/data-collection-log': ['run_at', 'collector', 'message'],
  'system/collection-metadata': ['collection'],
  'system/backfill-state': ['dataset_key'],
  'system/sync-metadata': ['source_id'],
};

/**
 * Ids from each row's natural key (a positive safe integer from its SHA-256): the same row has the same
 * id on every read, wherever the list puts it. Rows with the same key are told apart by their order.
 */
function recordIds(dataset: string, rows: readonly Row[]): number[] {
  const fields = naturalKeys[dataset];
  const seen = new Map<string, number>();
  return rows.map((row) => {
    const key = JSON.stringify(fields ? fields.map((f) => row[f] ?? null) : row);
    const occurrence = seen.get(key) ?? 0;
    seen.set(key, occurrence + 1);
    const digest = createHash('sha256')
      .update(JSON.stringify([key, occurrence]))
      .digest();
    return digest.readUIntBE(0, 6) + 1;
  });
}

/** Rows made in memory, paged as the store pages stored rows (filters, time bounds, order, keyset). */
export function pageOfRecords(rows: readonly Row[], timeField: string, q: RowQuery): StoredRow[] {
  const ids = recordIds(q.dataset, rows);
  const withIds = rows.map((row, i) => ({ id: ids[i] as number, t: String(row[timeField] ?? ''), row }));
  const kept = withIds.filter(({ t, id, row }) => {
    if (q.from !== undefined && t < q.from) return false;
    if (q.toExclusive !== undefined && t >= q.toExclusive) return false;
    for (const [field, accepted] of Object.entries(q.filters)) {
      const value = row[field];
      const ok =
        typeof accepted[0] === 'number'
          ? typeof value === 'number' && (accepted as number[]).includes(value)
          : value !== null && value !== undefined && (accepted as string[]).includes(jsonText(value));
      if (!ok) return false;
    }
    if (q.after) {
      const later = t > q.after.t || (t === q.after.t && id > q.after.id);
      const earlier = t < q.after.t || (t === q.after.t && id < q.after.id);
      if (q.descending ? !earlier : !later) return false;
    }
    return true;
  });
  kept.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : a.id - b.id) * (q.descending ? -1 : 1));
  return kept
    .slice(0, q.limit)
    .map(({ id, t, row }) => ({ id, t, json: JSON.stringify(row), importId: null }));
}
