/** Saved analyses and their runs on SQLite. */
import type { SQLInputValue } from 'node:sqlite';
import { analysisColumns, analysisFrom, analysisRunFrom, runFilter } from '../analysis-rows.ts';
import type { AnalysisRecord, AnalysisRunOutcome, AnalysisRunRecord, NewAnalysisRun } from '../port.ts';
import type { SqliteDb } from './db.ts';

export class SqliteAnalyses {
  readonly #db: SqliteDb;

  constructor(db: SqliteDb) {
    this.#db = db;
  }

  async createAnalysis(a: AnalysisRecord): Promise<void> {
    this.#db.run(
      'INSERT INTO analyses (id, account_id, name, spec, transcript, planner, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      a.id,
      a.accountId,
      a.name,
      a.spec,
      a.transcript,
      a.planner,
      a.createdAt,
      a.updatedAt,
    );
  }

  async getAnalysis(accountId: string, id: string): Promise<AnalysisRecord | null> {
    const row = this.#db.get('SELECT * FROM analyses WHERE id = ? AND account_id = ?', id, accountId);
    return row ? analysisFrom(row) : null;
  }

  async listAnalyses(accountId: string): Promise<AnalysisRecord[]> {
    return this.#db
      .all('SELECT * FROM analyses WHERE account_id = ? ORDER BY updated_at DESC, id DESC', accountId)
      .map(analysisFrom);
  }

  async updateAnalysis(
    accountId: string,
    id: string,
    patch: Partial<Pick<AnalysisRecord, 'name' | 'spec' | 'transcript' | 'planner'>> & { updatedAt: number },
  ): Promise<boolean> {
    const entries = Object.entries(patch).filter(([field, v]) => field in analysisColumns && v !== undefined);
    const sets = entries.map(([field]) => `${analysisColumns[field as keyof typeof analysisColumns]} = ?`);
    const result = this.#db.run(
      `UPDATE analyses SET ${sets.join(', ')} WHERE id = ? AND account_id = ?`,
      ...entries.map(([, v]) => v as SQLInputValue),
      id,
      accountId,
    );
    return Number(result.changes) === 1;
  }

  async deleteAnalysis(accountId: string, id: string): Promise<boolean> {
    return (
      Number(this.#db.run('DELETE FROM analyses WHERE id = ? AND account_id = ?', id, accountId).changes) ===
      1
    );
  }

  async beginAnalysisRun(
    run: NewAnalysisRun,
    limit: { sinceMs: number; maxRuns: number },
  ): Promise<{ ok: true } | { ok: false; runs: number }> {
    return this.#db.tx(() => {
      const runs = Number(
        this.#db.get(
          'SELECT count(*) AS n FROM analysis_runs WHERE account_id = ? AND started_at >= ?',
          run.accountId,
          limit.sinceMs,
        )?.n ?? 0,
      );
      if (runs >= limit.maxRuns) return { ok: false as const, runs };
      this.#db.run(
        `INSERT INTO analysis_runs (id, account_id, analysis_id, kind, inputs_hash, started_at, status)
         VALUES (?, ?, ?, ?, ?, ?, 'running')`,
        run.id,
        run.accountId,
        run.analysisId,
        run.kind,
        run.inputsHash,
        run.startedAt,
      );
      return { ok: true as const };
    });
  }

  async finishAnalysisRun(id: string, outcome: AnalysisRunOutcome): Promise<void> {
    this.#db.run(
      `UPDATE analysis_runs SET status = ?, reads = ?, burned_micros = ?, result = ?,
         analysis_id = COALESCE(?, analysis_id), inputs_hash = COALESCE(?, inputs_hash) WHERE id = ?`,
      outcome.status,
      outcome.reads,
      outcome.burnedMicros,
      outcome.result,
      outcome.analysisId ?? null,
      outcome.inputsHash ?? null,
      id,
    );
  }

  async releaseAnalysisRun(accountId: string, id: string): Promise<boolean> {
    return (
      Number(
        this.#db.run(
          "DELETE FROM analysis_runs WHERE id = ? AND account_id = ? AND status = 'running'",
          id,
          accountId,
        ).changes,
      ) === 1
    );
  }

  async countAnalysisRuns(accountId: string, sinceMs: number): Promise<number> {
    const row = this.#db.get(
      'SELECT count(*) AS n FROM analysis_runs WHERE account_id = ? AND started_at >= ?',
      accountId,
      sinceMs,
    );
    return Number(row?.n ?? 0);
  }

  async findAnalysisRun(
    accountId: string,
    query: { inputsHash?: string; analysisId?: string; sinceMs?: number },
  ): Promise<AnalysisRunRecord | null> {
    const filter = runFilter(query, () => '?', 0);
    const row = this.#db.get(
      `SELECT * FROM analysis_runs WHERE account_id = ? AND status = 'done'${filter.sql} ORDER BY started_at DESC, id DESC LIMIT 1`,
      accountId,
      ...filter.values,
    );
    return row ? analysisRunFrom(row) : null;
  }
}
