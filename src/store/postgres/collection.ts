/** Collectors' state and runs, import runs and dataset spans on PostgreSQL. */
import {
  COLLECTION_RUN_INSERT,
  COLLECTOR_STATE_COLUMNS,
  type CollectionRun,
  type CollectorState,
  collectionRunFrom,
  collectorStateFrom,
} from '../collection-port.ts';
import type { DatasetSpan, ImportRun } from '../import-port.ts';
import { importRunFrom } from '../import-rows.ts';
import type { RowSource } from '../port.ts';
import type { DbRow } from '../rows.ts';
import { num, optStr, str } from '../rows.ts';
import type { PgDb } from './db.ts';

export class PgCollection {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  async collectorState(source: string): Promise<CollectorState | null> {
    const row = await this.#db.one(
      `SELECT ${COLLECTOR_STATE_COLUMNS} FROM collector_state WHERE source = $1`,
      [source],
    );
    return row ? collectorStateFrom(row) : null;
  }

  async listCollectorStates(): Promise<CollectorState[]> {
    return (
      await this.#db.rows(`SELECT ${COLLECTOR_STATE_COLUMNS} FROM collector_state ORDER BY source`)
    ).map(collectorStateFrom);
  }

  async saveCollectorState(state: CollectorState): Promise<void> {
    await this.#db.q(
      `INSERT INTO collector_state (${COLLECTOR_STATE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (source) DO UPDATE SET cursor = excluded.cursor, last_run_at = excluded.last_run_at,
         last_success_at = excluded.last_success_at, last_error = excluded.last_error, failures = excluded.failures,
         paused_until = excluded.paused_until,
         claimed_slot = greatest(collector_state.claimed_slot, excluded.claimed_slot)`,
      [
        state.source,
        state.cursor,
        state.lastRunAt,
        state.lastSuccessAt,
        state.lastError,
        state.failures,
        state.pausedUntil,
        state.claimedSlot,
      ],
    );
  }

  async claimCollectorSlot(source: string, slot: number): Promise<boolean> {
    const rows = await this.#db.rows(
      `INSERT INTO collector_state (source, cursor, failures, claimed_slot) VALUES ($1, '{}', 0, $2)
       ON CONFLICT (source) DO UPDATE SET claimed_slot = excluded.claimed_slot
         WHERE collector_state.claimed_slot IS NULL OR collector_state.claimed_slot < excluded.claimed_slot
       RETURNING source`,
      [source, slot],
    );
    return rows.length === 1;
  }

  async recordCollectionRun(run: Omit<CollectionRun, 'id'>): Promise<CollectionRun> {
    const row = await this.#db.one(
      `${COLLECTION_RUN_INSERT} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`,
      [
        run.source,
        run.startedAt,
        run.finishedAt,
        run.outcome,
        JSON.stringify(run.datasets),
        run.rowsNew,
        run.rowsChanged,
        run.rowsRejected,
        run.requests,
        run.bytes,
        run.notModified,
        run.error,
      ],
    );
    return collectionRunFrom(row as DbRow);
  }

  async listCollectionRuns(limit: number): Promise<CollectionRun[]> {
    return (await this.#db.rows('SELECT * FROM collection_runs ORDER BY id DESC LIMIT $1', [limit])).map(
      collectionRunFrom,
    );
  }

  async listImportRuns(
    filter: { dataset?: string; ids?: readonly number[] },
    limit: number,
  ): Promise<ImportRun[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.dataset !== undefined) {
      values.push(filter.dataset);
      where.push(`dataset = $${values.length}`);
    }
    if (filter.ids !== undefined) {
      if (filter.ids.length === 0) return [];
      values.push(filter.ids);
      where.push(`id = ANY($${values.length}::bigint[])`);
    }
    values.push(limit);
    const rows = await this.#db.rows(
      `SELECT * FROM import_runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY id DESC LIMIT $${values.length}`,
      values,
    );
    return rows.map(importRunFrom);
  }

  async datasetSpan(dataset: string): Promise<DatasetSpan | null> {
    const row = await this.#db.one(
      `SELECT s.source, s.row_count, s.loaded_at,
              (SELECT min(t) FROM dataset_rows WHERE dataset = $1) AS first_t,
              (SELECT max(t) FROM dataset_rows WHERE dataset = $1) AS last_t
         FROM dataset_sources s WHERE s.dataset = $1`,
      [dataset],
    );
    if (!row) return null;
    return {
      source: str(row.source) as RowSource,
      rows: num(row.row_count),
      firstT: optStr(row.first_t),
      lastT: optStr(row.last_t),
      loadedAt: num(row.loaded_at),
    };
  }
}
