/**
 * The one place where a read is metered, for REST and MCP alike: entitlement, price, the atomic debit
 * and the usage event. The work that produces the data runs before the debit, and its result is
 * released only when the debit (or the zero-burn record) has committed: a read is charged only when
 * it is served, and never served unmetered.
 */

import { AppError, serviceUnavailable } from '../errors.ts';
import type { Channel, Ledger, UsageOutcome } from '../store/port.ts';
import { type Alerts, lowBalanceCrossed } from './alerts.ts';
import { BUY_PATH } from './billing.ts';
import type { Caller } from './caller.ts';
import { credentialKinds, kindLabel } from './credential-kinds.ts';
import { formatMicros, tokensToMicros } from './money.ts';
import { type Pricing, priceRead, tierFor, utcMonth } from './pricing.ts';
import { capThatWouldRefuse, spendCapsOf, spendingCapReached } from './spending-caps.ts';

export interface MeteredItem {
  /** The dataset key read. */
  label: string;
  listCost: number;
  p0: boolean;
}

export interface CostFigures {
  /** X-Token-Cost: after discount and surcharge; notional for zero-burn reads. */
  costMicros: bigint;
  /** X-Request-Tokens: actually burned. */
  burnedMicros: bigint;
  /** X-Credits-Remaining: the wallet balance after this request. */
  balanceMicros: bigint;
  outcome: UsageOutcome;
}

export interface Metered<T> {
  value: T;
  cost: CostFigures;
}

export interface MeterOptions {
  /**
   * Whether an early_bird session's read the wallet cannot cover is served at zero burn (default true).
   * Bulk exports pass false: the grandfather covers research reads, not volume (spec 5.3).
   */
  grandfather?: boolean;
}

/** What the metering reports to the process's metrics. */
export interface MeterObserver {
  /** A metered read or recipe served: its channel, list cost (tokens) and what it burned. */
  served(channel: Channel, listCost: number, burnedMicros: bigint): void;
  /** How long a debit (or a zero-burn usage record) took to commit. */
  debited(seconds: number): void;
}

export interface MeterDeps {
  store: Ledger;
  pricing: Pricing;
  now: () => number;
  /** The node's charges in flight; absent in tests that meter without a node around them. */
  charges?: Charges;
  observer?: MeterObserver;
  /** Told of a debit that took the balance below the account's low-balance threshold. */
  alerts?: Alerts | null;
}

/**
 * The charges (debits and zero-burn records) this node has in flight, by request id. A node that has to
 * stop now closes it: charges not yet sent are refused (503, nothing served or charged), and it waits for
 * those already sent, whose answers are then written before the process exits, so no read is charged and
 * left unsent. A charge still unsettled when the wait ends may yet commit: its request id is reported.
 */
export class Charges {
  readonly #inFlight = new Map<Promise<unknown>, string>();
  #closed = false;

  run<T>(requestId: string, charge: () => Promise<T>): Promise<T> {
    if (this.#closed) {
      throw serviceUnavailable(
        'This node is shutting down; nothing was charged. Retry, and another node will answer.',
      );
    }
    const pending = charge();
    this.#inFlight.set(pending, requestId);
    const settled = () => this.#inFlight.delete(pending);
    pending.then(settled, settled);
    return pending;
  }

  /**
   * Refuses new charges and waits, at most `waitMs`, for those in flight. Returns how many there were,
   * and the request ids of those still unsettled when the wait ended.
   */
  async close(waitMs: number): Promise<{ awaited: number; unsettled: string[] }> {
    this.#closed = true;
    const pending = [...this.#inFlight.keys()];
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(pending),
      new Promise((resolve) => {
        timer = setTimeout(resolve, Math.max(0, waitMs));
      }),
    ]);
    clearTimeout(timer);
    return { awaited: pending.length, unsettled: [...this.#inFlight.values()] };
  }
}

async function charge<T>(deps: MeterDeps, requestId: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await (deps.charges ? deps.charges.run(requestId, work) : work());
  deps.observer?.debited((performance.now() - started) / 1000);
  return result;
}

export function burnedThisMonth(caller: Caller, now: number): bigint {
  return caller.wallet.burnMonth === utcMonth(now) ? caller.wallet.burnMonthMicros : 0n;
}

/** The tier that prices this caller's reads: sandbox keys are always level 1. */
export function tierOf(deps: Pick<MeterDeps, 'pricing'>, caller: Caller, now: number) {
  return tierFor(deps.pricing, credentialKinds[caller.kind].baseTierOnly ? 0n : burnedThisMonth(caller, now));
}

/** What a read of these items would cost this caller, without burning anything. */
export function quote(deps: MeterDeps, caller: Caller, items: readonly MeteredItem[]) {
  const now = deps.now();
  const listCost = items.reduce((sum, item) => sum + item.listCost, 0);
  const costMicros = priceRead(deps.pricing, listCost, tierOf(deps, caller, now), caller.channel);
  const policy = credentialKinds[caller.kind];
  const entitled = !policy.p0Only || items.every((item) => item.p0);
  const zeroBurn = policy.notional;
  return { listCost, costMicros, burnMicros: zeroBurn ? 0n : costMicros, entitled };
}

export function assertEntitled(caller: Caller, items: readonly MeteredItem[]): void {
  if (!credentialKinds[caller.kind].p0Only) return;
  const refused = items.find((item) => !item.p0);
  if (refused) {
    const who = kindLabel(caller.kind, true);
    throw new AppError(
      'not_entitled',
      `${who} reads only P0 datasets (the free domains); ${refused.label} needs a wallet-backed key.`,
      { dataset: refused.label },
    );
  }
}

function insufficient(required: bigint, balance: bigint): AppError {
  return new AppError(
    'insufficient_tokens',
    `This read costs ${formatMicros(required)} tokens and the wallet holds ${formatMicros(balance)}. Buy tokens at ${BUY_PATH}.`,
    { required_tokens: formatMicros(required), balance: formatMicros(balance), buy_url: BUY_PATH },
  );
}

/** The refusal of several reads together (an analysis run) that the wallet cannot pay for. */
function insufficientForRun(required: bigint, balance: bigint): AppError {
  return new AppError(
    'insufficient_tokens',
    `This run costs ${formatMicros(required)} tokens and the wallet holds ${formatMicros(balance)}.`,
    { required_tokens: formatMicros(required), balance: formatMicros(balance) },
  );
}

/** Whether an early_bird session's read that the wallet cannot cover is served at zero burn. */
export function grandfathers(caller: Caller, options: MeterOptions): boolean {
  return (
    options.grandfather !== false &&
    credentialKinds[caller.kind].grandfathered &&
    caller.account?.plan === 'early_bird'
  );
}

/** What a read would cost a caller now, and the refusal it would get, without reading or burning. */
export interface Estimate {
  /** The dataset key, or `recipe:<name>`. */
  target: string;
  listCost: number;
  /** After the tier discount and the Terminal surcharge; notional for a public-test key on P0 data. */
  costMicros: bigint;
  /** What the read would burn: 0 for a public-test key, for a grandfathered read and when not entitled. */
  burnMicros: bigint;
  entitled: boolean;
  balanceMicros: bigint;
  /** The balance after such a read; the balance itself when the read would be refused. */
  balanceAfterMicros: bigint;
  /** The refusal such a read would get now (402 not_entitled, insufficient_tokens, spending_cap_reached). */
  refusal: AppError | null;
}

/**
 * The forecast of `meter()` for the same items: the same refusals in the same order (entitlement, the
 * wallet's balance, then the key's spending caps as the debit checks them), on the wallet as it is now.
 */
export async function estimate(
  deps: MeterDeps,
  caller: Caller,
  target: string,
  items: readonly MeteredItem[],
  options: MeterOptions = {},
): Promise<Estimate> {
  const now = deps.now();
  const wallet = (await deps.store.getWallet(caller.wallet.id)) ?? caller.wallet;
  const current = { ...caller, wallet };
  const q = quote(deps, current, items);
  const balance = wallet.balanceMicros;
  let refusal: AppError | null = null;
  try {
    assertEntitled(current, items);
  } catch (error) {
    refusal = error as AppError;
  }
  let burn = q.entitled ? q.burnMicros : 0n;
  const short = refusal === null && burn > balance;
  if (short && !grandfathers(current, options)) refusal = insufficient(burn, balance);
  if (refusal === null && burn > 0n) {
    const cap = await capThatWouldRefuse(deps.store, caller.key, burn, now);
    if (cap) refusal = spendingCapReached(cap, burn, now);
  }
  if (refusal === null && short) burn = 0n;
  return {
    target,
    listCost: q.listCost,
    costMicros: q.costMicros,
    burnMicros: burn,
    entitled: q.entitled,
    balanceMicros: balance,
    balanceAfterMicros: refusal === null ? balance - burn : balance,
    refusal,
  };
}

/** One of several reads forecast together: what it would cost and burn in its place in the sequence. */
export interface ReadEstimate {
  target: string;
  listCost: number;
  costMicros: bigint;
  burnMicros: bigint;
}

/** The forecast of several reads made one after another, each through `meter()`. */
export interface ReadsEstimate {
  reads: ReadEstimate[];
  costMicros: bigint;
  burnMicros: bigint;
  balanceMicros: bigint;
  /** The first refusal: a read not entitled, then the wallet short of the whole burn, then a cap. */
  refusal: AppError | null;
}

/**
 * The forecast of `meter()` for several reads made in turn (an analysis run), on the wallet as it is
 * now: each read priced as `estimate()` prices it; an early_bird session's read that the balance left
 * by the reads before it cannot cover is served at zero burn, as `meter()` would serve it; otherwise
 * the whole burn is checked against the balance and then against the key's caps, before any read.
 */
export async function estimateReads(
  deps: MeterDeps,
  caller: Caller,
  reads: readonly { target: string; items: readonly MeteredItem[] }[],
  options: MeterOptions = {},
): Promise<ReadsEstimate> {
  const now = deps.now();
  const wallet = (await deps.store.getWallet(caller.wallet.id)) ?? caller.wallet;
  const current = { ...caller, wallet };
  const balance = wallet.balanceMicros;
  const grandfathered = grandfathers(current, options);
  let refusal: AppError | null = null;
  let coverMicros = balance;
  const estimates: ReadEstimate[] = [];
  for (const { target, items } of reads) {
    const q = quote(deps, current, items);
    try {
      assertEntitled(current, items);
    } catch (error) {
      refusal ??= error as AppError;
    }
    let burnMicros = q.entitled ? q.burnMicros : 0n;
    if (grandfathered) {
      if (burnMicros > coverMicros) burnMicros = 0n;
      coverMicros -= burnMicros;
    }
    estimates.push({ target, listCost: q.listCost, costMicros: q.costMicros, burnMicros });
  }
  const costMicros = estimates.reduce((sum, r) => sum + r.costMicros, 0n);
  const burnMicros = estimates.reduce((sum, r) => sum + r.burnMicros, 0n);
  if (refusal === null && !grandfathered && burnMicros > balance) {
    refusal = insufficientForRun(burnMicros, balance);
  }
  if (refusal === null && burnMicros > 0n) {
    const cap = await capThatWouldRefuse(deps.store, caller.key, burnMicros, now);
    if (cap) refusal = spendingCapReached(cap, burnMicros, now);
  }
  return { reads: estimates, costMicros, burnMicros, balanceMicros: balance, refusal };
}

export async function meter<T>(
  deps: MeterDeps,
  caller: Caller,
  requestId: string,
  /** What the usage event names: the dataset key, or `recipe:<name>`. */
  label: string,
  items: readonly MeteredItem[],
  produce: () => Promise<{ value: T; rows: number }>,
  options: MeterOptions = {},
): Promise<Metered<T>> {
  const metered = await meterOnce(deps, caller, requestId, label, items, produce, options);
  const { cost } = metered;
  if (cost.outcome === 'charged' && deps.alerts) {
    const crossed = lowBalanceCrossed(
      caller,
      cost.balanceMicros + cost.burnedMicros,
      cost.balanceMicros,
      deps.now(),
    );
    if (crossed) deps.alerts.send(crossed);
  }
  if (deps.observer) {
    const listCost = items.reduce((sum, item) => sum + item.listCost, 0);
    deps.observer.served(caller.channel, listCost, metered.cost.burnedMicros);
  }
  return metered;
}

async function meterOnce<T>(
  deps: MeterDeps,
  caller: Caller,
  requestId: string,
  label: string,
  items: readonly MeteredItem[],
  produce: () => Promise<{ value: T; rows: number }>,
  options: MeterOptions,
): Promise<Metered<T>> {
  assertEntitled(caller, items);
  const now = deps.now();
  const { listCost, costMicros, burnMicros } = quote(deps, caller, items);
  const grandfatherable = grandfathers(caller, options);

  if (burnMicros > 0n && caller.wallet.balanceMicros < burnMicros && !grandfatherable) {
    // The caller's wallet may come from the key cache: a top-up made elsewhere (another node, `tmd
    // credit`) is not in it yet. Read it before refusing; the debit checks the balance again anyway.
    const current = (await deps.store.getWallet(caller.wallet.id))?.balanceMicros ?? 0n;
    if (current < burnMicros) throw insufficient(burnMicros, current);
  }

  const { value, rows } = await produce();
  const usage = {
    requestId,
    keyId: caller.key?.id ?? null,
    accountId: caller.account?.id ?? null,
    walletId: caller.wallet.id,
    dataset: label,
    channel: caller.channel,
    listCostMicros: tokensToMicros(listCost),
    costMicros,
    rows,
    at: now,
  };

  if (burnMicros === 0n) {
    await charge(deps, requestId, () =>
      deps.store.recordUsage({ ...usage, burnedMicros: 0n, outcome: 'notional' }),
    );
    return {
      value,
      cost: { costMicros, burnedMicros: 0n, balanceMicros: caller.wallet.balanceMicros, outcome: 'notional' },
    };
  }

  const debit = await charge(deps, requestId, () =>
    deps.store.debit({
      walletId: caller.wallet.id,
      amountMicros: burnMicros,
      month: utcMonth(now),
      usage: { ...usage, burnedMicros: burnMicros, outcome: 'charged' },
      spendCaps: spendCapsOf(caller.key, now),
    }),
  );
  if (!debit.ok && debit.cap) throw spendingCapReached(debit.cap, burnMicros, now);
  if (debit.ok) {
    return {
      value,
      cost: { costMicros, burnedMicros: burnMicros, balanceMicros: debit.balanceMicros, outcome: 'charged' },
    };
  }
  if (grandfatherable) {
    // early_bird (DECISIONS): never refused with 402; what the wallet cannot cover is served at zero burn.
    await charge(deps, requestId, () =>
      deps.store.recordUsage({ ...usage, burnedMicros: 0n, outcome: 'grandfathered' }),
    );
    return {
      value,
      cost: { costMicros, burnedMicros: 0n, balanceMicros: debit.balanceMicros, outcome: 'grandfathered' },
    };
  }
  throw insufficient(burnMicros, debit.balanceMicros);
}
