/** Saved analyses and their runs on PostgreSQL. */
import { analysisColumns, analysisFrom, analysisRunFrom, runFilter } from '../analysis-rows.ts';
import type { AnalysisRecord, AnalysisRunOutcome, AnalysisRunRecord, NewAnalysisRun } from '../port.ts';
import { num } from '../rows.ts';
import type { PgDb } from './db.ts';

export class PgAnalyses {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  async createAnalysis(a: AnalysisRecord): Promise<void> {
    await this.#db.q(
      'INSERT INTO analyses (id, account_id, name, spec, transcript, planner, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [a.id, a.accountId, a.name, a.spec, a.transcript, a.planner, a.createdAt, a.updatedAt],
    );
  }

  async getAnalysis(accountId: string, id: string): Promise<AnalysisRecord | null> {
    const row = await this.#db.one('SELECT * FROM analyses WHERE id = $1 AND account_id = $2', [
      id,
      accountId,
    ]);
    return row ? analysisFrom(row) : null;
  }

  async listAnalyses(accountId: string): Promise<AnalysisRecord[]> {
    const rows = await this.#db.rows(
      'SELECT * FROM analyses WHERE account_id = $1 ORDER BY updated_at DESC, id DESC',
      [accountId],
    );
    return rows.map(analysisFrom);
  }

  async updateAnalysis(
    accountId: string,
    id: string,
    patch: Partial<Pick<AnalysisRecord, 'name' | 'spec' | 'transcript' | 'planner'>> & { updatedAt: number },
  ): Promise<boolean> {
    const entries = Object.entries(patch).filter(([field, v]) => field in analysisColumns && v !== undefined);
    const sets = entries.map(
      ([field], i) => `${analysisColumns[field as keyof typeof analysisColumns]} = $${i + 1}`,
    );
    const n = entries.length;
    const result = await this.#db.q(
      `UPDATE analyses SET ${sets.join(', ')} WHERE id = $${n + 1} AND account_id = $${n + 2}`,
      [...entries.map(([, v]) => v), id, accountId],
    );
    return result.rowCount === 1;
  }

  async deleteAnalysis(accountId: string, id: string): Promise<boolean> {
    const result = await this.#db.q('DELETE FROM analyses WHERE id = $1 AND account_id = $2', [
      id,
      accountId,
    ]);
    return result.rowCount === 1;
  }

  async beginAnalysisRun(
    run: NewAnalysisRun,
    limit: { sinceMs: number; maxRuns: number },
  ): Promise<{ ok: true } | { ok: false; runs: number }> {
    return this.#db.tx(async (tx) => {
      // One account's runs take turns here, on every node: the count and the insert cannot interleave.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`analysis-runs:${run.accountId}`]);
      const counted = await tx.query(
        'SELECT count(*)::integer AS n FROM analysis_runs WHERE account_id = $1 AND started_at >= $2',
        [run.accountId, limit.sinceMs],
      );
      const runs = num(counted.rows[0]?.n ?? 0);
      if (runs >= limit.maxRuns) return { ok: false as const, runs };
      await tx.query(
        `INSERT INTO analysis_runs (id, account_id, analysis_id, kind, inputs_hash, started_at, status)
         VALUES ($1, $2, $3, $4, $5, $6, 'running')`,
        [run.id, run.accountId, run.analysisId, run.kind, run.inputsHash, run.startedAt],
      );
      return { ok: true as const };
    });
  }

  async finishAnalysisRun(id: string, outcome: AnalysisRunOutcome): Promise<void> {
    await this.#db.q(
      `UPDATE analysis_runs SET status = $1, reads = $2, burned_micros = $3, result = $4,
         analysis_id = COALESCE($5, analysis_id), inputs_hash = COALESCE($6, inputs_hash) WHERE id = $7`,
      [
        outcome.status,
        outcome.reads,
        outcome.burnedMicros.toString(),
        outcome.result,
        outcome.analysisId ?? null,
        outcome.inputsHash ?? null,
        id,
      ],
    );
  }

  async releaseAnalysisRun(accountId: string, id: string): Promise<boolean> {
    const result = await this.#db.q(
      "DELETE FROM analysis_runs WHERE id = $1 AND account_id = $2 AND status = 'running'",
      [id, accountId],
    );
    return result.rowCount === 1;
  }

  async countAnalysisRuns(accountId: string, sinceMs: number): Promise<number> {
    const row = await this.#db.one(
      'SELECT count(*)::integer AS n FROM analysis_runs WHERE account_id = $1 AND started_at >= $2',
      [accountId, sinceMs],
    );
    return num(row?.n ?? 0);
  }

  async findAnalysisRun(
    accountId: string,
    query: { inputsHash?: string; analysisId?: string; sinceMs?: number },
  ): Promise<AnalysisRunRecord | null> {
    const filter = runFilter(query, (i) => `$${i}`, 2);
    const row = await this.#db.one(
      `SELECT id, account_id, analysis_id, kind, inputs_hash, started_at, status, reads,
              burned_micros::text AS burned_micros, result
         FROM analysis_runs WHERE account_id = $1 AND status = 'done'${filter.sql}
        ORDER BY started_at DESC, id DESC LIMIT 1`,
      [accountId, ...filter.values],
    );
    return row ? analysisRunFrom(row) : null;
  }
}
