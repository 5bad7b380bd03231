/**
 * A group commit's burns and usage events, written by multi-row INSERTs just before it commits: one
 * statement per 32 rows rather than two per debit (a debit's CPU was a third statement overhead). Their
 * ids are in arrival order, as one insert per debit gave them.
 */
import type { SQLInputValue } from 'node:sqlite';
import type { UsageInput } from '../port.ts';
import type { SqliteDb } from './db.ts';

/** The most rows one statement writes: 12 values a usage row, well under SQLite's 32,766. */
const MAX_ROWS = 32;

/** A debit's ledger entry, known once its wallet's UPDATE ran. */
export interface PendingBurn {
  walletId: string;
  amountMicros: bigint;
  balanceMicros: bigint;
  at: number;
  requestId: string;
}

/** The SQL of an INSERT of 1 … MAX_ROWS rows, by row count; built once. */
function statements(head: string, row: string): string[] {
  return Array.from({ length: MAX_ROWS + 1 }, (_, size) => head + Array(size).fill(row).join(', '));
}

const ENTRY_SQL = statements(
  'INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id) VALUES ',
  "(?, 'burn', ?, ?, ?, ?)",
);
const USAGE_SQL = statements(
  'INSERT INTO usage_events (request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros, cost_micros, burned_micros, outcome, rows, at) VALUES ',
  '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
);

/** `count` rows as statements of at most MAX_ROWS: [32, 12] for 44. */
function slices(count: number): number[] {
  const sizes: number[] = [];
  for (let left = count; left > 0; left -= MAX_ROWS) sizes.push(Math.min(left, MAX_ROWS));
  return sizes;
}

/** Writes the burns' ledger entries in order; returns their ids, in the same order. */
export function insertBurns(db: SqliteDb, burns: readonly PendingBurn[]): string[] {
  const ids: string[] = [];
  let start = 0;
  for (const size of slices(burns.length)) {
    const values: SQLInputValue[] = [];
    for (let i = start; i < start + size; i++) {
      const b = burns[i] as PendingBurn;
      values.push(b.walletId, -b.amountMicros, b.balanceMicros, b.at, b.requestId);
    }
    const { lastInsertRowid } = db.run(ENTRY_SQL[size] as string, ...values);
    // One statement's rows take consecutive ids: each the largest so far plus one (no AUTOINCREMENT,
    // migration 14), under the write lock the group commit holds.
    const last = BigInt(lastInsertRowid);
    for (let i = size - 1; i >= 0; i--) ids.push(String(last - BigInt(i)));
    start += size;
  }
  return ids;
}

/** Writes usage events in order. */
export function insertUsage(db: SqliteDb, events: readonly UsageInput[]): void {
  let start = 0;
  for (const size of slices(events.length)) {
    const values: SQLInputValue[] = [];
    for (let i = start; i < start + size; i++) {
      const u = events[i] as UsageInput;
      values.push(
        u.requestId,
        u.keyId,
        u.accountId,
        u.walletId,
        u.dataset,
        u.channel,
        u.listCostMicros,
        u.costMicros,
        u.burnedMicros,
        u.outcome,
        u.rows,
        u.at,
      );
    }
    db.run(USAGE_SQL[size] as string, ...values);
    start += size;
  }
}
