/**
 * The part of the Store port that keeps the Workbench's analyses and their runs (docs/analyze.md). Every
 * method is scoped to one account: no call reads or changes another account's analyses.
 */

export interface AnalysisRecord {
  id: string;
  accountId: string;
  name: string;
  /** The analysis spec as JSON text (domain/analysis/spec.ts). */
  spec: string;
  /** The assistant's transcript as JSON text, when the assistant planned it. */
  transcript: string | null;
  /** Which planner answered (`built-in`, `chat`), or null for one composed by hand. */
  planner: string | null;
  createdAt: number;
  updatedAt: number;
}

export type AnalysisRunKind = 'run' | 'ask';
export type AnalysisRunStatus = 'running' | 'done' | 'failed';

export interface AnalysisRunRecord {
  id: string;
  accountId: string;
  analysisId: string | null;
  kind: AnalysisRunKind;
  /** A digest of what the run read and computed: a rerun with the same inputs may reuse the result. */
  inputsHash: string | null;
  startedAt: number;
  status: AnalysisRunStatus;
  reads: number;
  burnedMicros: bigint;
  /** The result as JSON text, once done. */
  result: string | null;
}

export type NewAnalysisRun = Pick<
  AnalysisRunRecord,
  'id' | 'accountId' | 'analysisId' | 'kind' | 'inputsHash' | 'startedAt'
>;

export interface AnalysisRunOutcome {
  status: 'done' | 'failed';
  reads: number;
  burnedMicros: bigint;
  result: string | null;
  analysisId?: string;
  inputsHash?: string;
}

export interface AnalysisStore {
  createAnalysis(record: AnalysisRecord): Promise<void>;
  getAnalysis(accountId: string, id: string): Promise<AnalysisRecord | null>;
  /** The account's analyses, the most recently changed first. */
  listAnalyses(accountId: string): Promise<AnalysisRecord[]>;
  /** False when the account has no such analysis. */
  updateAnalysis(
    accountId: string,
    id: string,
    patch: Partial<Pick<AnalysisRecord, 'name' | 'spec' | 'transcript' | 'planner'>> & { updatedAt: number },
  ): Promise<boolean>;
  /** Deletes the analysis (its runs stay: they count toward the day's fair use). False when absent. */
  deleteAnalysis(accountId: string, id: string): Promise<boolean>;
  /**
   * Records a run as started unless the account has already started `maxRuns` runs at or after
   * `sinceMs`: the count and the insert are atomic, so concurrent runs cannot pass the cap together.
   */
  beginAnalysisRun(
    run: NewAnalysisRun,
    limit: { sinceMs: number; maxRuns: number },
  ): Promise<{ ok: true } | { ok: false; runs: number }>;
  /** Records how a run ended; `analysisId` and `inputsHash`, when given, name what a question produced. */
  finishAnalysisRun(id: string, outcome: AnalysisRunOutcome): Promise<void>;
  /**
   * Forgets a run still running, so it no longer counts toward the day: a question the assistant did not
   * answer (asked back or declined) is not a run. False when there is no such running run.
   */
  releaseAnalysisRun(accountId: string, id: string): Promise<boolean>;
  /** Runs the account started at or after `sinceMs`. */
  countAnalysisRuns(accountId: string, sinceMs: number): Promise<number>;
  /** The account's latest finished (done) run matching the query, started at or after `sinceMs`. */
  findAnalysisRun(
    accountId: string,
    query: { inputsHash?: string; analysisId?: string; sinceMs?: number },
  ): Promise<AnalysisRunRecord | null>;
}
