/** Token purchases, their refunds and token requests on SQLite. */
import type { SQLInputValue } from 'node:sqlite';
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
import { entryFrom, num, str } from '../rows.ts';
import { type DbRow, limitLiteral, type SqliteDb } from './db.ts';
import { post } from './ledger.ts';
export class SqliteBilling {
  readonly #db: SqliteDb;

  constructor(db: SqliteDb) {
    this.#db = db;
  }

  async recordPurchase(p: NewTokenPurchase): Promise<{ purchase: TokenPurchase; duplicate: boolean }> {
    return this.#db.tx(() => {
      const existing = this.#db.get(
        'SELECT * FROM token_purchases WHERE payment_intent = ?',
        p.paymentIntent,
      );
      if (existing) return { purchase: purchaseFrom(existing), duplicate: true };
      const entry = post(this.#db, {
        walletId: p.walletId,
        kind: 'purchase',
        amountMicros: BigInt(p.tokens) * MICROS_PER_TOKEN,
        at: p.createdAt,
        idempotencyKey: `stripe:${p.paymentIntent}`,
        memo: `${p.packId}: Stripe Checkout ${p.sessionId}, payment ${p.paymentIntent}`,
      });
      const purchase = this.#db.get(
        `INSERT INTO token_purchases (payment_intent, session_id, account_id, wallet_id, pack_id, tokens, amount_cents,
           currency, entry_id, receipt_url, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
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
      ) as DbRow;
      return { purchase: purchaseFrom(purchase), duplicate: false };
    });
  }

  async purchaseByPaymentIntent(paymentIntent: string): Promise<TokenPurchase | null> {
    const row = this.#db.get('SELECT * FROM token_purchases WHERE payment_intent = ?', paymentIntent);
    return row ? purchaseFrom(row) : null;
  }

  async listPurchases(accountId: string): Promise<TokenPurchase[]> {
    return this.#db
      .all(
        'SELECT * FROM token_purchases WHERE account_id = ? ORDER BY created_at DESC, payment_intent LIMIT 200',
        accountId,
      )
      .map(purchaseFrom);
  }

  async reclaimPurchase(input: {
    paymentIntent: string;
    refundKey: string;
    tokens: number;
    at: number;
  }): Promise<Reclaimed> {
    return this.#db.tx(() => {
      const seen = this.#db.get('SELECT * FROM token_refunds WHERE refund_key = ?', input.refundKey);
      if (seen) return { takenMicros: 0n, shortfallMicros: 0n, entryId: null, duplicate: true };
      const purchase = this.#db.get(
        'SELECT * FROM token_purchases WHERE payment_intent = ?',
        input.paymentIntent,
      );
      if (!purchase) throw new Error(`no purchase with payment ${input.paymentIntent}`);
      const wanted = BigInt(input.tokens) * MICROS_PER_TOKEN;
      const held = this.#db.get('SELECT balance_micros FROM wallets WHERE id = ?', str(purchase.wallet_id));
      const balance = (held?.balance_micros as bigint | undefined) ?? 0n;
      const taken = wanted < balance ? wanted : balance;
      const entry =
        taken > 0n
          ? entryFrom(
              post(this.#db, {
                walletId: str(purchase.wallet_id),
                kind: 'purchase_refund',
                amountMicros: -taken,
                at: input.at,
                idempotencyKey: input.refundKey,
                memo: `refund of payment ${input.paymentIntent}: ${input.tokens} tokens`,
              }),
            )
          : null;
      const shortfall = wanted - taken;
      this.#db.run(
        'INSERT INTO token_refunds (refund_key, payment_intent, tokens, taken_micros, shortfall_micros, at) VALUES (?, ?, ?, ?, ?, ?)',
        input.refundKey,
        input.paymentIntent,
        input.tokens,
        taken,
        shortfall,
        input.at,
      );
      this.#db.run(
        'UPDATE token_purchases SET reclaimed_tokens = reclaimed_tokens + ?, shortfall_micros = shortfall_micros + ? WHERE payment_intent = ?',
        input.tokens,
        shortfall,
        input.paymentIntent,
      );
      return { takenMicros: taken, shortfallMicros: shortfall, entryId: entry?.id ?? null, duplicate: false };
    });
  }

  async createTokenRequest(
    r: Omit<TokenRequest, 'status' | 'reason' | 'settledAt' | 'entryId'>,
  ): Promise<TokenRequest> {
    return tokenRequestFrom(
      this.#db.get(
        `INSERT INTO token_requests (id, account_id, wallet_id, pack_id, tokens, note, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 'open', ?) RETURNING *`,
        r.id,
        r.accountId,
        r.walletId,
        r.packId,
        r.tokens,
        r.note,
        r.createdAt,
      ) as DbRow,
    );
  }

  async getTokenRequest(id: string): Promise<TokenRequest | null> {
    const row = this.#db.get('SELECT * FROM token_requests WHERE id = ?', id);
    return row ? tokenRequestFrom(row) : null;
  }

  async listTokenRequests(
    filter: { accountId?: string; status?: TokenRequestStatus },
    limit: number,
  ): Promise<TokenRequest[]> {
    const where: string[] = [];
    const params: SQLInputValue[] = [];
    if (filter.accountId !== undefined) {
      where.push('account_id = ?');
      params.push(filter.accountId);
    }
    if (filter.status !== undefined) {
      where.push('status = ?');
      params.push(filter.status);
    }
    return this.#db
      .all(
        `SELECT * FROM token_requests ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ${limitLiteral(limit)}`,
        ...params,
      )
      .map(tokenRequestFrom);
  }

  async settleTokenRequest(
    id: string,
    outcome:
      | { status: 'credited'; at: number; memo: string }
      | { status: 'declined'; at: number; reason: string },
  ): Promise<TokenRequest | null> {
    return this.#db.tx(() => {
      const request = this.#db.get("SELECT * FROM token_requests WHERE id = ? AND status = 'open'", id);
      if (!request) return null;
      let entryId: string | null = null;
      if (outcome.status === 'credited') {
        entryId = String(
          post(this.#db, {
            walletId: str(request.wallet_id),
            kind: 'topup',
            amountMicros: BigInt(num(request.tokens)) * MICROS_PER_TOKEN,
            at: outcome.at,
            idempotencyKey: `token-request:${id}`,
            memo: outcome.memo,
          }).id,
        );
      }
      return tokenRequestFrom(
        this.#db.get(
          'UPDATE token_requests SET status = ?, reason = ?, settled_at = ?, entry_id = ? WHERE id = ? RETURNING *',
          outcome.status,
          outcome.status === 'declined' ? outcome.reason : null,
          outcome.at,
          entryId,
          id,
        ) as DbRow,
      );
    });
  }
}
