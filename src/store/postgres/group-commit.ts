/** The group commit of PostgreSQL debits and zero-burn usage records (see GroupCommit.enqueue). */
import type { UsageInput } from '../port.ts';
import type { DbRow } from '../rows.ts';
import type { PgDb } from './db.ts';

export interface Statement {
  /**
   * A named (prepared) statement: each pooled connection parses and plans it once, then only binds and
   * executes it. Planning the three-part debit statement costs PostgreSQL more than running it.
   */
  name: string;
  text: string;
  values: unknown[];
}

export interface Pending {
  walletId: string;
  /** What a lone item runs: the debit statement, or the usage insert. */
  statement: Statement;
  /** 0 for a zero-burn usage record. */
  amountMicros: bigint;
  month: string;
  usage: UsageInput;
  resolve: (rows: DbRow[]) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  readonly #db: PgDb;
  readonly #maxBatch: number;
  readonly #maxConcurrentBatches: number;
  #queue: Pending[] = [];
  /** Wallets debited by a batch in flight. */
  readonly #busyWallets = new Set<string>();
  #batchesInFlight = 0;
  #flushScheduled = false;

  constructor(db: PgDb, options: { maxBatch: number; maxConcurrentBatches: number }) {
    this.#db = db;
    this.#maxBatch = options.maxBatch;
    this.#maxConcurrentBatches = options.maxConcurrentBatches;
  }

  /**
   * Group commit. A lone debit runs as one autocommit statement (one round trip). Debits that arrive
   * while batches are in flight wait and go together: one call of tmd_debit_batch (migration 5), in
   * one transaction, in wallet order so that concurrent batches (from this node or others) take row
   * locks in the same order. A wallet's debits are applied by one conditional UPDATE of their total
   * when the balance covers it, else one by one in order, so the figures and refusals are those of a
   * one-by-one application either way. One round trip and one commit for the lot; nothing resolves
   * before that commit, and a failure fails every item.
   *
   * A wallet's debits are never in two batches in flight from this node: the second would only wait on
   * the row lock the first holds until its commit, and then commit on its own. Held back, they join the
   * next batch and share one commit (the commit, not the debit, is most of PostgreSQL's work per batch):
   * on one hot wallet that halved batches and cut PostgreSQL's CPU per read by a quarter. The price is
   * latency for that wallet alone: its next debits wait for the batch in flight to come back, one round
   * trip, instead of for its commit.
   */
  enqueue(item: Omit<Pending, 'resolve' | 'reject'>): Promise<DbRow[]> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ ...item, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#flushScheduled || this.#queue.length === 0) return;
    if (this.#batchesInFlight >= this.#maxConcurrentBatches) return;
    this.#flushScheduled = true;
    // The rest of this turn's debits join the batch.
    setImmediate(() => {
      this.#flushScheduled = false;
      while (this.#batchesInFlight < this.#maxConcurrentBatches) {
        const batch = this.#take();
        if (batch.length === 0) break;
        void this.#flush(batch);
      }
    });
  }

  /**
   * The next batch: queued items in arrival order, except debits of wallets a batch in flight debits.
   * Zero-burn usage records take no wallet row lock, so they never wait for one.
   */
  #take(): Pending[] {
    const batch: Pending[] = [];
    const waiting: Pending[] = [];
    for (const item of this.#queue) {
      const held = item.amountMicros > 0n && this.#busyWallets.has(item.walletId);
      if (batch.length < this.#maxBatch && !held) batch.push(item);
      else waiting.push(item);
    }
    this.#queue = waiting;
    for (const item of batch) if (item.amountMicros > 0n) this.#busyWallets.add(item.walletId);
    return batch;
  }

  async #runBatch(batch: Pending[]): Promise<DbRow[][]> {
    if (batch.length === 1) {
      const only = batch[0] as Pending;
      return [(await this.#db.pool.query<DbRow>(only.statement)).rows];
    }
    const ordered = [...batch].sort((a, b) =>
      a.walletId < b.walletId ? -1 : a.walletId > b.walletId ? 1 : 0,
    );
    const column = <T>(pick: (item: Pending) => T) => ordered.map(pick);
    const { rows } = await this.#db.pool.query<DbRow>({
      name: 'tmd_debit_batch',
      text: 'SELECT * FROM tmd_debit_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)',
      values: [
        column((i) => i.walletId),
        column((i) => i.amountMicros),
        column((i) => i.month),
        column((i) => i.usage.at),
        column((i) => i.usage.requestId),
        column((i) => i.usage.keyId),
        column((i) => i.usage.accountId),
        column((i) => i.usage.dataset),
        column((i) => i.usage.channel),
        column((i) => i.usage.listCostMicros),
        column((i) => i.usage.costMicros),
        column((i) => i.usage.burnedMicros),
        column((i) => i.usage.outcome),
        column((i) => i.usage.rows),
      ],
    });
    const byItem = new Map<Pending, DbRow[]>(ordered.map((item) => [item, []]));
    for (const row of rows) {
      const item = ordered[Number(row.o_index) - 1] as Pending;
      byItem.set(item, [
        { balance_micros: row.o_balance, burn_month_micros: row.o_month_micros, entry_id: row.o_entry },
      ]);
    }
    return batch.map((item) => byItem.get(item) as DbRow[]);
  }

  async #flush(batch: Pending[]): Promise<void> {
    this.#batchesInFlight++;
    try {
      let results: DbRow[][];
      try {
        results = await this.#runBatch(batch);
        this.#db.answered();
      } catch (error) {
        const translated = this.#db.translate(error);
        for (const item of batch) item.reject(translated);
        return;
      }
      batch.forEach((item, index) => {
        item.resolve(results[index] as DbRow[]);
      });
    } finally {
      for (const item of batch) if (item.amountMicros > 0n) this.#busyWallets.delete(item.walletId);
      this.#batchesInFlight--;
      this.#schedule();
    }
  }
}
