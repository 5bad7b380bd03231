/**
 * Loads that never stop sales. SQLite has one writer at a time, and a debit waits for whatever write
 * transaction is open: so a load writes its rows under a key of its own (`dataset_rows.dataset`) in
 * slices of about SLICE_MS, leaves the lock free for PAUSE_MS between them, and swaps the dataset's
 * `rows_key` in one short transaction at the end. Reads resolve `rows_key` in the statement that reads
 * the rows, so each sees all the old rows or all the new ones. The key a swap replaced, and the key of a
 * load whose process is gone (kill -9), are listed in `dataset_loads` and deleted in slices by
 * `reapLoads`. A SQLite file is on one machine, so a process id tells whether a loader still runs.
 */
import { randomBytes } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NewImportRun } from '../import-port.ts';
import { NEW_RUN_COLUMNS, newRunValues } from '../import-rows.ts';
import { type DbRow, num, str } from '../rows.ts';

/** How long one slice of a load may hold the write lock; debits wait at most about this long. */
export const SLICE_MS = 8;
/** How long a load leaves the lock free after each slice, so writers of other processes get it. */
export const PAUSE_MS = 8;
/** Rows deleted or copied per statement inside a slice. */
const CHUNK = 500;

/** A key no other load uses: the dataset's own, a `#`, when and a random tail. */
export function newRowsKey(dataset: string): string {
  return `${dataset}#${Date.now().toString(36)}.${randomBytes(4).toString('hex')}`;
}

export function liveKey(db: DatabaseSync, dataset: string): string {
  const row = db
    .prepare('SELECT coalesce(rows_key, dataset) AS k FROM dataset_sources WHERE dataset = ?')
    .get(dataset) as DbRow | undefined;
  return row ? str(row.k) : dataset;
}

/** Runs `step` in write transactions of about SLICE_MS each, pausing between them, until it says done. */
export async function sliced(tx: <T>(work: () => T) => T, step: () => boolean): Promise<void> {
  for (;;) {
    const done = tx(() => {
      const until = performance.now() + SLICE_MS;
      let finished: boolean;
      do finished = step();
      while (!finished && performance.now() < until);
      return finished;
    });
    if (done) return;
    await sleep(PAUSE_MS);
  }
}

/** Records a run as it starts (`loading`), with the load's key in dataset_loads; returns the run id. */
export function startLoad(
  db: DatabaseSync,
  dataset: string,
  key: string,
  run: NewImportRun | null,
): number | null {
  const runId =
    run === null
      ? null
      : num(
          (
            db
              .prepare(
                `INSERT INTO import_runs (${NEW_RUN_COLUMNS}, rows_inserted, rows_replaced)
                 VALUES (${NEW_RUN_COLUMNS.split(',')
                   .map(() => '?')
                   .join(', ')}, 0, 0) RETURNING id`,
              )
              .get(...newRunValues(dataset, run)) as DbRow
          ).id,
        );
  db.prepare(
    'INSERT INTO dataset_loads (rows_key, dataset, run_id, started_at, loader_pid) VALUES (?, ?, ?, ?, ?)',
  ).run(key, dataset, runId, Date.now(), process.pid);
  return runId;
}

/** Lists a key whose rows are no longer served (or never were), for reapLoads to delete. */
export function retire(db: DatabaseSync, dataset: string, key: string): void {
  db.prepare(
    `INSERT INTO dataset_loads (rows_key, dataset, run_id, started_at, loader_pid) VALUES (?, ?, NULL, ?, NULL)
     ON CONFLICT (rows_key) DO UPDATE SET loader_pid = NULL`,
  ).run(key, dataset, Date.now());
}

/** In the swap's transaction: the run's figures, and when its rows became the dataset's. */
export function swapRun(
  db: DatabaseSync,
  runId: number | null,
  figures: { read: number; inserted: number; replaced: number; firstT: string | null; lastT: string | null },
  now: number,
): void {
  if (runId === null) return;
  db.prepare(
    `UPDATE import_runs SET rows_read = max(rows_read, ?), rows_inserted = ?, rows_replaced = ?, first_t = ?,
       last_t = ?, outcome = 'swapped', swapped_at = ? WHERE id = ?`,
  ).run(figures.read, figures.inserted, figures.replaced, figures.firstT, figures.lastT, now, runId);
}

/** A load that threw: its run says why, its rows are left for reapLoads. */
export function failLoad(
  db: DatabaseSync,
  dataset: string,
  key: string,
  runId: number | null,
  why: string,
): void {
  if (runId !== null)
    db.prepare(
      "UPDATE import_runs SET outcome = 'failed', error = ? WHERE id = ? AND outcome = 'loading'",
    ).run(why.slice(0, 500), runId);
  retire(db, dataset, key);
}

/** Whether a process of this machine runs with this id. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Deletes, in slices, the rows of every listed key that is retired or whose loading process is gone
 * (its run then reads `interrupted`); a live key, and a load still running, are never touched.
 */
export async function reapLoads(db: DatabaseSync, tx: <T>(work: () => T) => T): Promise<void> {
  const stale = (
    db
      .prepare('SELECT rows_key, dataset, run_id, loader_pid FROM dataset_loads ORDER BY started_at')
      .all() as DbRow[]
  ).filter((entry) => entry.loader_pid === null || !running(num(entry.loader_pid)));
  const remove = db.prepare(
    `DELETE FROM dataset_rows WHERE dataset = ?1 AND id IN (SELECT id FROM dataset_rows WHERE dataset = ?1 LIMIT ${CHUNK})`,
  );
  for (const entry of stale) {
    const key = str(entry.rows_key);
    const dataset = str(entry.dataset);
    if (liveKey(db, dataset) === key) {
      tx(() => db.prepare('DELETE FROM dataset_loads WHERE rows_key = ?').run(key));
      continue;
    }
    await sliced(tx, () => Number(remove.run(key).changes) < CHUNK);
    tx(() => {
      db.prepare('DELETE FROM dataset_loads WHERE rows_key = ?').run(key);
      if (entry.run_id !== null)
        db.prepare(
          "UPDATE import_runs SET outcome = 'interrupted', error = ? WHERE id = ? AND outcome = 'loading'",
        ).run(
          'The importing process ended before its rows were swapped in; the dataset kept its rows.',
          num(entry.run_id),
        );
    });
  }
}
