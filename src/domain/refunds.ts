/**
 * A refund: the one ledger operation that gives back a charge whose read was not served after all (an
 * export whose stream failed on our side, the reads of an analysis run or question that failed or was
 * not answered). Exports and analysis runs both call it, so a refund is written one way everywhere.
 */

import type { Caller } from './caller.ts';
import type { CostFigures, MeterDeps } from './metering.ts';
import { tokensToMicros } from './money.ts';
import { utcMonth } from './pricing.ts';

/** A charge a refund can give back: what its usage event recorded. */
export interface ChargedRead {
  requestId: string;
  /** What the usage event named: the dataset key, or `export:<key>`. */
  label: string;
  listCostMicros: bigint;
  costMicros: bigint;
  burnedMicros: bigint;
  /** When it was charged: the refund lowers that day's and month's burn. */
  chargedAt: number;
}

/** The charge of a metered read (list cost in tokens), as a refund would give it back. */
export function chargeOf(
  requestId: string,
  label: string,
  listCost: number,
  cost: Pick<CostFigures, 'costMicros' | 'burnedMicros'>,
  chargedAt: number,
): ChargedRead {
  return {
    requestId,
    label,
    listCostMicros: tokensToMicros(listCost),
    costMicros: cost.costMicros,
    burnedMicros: cost.burnedMicros,
    chargedAt,
  };
}

/**
 * Gives one charge back: a `refund` entry referencing its request id, with the reversal of its usage
 * event dated with the charge, so the key's spending caps and the account's month burn (its tier) no
 * longer count it. The ledger stays append-only. A charge that burned nothing is not refunded.
 * Returns what was given back.
 */
export async function refund(
  deps: Pick<MeterDeps, 'store' | 'now'>,
  caller: Caller,
  charged: ChargedRead,
  detail: string,
): Promise<bigint> {
  if (charged.burnedMicros <= 0n) return 0n;
  await deps.store.credit({
    walletId: caller.wallet.id,
    kind: 'refund',
    amountMicros: charged.burnedMicros,
    at: deps.now(),
    requestId: charged.requestId,
    memo: `refund: ${detail}`,
    reverses: {
      month: utcMonth(charged.chargedAt),
      usage: {
        requestId: charged.requestId,
        keyId: caller.key?.id ?? null,
        accountId: caller.account?.id ?? null,
        walletId: caller.wallet.id,
        dataset: charged.label,
        channel: caller.channel,
        listCostMicros: -charged.listCostMicros,
        costMicros: -charged.costMicros,
        burnedMicros: -charged.burnedMicros,
        outcome: 'refunded',
        rows: 0,
        at: charged.chargedAt,
      },
    },
  });
  return charged.burnedMicros;
}

/** Refunds each charge in turn; how many were given back and how much. */
export async function refundAll(
  deps: Pick<MeterDeps, 'store' | 'now'>,
  caller: Caller,
  charged: readonly ChargedRead[],
  detail: string,
): Promise<{ reads: number; micros: bigint }> {
  let reads = 0;
  let micros = 0n;
  for (const read of charged) {
    const given = await refund(deps, caller, read, detail);
    if (given > 0n) reads++;
    micros += given;
  }
  return { reads, micros };
}
