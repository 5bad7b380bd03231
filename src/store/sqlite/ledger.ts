/** The ledger on SQLite: credits, debits (in the group commit of db.ts), entries, usage and the audit. */
import {
  BalanceLimitReached,
  type CreditInput,
  type CreditResult,
  type DebitInput,
  type DebitResult,
  type EntryKind,
  type LedgerAudit,
  type LedgerEntry,
  type UsageEvent,
  type UsageInput,
  type UsageSum,
} from '../port.ts';
import { big, entryFrom, str, usageFrom, usageSumFrom } from '../rows.ts';
import { insertBurns, insertUsage, type PendingBurn } from './batch-rows.ts';
import { type DbRow, limitLiteral, MAX_ID, type SqliteDb } from './db.ts';

/**
 * Moves a wallet's balance by `amountMicros` (a negative amount takes) and writes its ledger entry,
 * in the caller's transaction; the balance's CHECK refuses to go below zero.
 */
export function post(
  db: SqliteDb,
  entry: {
    walletId: string;
    kind: EntryKind;
    amountMicros: bigint;
    at: number;
    requestId?: string | null;
    idempotencyKey?: string | null;
    memo?: string | null;
  },
): DbRow {
  const wallet = db.get(
    'UPDATE wallets SET balance_micros = balance_micros + ? WHERE id = ? RETURNING balance_micros',
    entry.amountMicros,
    entry.walletId,
  );
  if (!wallet) throw new Error(`wallet ${entry.walletId} does not exist`);
  return db.get(
    'INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id, idempotency_key, memo) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *',
    entry.walletId,
    entry.kind,
    entry.amountMicros,
    wallet.balance_micros as bigint,
    entry.at,
    entry.requestId ?? null,
    entry.idempotencyKey ?? null,
    entry.memo ?? null,
  ) as DbRow;
}

interface BatchWallet {
  balanceMicros: bigint;
  month: string;
  monthMicros: bigint;
  /** Moved by this group commit and not written yet. */
  dirty: boolean;
}

export class SqliteLedger {
  readonly #db: SqliteDb;

  /** This group commit's burns and usage events, written as it ends (batch-rows.ts). */
  #burns: { burn: PendingBurn; result: { entryId: string } }[] = [];
  #usage: UsageInput[] = [];
  /**
   * The wallets this group commit debits, read once and written once as it ends: the commit holds the
   * write lock from its first statement (BEGIN IMMEDIATE), so no other writer moves them meanwhile.
   */
  #wallets = new Map<string, BatchWallet | null>();

  constructor(db: SqliteDb) {
    this.#db = db;
    db.setBatchRows({
      reset: () => {
        this.#burns = [];
        this.#usage = [];
        this.#wallets.clear();
      },
      write: () => this.#writePending(),
    });
  }

  /** Writes the rows this batch's debits and usage records left pending, in arrival order. */
  #writePending(): void {
    for (const [id, wallet] of this.#wallets) {
      if (!wallet?.dirty) continue;
      this.#db.run(
        'UPDATE wallets SET balance_micros = ?, burn_month = ?, burn_month_micros = ? WHERE id = ?',
        wallet.balanceMicros,
        wallet.month,
        wallet.monthMicros,
        id,
      );
      wallet.dirty = false;
    }
    const burns = this.#burns;
    const usage = this.#usage;
    this.#burns = [];
    this.#usage = [];
    if (burns.length > 0) {
      const ids = insertBurns(
        this.#db,
        burns.map((p) => p.burn),
      );
      burns.forEach((p, i) => {
        p.result.entryId = ids[i] as string;
      });
    }
    if (usage.length > 0) insertUsage(this.#db, usage);
  }

  async credit(input: CreditInput): Promise<CreditResult> {
    if (input.amountMicros <= 0n) throw new RangeError('a credit must be positive');
    return this.#db.tx(() => {
      if (input.idempotencyKey) {
        const existing = this.#db.get(
          'SELECT * FROM ledger_entries WHERE wallet_id = ? AND idempotency_key = ?',
          input.walletId,
          input.idempotencyKey,
        );
        if (existing) return { entry: entryFrom(existing), duplicate: true };
      }
      if (input.maxBalanceMicros !== undefined) {
        const held = this.#db.get('SELECT balance_micros FROM wallets WHERE id = ?', input.walletId);
        if (held && (held.balance_micros as bigint) + input.amountMicros > input.maxBalanceMicros)
          throw new BalanceLimitReached(`wallet ${input.walletId} would pass its maximum balance`);
      }
      const entry = post(this.#db, input);
      if (input.reverses) {
        this.#db.run(
          'UPDATE wallets SET burn_month_micros = MAX(0, burn_month_micros - ?) WHERE id = ? AND burn_month = ?',
          input.amountMicros,
          input.walletId,
          input.reverses.month,
        );
        insertUsage(this.#db, [input.reverses.usage]);
      }
      return { entry: entryFrom(entry), duplicate: false };
    });
  }

  /** A wallet as this group commit has left it so far; null when there is no such wallet. */
  #walletOf(id: string): BatchWallet | null {
    let wallet = this.#wallets.get(id);
    if (wallet === undefined) {
      const row = this.#db.get(
        'SELECT balance_micros, burn_month, burn_month_micros FROM wallets WHERE id = ?',
        id,
      );
      wallet = row
        ? {
            balanceMicros: big(row.balance_micros),
            month: str(row.burn_month),
            monthMicros: big(row.burn_month_micros),
            dirty: false,
          }
        : null;
      this.#wallets.set(id, wallet);
    }
    return wallet;
  }

  #burnedSince(keyId: string, sinceMs: number): bigint {
    return big(
      this.#db.get(
        'SELECT COALESCE(SUM(burned_micros), 0) AS spent FROM usage_events WHERE key_id = ? AND at >= ?',
        keyId,
        sinceMs,
      )?.spent ?? 0n,
    );
  }

  #debitOne(input: DebitInput): DebitResult {
    const keyId = input.usage.keyId;
    if (keyId !== null) {
      const caps = input.spendCaps ?? [];
      // A cap counts the burns of this batch too: what is pending is written first.
      if (caps.length > 0) this.#writePending();
      for (const cap of caps) {
        const spent = this.#burnedSince(keyId, cap.sinceMs);
        if (spent + input.amountMicros > cap.capMicros) {
          return {
            ok: false,
            balanceMicros: this.#walletOf(input.walletId)?.balanceMicros ?? 0n,
            cap: { ...cap, spentMicros: spent },
          };
        }
      }
    }
    const wallet = this.#walletOf(input.walletId);
    if (!wallet || wallet.balanceMicros < input.amountMicros) {
      return { ok: false, balanceMicros: wallet?.balanceMicros ?? 0n };
    }
    wallet.balanceMicros -= input.amountMicros;
    // The month never moves backwards: a read begun before a UTC month change that commits after
    // reads of the new month counts in its own month, and the new month's burn stays.
    if (wallet.month === input.month) wallet.monthMicros += input.amountMicros;
    else if (wallet.month < input.month) {
      wallet.month = input.month;
      wallet.monthMicros = input.amountMicros;
    }
    wallet.dirty = true;
    const balanceMicros = wallet.balanceMicros;
    // The entry and the usage event are written with the batch's others, before it commits; the entry's
    // id is set then, before any debit of the batch is answered.
    const result = {
      ok: true as const,
      balanceMicros,
      burnMonthMicros: wallet.month === input.month ? wallet.monthMicros : null,
      entryId: '',
    };
    this.#burns.push({
      burn: {
        walletId: input.walletId,
        amountMicros: input.amountMicros,
        balanceMicros,
        at: input.usage.at,
        requestId: input.usage.requestId,
      },
      result,
    });
    this.#usage.push(input.usage);
    return result;
  }

  async debit(input: DebitInput): Promise<DebitResult> {
    if (input.amountMicros <= 0n) throw new RangeError('a debit must be positive');
    return this.#db.enqueue(() => this.#debitOne(input));
  }

  async recordUsage(usage: UsageInput): Promise<void> {
    return this.#db.enqueue(() => {
      this.#usage.push(usage);
    });
  }

  async keyBurnedSince(keyId: string, sinceMs: number): Promise<bigint> {
    return this.#burnedSince(keyId, sinceMs);
  }

  async listEntries(walletId: string): Promise<LedgerEntry[]> {
    return this.#db
      .all('SELECT * FROM ledger_entries WHERE wallet_id = ? ORDER BY id', walletId)
      .map(entryFrom);
  }

  async listEntriesPage(
    walletId: string,
    page: { beforeId: string | null; limit: number },
  ): Promise<LedgerEntry[]> {
    const before = page.beforeId === null ? MAX_ID : BigInt(page.beforeId);
    return this.#db
      .all(
        `SELECT * FROM ledger_entries WHERE wallet_id = ? AND id < ? ORDER BY id DESC LIMIT ${limitLiteral(page.limit)}`,
        walletId,
        before,
      )
      .map(entryFrom);
  }

  async auditLedger(): Promise<LedgerAudit> {
    const wallets = Number(this.#db.get('SELECT COUNT(*) AS n FROM wallets')?.n ?? 0);
    const entries = Number(this.#db.get('SELECT COUNT(*) AS n FROM ledger_entries')?.n ?? 0);
    const mismatches = this.#db
      .all(
        `SELECT w.id, w.balance_micros, COALESCE(SUM(e.amount_micros), 0) AS total
         FROM wallets w LEFT JOIN ledger_entries e ON e.wallet_id = w.id
        GROUP BY w.id, w.balance_micros
       HAVING w.balance_micros <> COALESCE(SUM(e.amount_micros), 0) OR w.balance_micros < 0`,
      )
      .map((r) => ({
        walletId: str(r.id),
        balanceMicros: big(r.balance_micros),
        entriesMicros: big(r.total),
      }));
    return { wallets, entries, mismatches };
  }

  async sumEntries(walletId: string): Promise<bigint> {
    const row = this.#db.get(
      'SELECT COALESCE(SUM(amount_micros), 0) AS total FROM ledger_entries WHERE wallet_id = ?',
      walletId,
    );
    return big(row?.total ?? 0n);
  }

  async listUsage(
    scope: { accountId: string } | { keyId: string },
    beforeId: string | null,
    limit: number,
  ): Promise<UsageEvent[]> {
    const [column, value] = 'accountId' in scope ? ['account_id', scope.accountId] : ['key_id', scope.keyId];
    const before = beforeId === null ? Number.MAX_SAFE_INTEGER : Number(beforeId);
    return this.#db
      .all(
        `SELECT * FROM usage_events WHERE ${column} = ? AND id < ? ORDER BY id DESC LIMIT ${limitLiteral(limit)}`,
        value,
        before,
      )
      .map(usageFrom);
  }

  async sumUsage(
    scope: { accountId: string } | { keyId: string },
    query: { sinceMs: number; bucketMs: number; limit: number },
  ): Promise<{ sums: UsageSum[]; more: boolean }> {
    const [column, value] = 'accountId' in scope ? ['account_id', scope.accountId] : ['key_id', scope.keyId];
    // A bigint binds as an INTEGER, so the division rounds down; a number would bind as a REAL.
    const bucketMs = BigInt(query.bucketMs);
    const sums = this.#db
      .all(
        `SELECT (at / ?) * ? AS bucket, dataset, channel,
              SUM(outcome <> 'refunded') AS served, SUM(outcome = 'refunded') AS refunded,
              SUM(burned_micros) AS burned, MAX(id) AS newest
         FROM (SELECT id, at, dataset, channel, outcome, burned_micros FROM usage_events
                WHERE ${column} = ? AND at >= ? ORDER BY id DESC LIMIT ${limitLiteral(query.limit)})
        GROUP BY bucket, dataset, channel
        ORDER BY newest DESC`,
        bucketMs,
        bucketMs,
        value,
        query.sinceMs,
      )
      .map(usageSumFrom);
    const beyond = this.#db.get(
      `SELECT 1 AS found FROM usage_events WHERE ${column} = ? AND at >= ? ORDER BY id DESC LIMIT 1 OFFSET ?`,
      value,
      query.sinceMs,
      query.limit,
    );
    return { sums, more: beyond !== undefined };
  }
}
