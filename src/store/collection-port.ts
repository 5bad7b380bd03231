/** What collectors keep in the Datasets store: each source's cursor and health, and every run. */

export interface CollectorState {
  source: string;
  /** The source's own cursor (dates, accession numbers, validators), as JSON. */
  cursor: string;
  lastRunAt: number | null;
  lastSuccessAt: number | null;
  lastError: string | null;
  /** Runs that failed in a row; reset by a success. */
  failures: number;
  /** Set after repeated failures: scheduled runs skip the source until then. */
  pausedUntil: number | null;
  /** The newest schedule slot (ms) a node claimed for this source (claimCollectorSlot). */
  claimedSlot: number | null;
}

export type CollectionOutcome = 'ok' | 'partial' | 'failed';

export interface CollectionRun {
  id: number;
  source: string;
  startedAt: number;
  finishedAt: number;
  outcome: CollectionOutcome;
  datasets: string[];
  rowsNew: number;
  rowsChanged: number;
  rowsRejected: number;
  requests: number;
  bytes: number;
  /** Requests answered 304 Not Modified. */
  notModified: number;
  error: string | null;
}

export interface CollectionStore {
  collectorState(source: string): Promise<CollectorState | null>;
  listCollectorStates(): Promise<CollectorState[]>;
  /** Writes the whole state, creating it the first time. */
  saveCollectorState(state: CollectorState): Promise<void>;
  /**
   * Claims a schedule slot (its start, ms) for a source: true for exactly one caller per slot across
   * every process on the database, false for the others and for an older slot.
   */
  claimCollectorSlot(source: string, slot: number): Promise<boolean>;
  recordCollectionRun(run: Omit<CollectionRun, 'id'>): Promise<CollectionRun>;
  /** Runs, newest first. */
  listCollectionRuns(limit: number): Promise<CollectionRun[]>;
}

export const COLLECTOR_STATE_COLUMNS =
  'source, cursor, last_run_at, last_success_at, last_error, failures, paused_until, claimed_slot';

/** Both SQL adapters read the rows back the same way. */
export function collectorStateFrom(r: Record<string, unknown>): CollectorState {
  const optNum = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    source: String(r.source),
    cursor: String(r.cursor),
    lastRunAt: optNum(r.last_run_at),
    lastSuccessAt: optNum(r.last_success_at),
    lastError: r.last_error === null || r.last_error === undefined ? null : String(r.last_error),
    failures: Number(r.failures),
    pausedUntil: optNum(r.paused_until),
    claimedSlot: optNum(r.claimed_slot),
  };
}

export function collectionRunFrom(r: Record<string, unknown>): CollectionRun {
  return {
    id: Number(r.id),
    source: String(r.source),
    startedAt: Number(r.started_at),
    finishedAt: Number(r.finished_at),
    outcome: String(r.outcome) as CollectionOutcome,
    datasets: JSON.parse(String(r.datasets)) as string[],
    rowsNew: Number(r.rows_new),
    rowsChanged: Number(r.rows_changed),
    rowsRejected: Number(r.rows_rejected),
    requests: Number(r.requests),
    bytes: Number(r.bytes),
    notModified: Number(r.not_modified),
    error: r.error === null || r.error === undefined ? null : String(r.error),
  };
}

export const COLLECTION_RUN_INSERT = `INSERT INTO collection_runs (source, started_at, finished_at, outcome, datasets,
  rows_new, rows_changed, rows_rejected, requests, bytes, not_modified, error)`;
