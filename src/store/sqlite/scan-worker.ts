/**
 * A read worker: its own connection to the database file, which runs the reads that check rows one by
 * one (row-sql.ts's scan jobs) so that they never hold the serving thread. Each job is one read
 * transaction: in WAL mode it sees one snapshot and never waits for the writer.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { runScan, type ScanJob } from './row-sql.ts';

/** Statements kept: a scan's SQL depends on its filters' shape, so the cache is bounded. */
const MAX_STATEMENTS = 64;

const db = new DatabaseSync((workerData as { path: string }).path);
db.exec('PRAGMA busy_timeout = 5000');
db.exec('PRAGMA query_only = ON');
const statements = new Map<string, StatementSync>();

function prepare(sql: string): StatementSync {
  let statement = statements.get(sql);
  if (!statement) {
    if (statements.size >= MAX_STATEMENTS) statements.delete(statements.keys().next().value as string);
    statement = db.prepare(sql);
    statement.setReturnArrays(true);
    statements.set(sql, statement);
  }
  return statement;
}

parentPort?.on('message', (message: { id: number; job: ScanJob } | 'close') => {
  if (message === 'close') {
    db.close();
    parentPort?.close();
    return;
  }
  try {
    db.exec('BEGIN');
    const result = runScan(prepare, message.job);
    db.exec('COMMIT');
    parentPort?.postMessage({ id: message.id, result });
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    const { message: text, errcode } = error as { message?: string; errcode?: number };
    parentPort?.postMessage({ id: message.id, error: { message: String(text), errcode } });
  }
});
