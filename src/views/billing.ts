/** Token packs, purchases and token requests as clients see them. */
import { z } from 'zod';
import type { TokenPack } from '../domain/billing.ts';
import { formatMicros } from '../domain/money.ts';
import type { TokenPurchase, TokenRequest } from '../store/port.ts';
import { tokens } from './common.ts';

const iso = (ms: number) => new Date(ms).toISOString();

const euros = (cents: number) => (cents / 100).toFixed(2);

export const tokenPackOut = z.object({
  id: z.string(),
  tokens: z.int(),
  price_eur: z.string().describe('Euros, two decimals: tokens × eur_per_token.'),
});

export function presentPack(pack: TokenPack): z.infer<typeof tokenPackOut> {
  return { id: pack.id, tokens: pack.tokens, price_eur: euros(pack.priceCents) };
}

export const purchaseOut = z.object({
  payment_id: z.string(),
  checkout_session: z.string(),
  pack: z.string(),
  tokens: z.int(),
  amount: z.string().describe('What was paid, two decimals, in `currency`.'),
  currency: z.string(),
  purchased_at: z.string(),
  ledger_entry_id: z.string(),
  refunded_tokens: z.int().describe('Tokens refunds took back.'),
  not_recovered: tokens.describe('Tokens a refund covered that the wallet had already spent.'),
  receipt_url: z.string().nullable(),
});

export function presentPurchase(p: TokenPurchase): z.infer<typeof purchaseOut> {
  return {
    payment_id: p.paymentIntent,
    checkout_session: p.sessionId,
    pack: p.packId,
    tokens: p.tokens,
    amount: euros(p.amountCents),
    currency: p.currency,
    purchased_at: iso(p.createdAt),
    ledger_entry_id: p.entryId,
    refunded_tokens: p.reclaimedTokens,
    not_recovered: formatMicros(p.shortfallMicros),
    receipt_url: p.receiptUrl,
  };
}

export const tokenRequestOut = z.object({
  id: z.string(),
  account_id: z.string(),
  pack: z.string(),
  tokens: z.int(),
  note: z.string().nullable(),
  status: z.enum(['open', 'credited', 'declined']),
  reason: z.string().nullable().describe('Why it was declined.'),
  requested_at: z.string(),
  settled_at: z.string().nullable(),
  ledger_entry_id: z.string().nullable(),
});

export function presentTokenRequest(r: TokenRequest): z.infer<typeof tokenRequestOut> {
  return {
    id: r.id,
    account_id: r.accountId,
    pack: r.packId,
    tokens: r.tokens,
    note: r.note,
    status: r.status,
    reason: r.reason,
    requested_at: iso(r.createdAt),
    settled_at: r.settledAt === null ? null : iso(r.settledAt),
    ledger_entry_id: r.entryId,
  };
}
