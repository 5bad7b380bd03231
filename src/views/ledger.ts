/** Ledger entries and usage events as clients see them. */

import { z } from 'zod';
import { formatMicros } from '../domain/money.ts';
import type { MonthlyCreditRun } from '../domain/packages.ts';
import { entryKinds, type LedgerEntry, type UsageEvent } from '../store/port.ts';
import { iso, tokens } from './common.ts';

/** Every kind of ledger entry. */
export const entryKind = z.enum(entryKinds);

export const ledgerEntryOut = z.object({
  id: z.string(),
  kind: z.string(),
  amount: tokens,
  balance_after: tokens,
  created_at: z.string(),
  idempotency_key: z.string().nullable(),
  memo: z.string().nullable(),
  request_id: z.string().nullable(),
});

/** The read behind a burn or refund, as the wallet's ledger shows it. */
export const entryReadOut = z
  .object({
    dataset: z.string(),
    key_id: z.string().nullable().describe('The key (or OAuth connection) that read; null for a session.'),
    channel: z.string().describe('rest, mcp or terminal.'),
  })
  .nullable()
  .describe('The read that burned (or was refunded); null for credits, and for reads too old to look up.');

export function presentEntryRead(read: UsageEvent | undefined): z.infer<typeof entryReadOut> {
  return read ? { dataset: read.dataset, key_id: read.keyId, channel: read.channel } : null;
}

/** A ledger entry; an operator's idempotency key is shown as the operator gave it. */
export function presentLedgerEntry(entry: LedgerEntry) {
  return {
    id: entry.id,
    kind: entry.kind,
    amount: formatMicros(entry.amountMicros),
    balance_after: formatMicros(entry.balanceAfterMicros),
    created_at: iso(entry.createdAt) as string,
    idempotency_key: entry.idempotencyKey?.replace(/^operator:/, '') ?? null,
    memo: entry.memo,
    request_id: entry.requestId,
  };
}

export function presentUsage(e: UsageEvent) {
  return {
    id: e.id,
    at: iso(e.at) as string,
    request_id: e.requestId,
    key_id: e.keyId,
    dataset: e.dataset,
    channel: e.channel,
    list_cost: formatMicros(e.listCostMicros),
    token_cost: formatMicros(e.costMicros),
    tokens_burned: formatMicros(e.burnedMicros),
    outcome: e.outcome,
    rows: e.rows,
  };
}

/** A run of the monthly package credits (the admin API and `tmd monthly-credit`). */
export function presentMonthlyCreditRun(run: MonthlyCreditRun) {
  return {
    month: run.month,
    credited: run.credited.map((c) => ({
      account_id: c.accountId,
      package: c.packageId,
      tokens: c.tokens,
      entry_id: c.entryId,
    })),
    already_credited: run.alreadyCredited,
  };
}
