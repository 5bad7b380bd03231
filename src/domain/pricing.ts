/** Tiers and charges (spec 2.4, 8.4; DECISIONS "Money"). Pure functions over the validated config. */
import type { ServiceFile, Tier } from '../config.ts';
import type { Channel } from '../store/port.ts';
import { chargeMicros, eurString, MICROS_PER_TOKEN, percentToBasisPoints } from './money.ts';

export type { Channel } from '../store/port.ts';

export interface Pricing {
  readonly tiers: readonly Tier[];
  /** Each tier's min_tokens in micros, computed once: tierFor runs on every request. */
  readonly tierThresholdsMicros: readonly bigint[];
  readonly defaultCost: number;
  readonly costs: Readonly<Record<string, number>>;
  readonly terminalSurchargePercent: bigint;
  readonly microEurPerToken: bigint;
  readonly freeDomains: ReadonlySet<string>;
}

export function makePricing(file: ServiceFile): Pricing {
  return {
    tiers: file.pricing.loyalty_tiers,
    tierThresholdsMicros: file.pricing.loyalty_tiers.map((t) => BigInt(t.min_tokens) * MICROS_PER_TOKEN),
    defaultCost: file.pricing.default_endpoint_cost,
    costs: file.pricing.endpoint_costs,
    terminalSurchargePercent: BigInt(file.pricing.terminal_surcharge_percent),
    microEurPerToken: BigInt(Math.round(file.pricing.eur_per_token * 1_000_000)),
    freeDomains: new Set(file.pricing.free_public_test.free_domains),
  };
}

export function listCostOf(pricing: Pricing, key: string): number {
  return pricing.costs[key] ?? pricing.defaultCost;
}

export function isP0(pricing: Pricing, key: string): boolean {
  return pricing.freeDomains.has(key.slice(0, key.indexOf('/')));
}

/** The highest tier whose min_tokens is at most the tokens burned this UTC month. */
export function tierFor(pricing: Pricing, burnedMicros: bigint): Tier {
  let current = pricing.tiers[0] as Tier;
  pricing.tiers.forEach((tier, index) => {
    if ((pricing.tierThresholdsMicros[index] as bigint) <= burnedMicros) current = tier;
  });
  return current;
}

export function nextTier(pricing: Pricing, tier: Tier): Tier | null {
  return pricing.tiers.find((t) => t.level > tier.level) ?? null;
}

export function priceRead(pricing: Pricing, listCostTokens: number, tier: Tier, channel: Channel): bigint {
  return chargeMicros({
    listCostTokens,
    discountBasisPoints: percentToBasisPoints(tier.discount_pct),
    terminal: channel === 'terminal',
    terminalSurchargePercent: pricing.terminalSurchargePercent,
  });
}

export function costEur(pricing: Pricing, micros: bigint): string {
  return eurString(micros, pricing.microEurPerToken);
}

/** "YYYY-MM" of a UTC instant: the month a burn counts toward for tiers. */
let monthCache = { from: 0, until: 0, month: '' };

export function utcMonth(atMs: number): string {
  // Called several times per read: the answer only changes at a month boundary.
  if (atMs >= monthCache.from && atMs < monthCache.until) return monthCache.month;
  const d = new Date(atMs);
  const from = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const until = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  monthCache = { from, until, month: d.toISOString().slice(0, 7) };
  return monthCache.month;
}
