/** Token purchases, their refunds and token requests on PostgreSQL. */
import {
  MICROS_PER_TOKEN,
  type NewTokenPurchase,
  purchaseFrom,
  type Reclaimed,
  type TokenPurchase,
  type TokenRequest,
  type TokenRequestStatus,
  tokenRequestFrom,
} from '../billing-port.ts';
import type { DbRow } from '../rows.ts';
import { entryFrom, str } from '../rows.ts';
import type { PgDb } from './db.ts';
import { post } from './ledger.ts';
export class PgBilling {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  async recordPurchase(p: NewTokenPurchase): Promise<{ purchase: TokenPurchase; duplicate: boolean }> {
    return this.#db.tx(async (tx) => {
      // The wallet locked first: a second delivery of the same payment waits here, then finds it.
      const wallet = await tx.query('SELECT 1 FROM wallets WHERE id = $1 FOR UPDATE', [p.walletId]);
      if (wallet.rowCount === 0) throw new Error(`wallet ${p.walletId} does not exist`);
      const existing = await tx.query('SELECT * FROM token_purchases WHERE payment_intent = $1', [
        p.paymentIntent,
      ]);
      if (existing.rows[0]) return { purchase: purchaseFrom(existing.rows[0]), duplicate: true };
      const entry = await post(tx, {
        walletId: p.walletId,
        kind: 'purchase',
        amountMicros: BigInt(p.tokens) * MICROS_PER_TOKEN,
        at: p.createdAt,
        idempotencyKey: `stripe:${p.paymentIntent}`,
        memo: `${p.packId}: Stripe Checkout ${p.sessionId}, payment ${p.paymentIntent}`,
      });
      const purchase = await tx.query(
        `INSERT INTO token_purchases (payment_intent, session_id, account_id, wallet_id, pack_id, tokens, amount_cents,
           currency, entry_id, receipt_url, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
        [
          p.paymentIntent,
          p.sessionId,
          p.accountId,
          p.walletId,
          p.packId,
          p.tokens,
          p.amountCents,
          p.currency,
          String(entry.id),
          p.receiptUrl,
          p.createdAt,
        ],
      );
      return { purchase: purchaseFrom(purchase.rows[0] as DbRow), duplicate: false };
    });
  }

  async purchaseByPaymentIntent(paymentIntent: string): Promise<TokenPurchase | null> {
    const row = await this.#db.one('SELECT * FROM token_purchases WHERE payment_intent = $1', [
      paymentIntent,
    ]);
    return row ? purchaseFrom(row) : null;
  }

  async listPurchases(accountId: string): Promise<TokenPurchase[]> {
    return (
      await this.#db.rows(
        'SELECT * FROM token_purchases WHERE account_id = $1 ORDER BY created_at DESC, payment_intent LIMIT 200',
        [accountId],
      )
    ).map(purchaseFrom);
  }

  async reclaimPurchase(input: {
    paymentIntent: string;
    refundKey: string;
    tokens: number;
    at: number;
  }): Promise<Reclaimed> {
    return this.#db.tx(async (tx) => {
      const purchase = (
        await tx.query('SELECT * FROM token_purchases WHERE payment_intent = $1 FOR UPDATE', [
          input.paymentIntent,
        ])
      ).rows[0];
      if (!purchase) throw new Error(`no purchase with payment ${input.paymentIntent}`);
      const seen = await tx.query('SELECT 1 FROM token_refunds WHERE refund_key = $1', [input.refundKey]);
      if (seen.rowCount) return { takenMicros: 0n, shortfallMicros: 0n, entryId: null, duplicate: true };
      const walletId = str(purchase.wallet_id);
      const held = await tx.query('SELECT balance_micros FROM wallets WHERE id = $1 FOR UPDATE', [walletId]);
      const balance = BigInt(held.rows[0]?.balance_micros ?? 0);
      const wanted = BigInt(input.tokens) * MICROS_PER_TOKEN;
      const taken = wanted < balance ? wanted : balance;
      const entry =
        taken > 0n
          ? entryFrom(
              await post(tx, {
                walletId,
                kind: 'purchase_refund',
                amountMicros: -taken,
                at: input.at,
                idempotencyKey: input.refundKey,
                memo: `refund of payment ${input.paymentIntent}: ${input.tokens} tokens`,
              }),
            )
          : null;
      const shortfall = wanted - taken;
      await tx.query(
        'INSERT INTO token_refunds (refund_key, payment_intent, tokens, taken_micros, shortfall_micros, at) VALUES ($1, $2, $3, $4, $5, $6)',
        [input.refundKey, input.paymentIntent, input.tokens, taken, shortfall, input.at],
      );
      await tx.query(
        'UPDATE token_purchases SET reclaimed_tokens = reclaimed_tokens + $2, shortfall_micros = shortfall_micros + $3 WHERE payment_intent = $1',
        [input.paymentIntent, input.tokens, shortfall],
      );
      return { takenMicros: taken, shortfallMicros: shortfall, entryId: entry?.id ?? null, duplicate: false };
    });
  }

  async createTokenRequest(
    r: Omit<TokenRequest, 'status' | 'reason' | 'settledAt' | 'entryId'>,
  ): Promise<TokenRequest> {
    const row = await this.#db.one(
      `INSERT INTO token_requests (id, account_id, wallet_id, pack_id, tokens, note, status, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'open', $7) RETURNING *`,
      [r.id, r.accountId, r.walletId, r.packId, r.tokens, r.note, r.createdAt],
    );
    return tokenRequestFrom(row as DbRow);
  }

  async getTokenRequest(id: string): Promise<TokenRequest | null> {
    const row = await this.#db.one('SELECT * FROM token_requests WHERE id = $1', [id]);
    return row ? tokenRequestFrom(row) : null;
  }

  async listTokenRequests(
    filter: { accountId?: string; status?: TokenRequestStatus },
    limit: number,
  ): Promise<TokenRequest[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.accountId !== undefined) {
      values.push(filter.accountId);
      where.push(`account_id = $${values.length}`);
    }
    if (filter.status !== undefined) {
      values.push(filter.status);
      where.push(`status = $${values.length}`);
    }
    values.push(limit);
    return (
      await this.#db.rows(
        `SELECT * FROM token_requests ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
          ORDER BY created_at DESC, id DESC LIMIT $${values.length}`,
        values,
      )
    ).map(tokenRequestFrom);
  }

  async settleTokenRequest(
    id: string,
    outcome:
      | { status: 'credited'; at: number; memo: string }
      | { status: 'declined'; at: number; reason: string },
  ): Promise<TokenRequest | null> {
    return this.#db.tx(async (tx) => {
      const request = (
        await tx.query("SELECT * FROM token_requests WHERE id = $1 AND status = 'open' FOR UPDATE", [id])
      ).rows[0];
      if (!request) return null;
      let entryId: string | null = null;
      if (outcome.status === 'credited') {
        const entry = await post(tx, {
          walletId: str(request.wallet_id),
          kind: 'topup',
          amountMicros: BigInt(request.tokens) * MICROS_PER_TOKEN,
          at: outcome.at,
          idempotencyKey: `token-request:${id}`,
          memo: outcome.memo,
        });
        entryId = String(entry.id);
      }
      const row = await tx.query(
        'UPDATE token_requests SET status = $2, reason = $3, settled_at = $4, entry_id = $5 WHERE id = $1 RETURNING *',
        [id, outcome.status, outcome.status === 'declined' ? outcome.reason : null, outcome.at, entryId],
      );
      return tokenRequestFrom(row.rows[0] as DbRow);
    });
  }
}
