/**
 * Notices to an account's owner outside a request: a debit that took the balance below the account's
 * low-balance threshold (once per crossing: the debit whose balance before was at or above it and after
 * is below). Shown in the Terminal; posted, signed, to the operator's webhook when one is configured.
 */
import type { Caller } from './caller.ts';
import { formatMicros } from './money.ts';

export interface BalanceLowEvent {
  type: 'balance.low';
  account_id: string;
  wallet_id: string;
  balance: string;
  threshold: string;
  at: string;
}

/** Where notices go (an outgoing webhook); `send` never waits for delivery. */
export interface Alerts {
  send(event: BalanceLowEvent): void;
}

/** The notice a debit owes, if it crossed the account's threshold. */
export function lowBalanceCrossed(
  caller: Caller,
  beforeMicros: bigint,
  afterMicros: bigint,
  at: number,
): BalanceLowEvent | null {
  const threshold = caller.account?.lowBalanceMicros;
  if (threshold === null || threshold === undefined || !caller.account) return null;
  if (!(beforeMicros >= threshold && afterMicros < threshold)) return null;
  return {
    type: 'balance.low',
    account_id: caller.account.id,
    wallet_id: caller.wallet.id,
    balance: formatMicros(afterMicros),
    threshold: formatMicros(threshold),
    at: new Date(at).toISOString(),
  };
}
