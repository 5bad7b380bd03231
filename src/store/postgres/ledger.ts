/** The ledger on PostgreSQL: credits, debits (through the group commit), entries, usage and the audit. */
import type pg from 'pg';
import {
  BalanceLimitReached,
  type CreditInput,
  type CreditResult,
  type DebitInput,
  type DebitResult,
  type EntryKind,
  type LedgerAudit,
  type LedgerEntry,
  type SpendCap,
  type UsageEvent,
  type UsageInput,
  type UsageSum,
  type WalletRecord,
} from '../port.ts';
import type { DbRow } from '../rows.ts';
import { big, entryFrom, num, str, usageFrom, usageSumFrom } from '../rows.ts';
import type { PgDb } from './db.ts';
import type { GroupCommit, Statement } from './group-commit.ts';

/**
 * Moves a wallet's balance by `amountMicros` (a negative amount takes) and writes its ledger entry,
 * in the caller's transaction; the balance's CHECK refuses to go below zero.
 */
/** A key's burns since an instant (spending caps): index-only on usage_events_key_spend; exact as text. */
const KEY_BURNED_SINCE =
  'SELECT COALESCE(sum(burned_micros), 0)::text AS spent FROM usage_events WHERE key_id = $1 AND at >= $2';

export async function post(
  tx: pg.PoolClient,
  entry: {
    walletId: string;
    kind: EntryKind;
    amountMicros: bigint;
    at: number;
    requestId?: string | null;
    idempotencyKey?: string | null;
    memo?: string | null;
  },
): Promise<DbRow> {
  const written = await tx.query(
    `WITH w AS (UPDATE wallets SET balance_micros = balance_micros + $2 WHERE id = $1 RETURNING balance_micros)
     INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id,
                                 idempotency_key, memo)
     SELECT $1, $3, $2, w.balance_micros, $4, $5, $6, $7 FROM w
     RETURNING *`,
    [
      entry.walletId,
      entry.amountMicros,
      entry.kind,
      entry.at,
      entry.requestId ?? null,
      entry.idempotencyKey ?? null,
      entry.memo ?? null,
    ],
  );
  return written.rows[0] as DbRow;
}

export class PgLedger {
  readonly #db: PgDb;
  readonly #commits: GroupCommit;
  readonly #getWallet: (id: string) => Promise<WalletRecord | null>;

  constructor(db: PgDb, commits: GroupCommit, getWallet: (id: string) => Promise<WalletRecord | null>) {
    this.#db = db;
    this.#commits = commits;
    this.#getWallet = getWallet;
  }

  async credit(input: CreditInput): Promise<CreditResult> {
    if (input.amountMicros <= 0n) throw new RangeError('a credit must be positive');
    return this.#db.tx(async (tx) => {
      // Lock the wallet first: a concurrent credit with the same idempotency key then waits here, and
      // the next statement (a fresh snapshot under READ COMMITTED) sees the entry the other committed.
      const wallet = await tx.query('SELECT balance_micros FROM wallets WHERE id = $1 FOR UPDATE', [
        input.walletId,
      ]);
      if (wallet.rowCount === 0) throw new Error(`wallet ${input.walletId} does not exist`);
      if (input.idempotencyKey) {
        const existing = await tx.query(
          'SELECT * FROM ledger_entries WHERE wallet_id = $1 AND idempotency_key = $2',
          [input.walletId, input.idempotencyKey],
        );
        if (existing.rows[0]) return { entry: entryFrom(existing.rows[0]), duplicate: true };
      }
      if (
        input.maxBalanceMicros !== undefined &&
        BigInt(wallet.rows[0]?.balance_micros as string) + input.amountMicros > input.maxBalanceMicros
      ) {
        throw new BalanceLimitReached(`wallet ${input.walletId} would pass its maximum balance`);
      }
      const entry = await post(tx, input);
      if (input.reverses) {
        await tx.query(
          `UPDATE wallets SET burn_month_micros = GREATEST(0, burn_month_micros - $2)
            WHERE id = $1 AND burn_month = $3`,
          [input.walletId, input.amountMicros, input.reverses.month],
        );
        await tx.query(this.#usageStatement(input.reverses.usage));
      }
      return { entry: entryFrom(entry), duplicate: false };
    });
  }

  #usageStatement(u: UsageInput): Statement {
    return {
      name: 'tmd_usage',
      text: `INSERT INTO usage_events (request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros,
                                       cost_micros, burned_micros, outcome, rows, at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      values: [...usageValues(u), u.at],
    };
  }

  /**
   * The debit: one conditional statement that moves the balance and writes its entry and usage event.
   * The month never moves backwards (see migration 6).
   */
  #debitStatement(input: DebitInput): Statement {
    const u = input.usage;
    return {
      name: 'tmd_debit',
      text: `WITH w AS (
               UPDATE wallets
                  SET balance_micros = balance_micros - $1,
                      burn_month_micros = CASE WHEN burn_month = $2 THEN burn_month_micros + $1
                                               WHEN burn_month > $2 THEN burn_month_micros ELSE $1 END,
                      burn_month = GREATEST(burn_month, $2)
                WHERE id = $3 AND balance_micros >= $1
               RETURNING balance_micros, CASE WHEN burn_month = $2 THEN burn_month_micros END AS burn_month_micros
             ), e AS (
               INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id)
               SELECT $3, 'burn', -$1::bigint, w.balance_micros, $4, $5 FROM w
               RETURNING id
             ), u AS (
               INSERT INTO usage_events (request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros,
                                         cost_micros, burned_micros, outcome, rows, at)
               SELECT $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $4 FROM w
             )
             SELECT w.balance_micros, w.burn_month_micros, e.id AS entry_id FROM w, e`,
      values: [input.amountMicros, input.month, input.walletId, u.at, ...usageValues(u)],
    };
  }

  async debit(input: DebitInput): Promise<DebitResult> {
    if (input.amountMicros <= 0n) throw new RangeError('a debit must be positive');
    const keyId = input.usage.keyId;
    const caps = keyId === null ? [] : (input.spendCaps ?? []);
    if (caps.length > 0) {
      const refusal = await this.#cappedDebit(input, keyId as string, caps);
      if (refusal.cap) {
        const wallet = await this.#getWallet(input.walletId);
        return { ok: false, balanceMicros: wallet?.balanceMicros ?? 0n, cap: refusal.cap };
      }
      return this.#debitResult(input, refusal.row);
    }
    const [row] = await this.#commits.enqueue({
      walletId: input.walletId,
      statement: this.#debitStatement(input),
      amountMicros: input.amountMicros,
      month: input.month,
      usage: input.usage,
    });
    return this.#debitResult(input, row);
  }

  async #debitResult(input: DebitInput, row: DbRow | undefined): Promise<DebitResult> {
    if (row) {
      return {
        ok: true,
        balanceMicros: big(row.balance_micros),
        // Null (the statement) or 0 (the batch function, migration 6): the wallet is in a later month.
        burnMonthMicros:
          row.burn_month_micros === null || big(row.burn_month_micros) === 0n
            ? null
            : big(row.burn_month_micros),
        entryId: str(row.entry_id),
      };
    }
    const wallet = await this.#getWallet(input.walletId);
    return { ok: false, balanceMicros: wallet?.balanceMicros ?? 0n };
  }

  /**
   * A debit under per-key spending caps. The wallet row is locked first, so every other debit of this
   * key (they all debit this wallet) waits; the sums that follow are fresh statements that see every
   * burn committed before, and nothing can commit in between. Caps are rare (Partner keys): these run
   * in their own transaction rather than in the group commit.
   */
  async #cappedDebit(
    input: DebitInput,
    keyId: string,
    caps: readonly SpendCap[],
  ): Promise<{ row?: DbRow; cap?: SpendCap & { spentMicros: bigint } }> {
    return this.#db.tx(async (tx) => {
      await tx.query('SELECT 1 FROM wallets WHERE id = $1 FOR UPDATE', [input.walletId]);
      for (const cap of caps) {
        const spent = await tx.query(KEY_BURNED_SINCE, [keyId, cap.sinceMs]);
        const spentMicros = big(spent.rows[0]?.spent ?? 0);
        if (spentMicros + input.amountMicros > cap.capMicros) return { cap: { ...cap, spentMicros } };
      }
      const statement = this.#debitStatement(input);
      return { row: (await tx.query<DbRow>(statement.text, statement.values)).rows[0] };
    });
  }

  async recordUsage(usage: UsageInput): Promise<void> {
    await this.#commits.enqueue({
      walletId: usage.walletId,
      statement: this.#usageStatement(usage),
      amountMicros: 0n,
      month: '',
      usage,
    });
  }

  async keyBurnedSince(keyId: string, sinceMs: number): Promise<bigint> {
    const row = await this.#db.one(KEY_BURNED_SINCE, [keyId, sinceMs]);
    return big(row?.spent ?? 0);
  }

  async listEntries(walletId: string): Promise<LedgerEntry[]> {
    return (
      await this.#db.rows('SELECT * FROM ledger_entries WHERE wallet_id = $1 ORDER BY id', [walletId])
    ).map(entryFrom);
  }

  async listEntriesPage(
    walletId: string,
    page: { beforeId: string | null; limit: number },
  ): Promise<LedgerEntry[]> {
    const before = page.beforeId === null ? '9223372036854775807' : BigInt(page.beforeId).toString();
    const rows = await this.#db.rows(
      'SELECT * FROM ledger_entries WHERE wallet_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3',
      [walletId, before, page.limit],
    );
    return rows.map(entryFrom);
  }

  async auditLedger(): Promise<LedgerAudit> {
    // One snapshot for all figures, so a debit committing meanwhile cannot show as a mismatch.
    return this.#db.tx(async (tx) => {
      const counts = await tx.query(
        'SELECT (SELECT count(*) FROM wallets) AS wallets, (SELECT count(*) FROM ledger_entries) AS entries',
      );
      const mismatches = await tx.query(
        `SELECT w.id, w.balance_micros, COALESCE(e.total, 0)::text AS total
           FROM wallets w
           LEFT JOIN (SELECT wallet_id, sum(amount_micros) AS total FROM ledger_entries GROUP BY wallet_id) e
             ON e.wallet_id = w.id
          WHERE w.balance_micros <> COALESCE(e.total, 0) OR w.balance_micros < 0`,
      );
      return {
        wallets: num(counts.rows[0]?.wallets),
        entries: num(counts.rows[0]?.entries),
        mismatches: mismatches.rows.map((r) => ({
          walletId: str(r.id),
          balanceMicros: big(r.balance_micros),
          entriesMicros: big(r.total),
        })),
      };
    }, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  async sumEntries(walletId: string): Promise<bigint> {
    const row = await this.#db.one(
      'SELECT COALESCE(sum(amount_micros), 0)::text AS total FROM ledger_entries WHERE wallet_id = $1',
      [walletId],
    );
    return big(row?.total ?? 0);
  }

  async listUsage(
    scope: { accountId: string } | { keyId: string },
    beforeId: string | null,
    limit: number,
  ): Promise<UsageEvent[]> {
    const column = 'accountId' in scope ? 'account_id' : 'key_id';
    const value = 'accountId' in scope ? scope.accountId : scope.keyId;
    const before = beforeId === null ? '9223372036854775807' : BigInt(beforeId).toString();
    const rows = await this.#db.rows(
      `SELECT * FROM usage_events WHERE ${column} = $1 AND id < $2 ORDER BY id DESC LIMIT $3`,
      [value, before, limit],
    );
    return rows.map(usageFrom);
  }

  async sumUsage(
    scope: { accountId: string } | { keyId: string },
    query: { sinceMs: number; bucketMs: number; limit: number },
  ): Promise<{ sums: UsageSum[]; more: boolean }> {
    const column = 'accountId' in scope ? 'account_id' : 'key_id';
    const value = 'accountId' in scope ? scope.accountId : scope.keyId;
    const rows = await this.#db.rows(
      `SELECT (at / $1::bigint) * $1::bigint AS bucket, dataset, channel,
              count(*) FILTER (WHERE outcome <> 'refunded')::int AS served,
              count(*) FILTER (WHERE outcome = 'refunded')::int AS refunded,
              sum(burned_micros)::text AS burned, max(id) AS newest
         FROM (SELECT id, at, dataset, channel, outcome, burned_micros FROM usage_events
                WHERE ${column} = $2 AND at >= $3 ORDER BY id DESC LIMIT $4) recent
        GROUP BY bucket, dataset, channel
        ORDER BY newest DESC`,
      [query.bucketMs, value, query.sinceMs, query.limit],
    );
    const beyond = await this.#db.rows(
      `SELECT 1 FROM usage_events WHERE ${column} = $1 AND at >= $2 ORDER BY id DESC LIMIT 1 OFFSET $3`,
      [value, query.sinceMs, query.limit],
    );
    return { sums: rows.map(usageSumFrom), more: beyond.length > 0 };
  }
}

/** A usage event's columns from request_id to rows, in the order the usage INSERTs name them. */
function usageValues(u: UsageInput): unknown[] {
  return [
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
  ];
}
