/** Token purchases (Stripe Checkout), their refunds, and token requests an operator settles. */
export interface TokenPurchase {
  /** Stripe's PaymentIntent id: one purchase per payment. */
  paymentIntent: string;
  sessionId: string;
  accountId: string;
  walletId: string;
  packId: string;
  tokens: number;
  amountCents: number;
  currency: string;
  /** The ledger entry (kind purchase) that credited it. */
  entryId: string;
  /** Tokens refunds took back, and micro-tokens they could not (the wallet had spent them). */
  reclaimedTokens: number;
  shortfallMicros: bigint;
  receiptUrl: string | null;
  createdAt: number;
}

export type NewTokenPurchase = Omit<TokenPurchase, 'entryId' | 'reclaimedTokens' | 'shortfallMicros'>;

export interface Reclaimed {
  /** Micro-tokens taken back from the wallet now (0 for a repeat), and those it no longer held. */
  takenMicros: bigint;
  shortfallMicros: bigint;
  /** The ledger entry that took them (none when nothing was taken). */
  entryId: string | null;
  duplicate: boolean;
}

export type TokenRequestStatus = 'open' | 'credited' | 'declined';

export interface TokenRequest {
  id: string;
  accountId: string;
  walletId: string;
  packId: string;
  tokens: number;
  note: string | null;
  status: TokenRequestStatus;
  /** Why it was declined. */
  reason: string | null;
  createdAt: number;
  settledAt: number | null;
  entryId: string | null;
}

export interface BillingStore {
  /**
   * Credits the purchase's tokens (a ledger entry of kind purchase) and records it, in one
   * transaction, once per payment intent: a repeat returns the first record with duplicate true.
   */
  recordPurchase(purchase: NewTokenPurchase): Promise<{ purchase: TokenPurchase; duplicate: boolean }>;
  purchaseByPaymentIntent(paymentIntent: string): Promise<TokenPurchase | null>;
  /** An account's purchases, newest first. */
  listPurchases(accountId: string): Promise<TokenPurchase[]>;
  /**
   * Takes back `tokens` of a purchase from its wallet (a ledger entry of kind purchase_refund), never
   * below zero: what the wallet no longer holds is recorded as the purchase's shortfall. Once per
   * `refundKey`.
   */
  reclaimPurchase(input: {
    paymentIntent: string;
    refundKey: string;
    tokens: number;
    at: number;
  }): Promise<Reclaimed>;
  createTokenRequest(
    request: Omit<TokenRequest, 'status' | 'reason' | 'settledAt' | 'entryId'>,
  ): Promise<TokenRequest>;
  getTokenRequest(id: string): Promise<TokenRequest | null>;
  /** Newest first: one account's, or every account's in a status. */
  listTokenRequests(
    filter: { accountId?: string; status?: TokenRequestStatus },
    limit: number,
  ): Promise<TokenRequest[]>;
  /**
   * Settles an open request: credited (its tokens as a topup, the request id as idempotency key) or
   * declined with a reason. False when it was not open (settled already, by this call or another).
   */
  settleTokenRequest(
    id: string,
    outcome:
      | { status: 'credited'; at: number; memo: string }
      | { status: 'declined'; at: number; reason: string },
  ): Promise<TokenRequest | null>;
}

type Row = Record<string, unknown>;
const optNum = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const optStr = (v: unknown) => (v === null || v === undefined ? null : String(v));

export function purchaseFrom(r: Row): TokenPurchase {
  return {
    paymentIntent: String(r.payment_intent),
    sessionId: String(r.session_id),
    accountId: String(r.account_id),
    walletId: String(r.wallet_id),
    packId: String(r.pack_id),
    tokens: Number(r.tokens),
    amountCents: Number(r.amount_cents),
    currency: String(r.currency),
    entryId: String(r.entry_id),
    reclaimedTokens: Number(r.reclaimed_tokens),
    shortfallMicros: BigInt(r.shortfall_micros as string | number | bigint),
    receiptUrl: optStr(r.receipt_url),
    createdAt: Number(r.created_at),
  };
}

export function tokenRequestFrom(r: Row): TokenRequest {
  return {
    id: String(r.id),
    accountId: String(r.account_id),
    walletId: String(r.wallet_id),
    packId: String(r.pack_id),
    tokens: Number(r.tokens),
    note: optStr(r.note),
    status: String(r.status) as TokenRequestStatus,
    reason: optStr(r.reason),
    createdAt: Number(r.created_at),
    settledAt: optNum(r.settled_at),
    entryId: optStr(r.entry_id),
  };
}

export const MICROS_PER_TOKEN = 1_000_000n;
