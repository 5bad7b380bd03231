/**
 * A plain in-memory model of the ledger: wallets in integer micro-tokens, their entries, usage events and
 * key caps. Prices come from the published price list (GET /api/v1/pricing) by the rule docs/api.md states
 * ("Prices and charges"), never from the service's answers, so the model can disagree with the service.
 */

export const MICROS = 1_000_000n;

/** What the model needs from GET /api/v1/pricing. */
export interface PriceList {
  costs: Record<string, number>;
  defaultCost: number;
  terminalPct: number;
  tiers: { level: number; minTokens: number; discountPct: number }[];
  skus: Record<string, { monthlyCredits: number; bulkExport: boolean }>;
  freeDomains: string[];
  signupGrant: number;
}

// biome-ignore lint/suspicious/noExplicitAny: the pricing document is read field by field
export function priceListOf(doc: any): PriceList {
  return {
    costs: doc.endpoint_costs,
    defaultCost: doc.default_endpoint_cost,
    terminalPct: doc.terminal_surcharge_percent,
    tiers: doc.loyalty_tiers.map((t: { level: number; min_tokens: number; discount_pct: number }) => ({
      level: t.level,
      minTokens: t.min_tokens,
      discountPct: t.discount_pct,
    })),
    skus: Object.fromEntries(
      doc.commercial_skus.map((s: { id: string; monthly_credits: number; bulk_export: boolean }) => [
        s.id,
        { monthlyCredits: s.monthly_credits, bulkExport: s.bulk_export },
      ]),
    ),
    freeDomains: doc.free_public_test.free_domains,
    signupGrant: doc.how_you_pay.signup_grant_tokens_default,
  };
}

export type Channel = 'rest' | 'mcp' | 'terminal';

export interface Entry {
  kind: string;
  amount: bigint;
}

export interface Usage {
  dataset: string;
  channel: Channel;
  outcome: 'charged' | 'notional' | 'refunded';
  burned: bigint;
}

/** A burn (or its refund, negative) by the account, at the time of the charge. */
interface Burn {
  at: number;
  amount: bigint;
  byKey: boolean;
}

export interface ModelAccount {
  /** `live`: operator-made with a live key (and a Terminal session); `public_test`: signed up. */
  kind: 'live' | 'public_test';
  balance: bigint;
  entries: Entry[];
  usage: Usage[];
  pkg: string | null;
  /** `<package>:<YYYY-MM>` already credited. */
  credited: Set<string>;
  caps: { daily: bigint | null; monthly: bigint | null };
  burns: Burn[];
  /** The idempotency keys of its operator credits, with their amounts. */
  credits: { key: string; amount: bigint }[];
}

export const DAY_MS = 86_400_000;

export function utcMonth(at: number): string {
  return new Date(at).toISOString().slice(0, 7);
}

export function monthStart(at: number): number {
  const d = new Date(at);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export function nextMonthStart(at: number): number {
  const d = new Date(at);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** a / b rounded half up, for non-negative integers. */
function divHalfUp(a: bigint, b: bigint): bigint {
  return (2n * a + b) / (2n * b);
}

export function listCost(prices: PriceList, dataset: string): number {
  return prices.costs[dataset] ?? prices.defaultCost;
}

export function isP0(prices: PriceList, dataset: string): boolean {
  return prices.freeDomains.includes(dataset.split('/')[0] as string);
}

export function burnedThisMonth(account: ModelAccount, now: number): bigint {
  const since = monthStart(now);
  return account.burns.filter((b) => b.at >= since).reduce((sum, b) => sum + b.amount, 0n);
}

export function keyBurnedSince(account: ModelAccount, since: number): bigint {
  return account.burns.filter((b) => b.byKey && b.at >= since).reduce((sum, b) => sum + b.amount, 0n);
}

export function tierOf(prices: PriceList, account: ModelAccount, now: number) {
  const burned = burnedThisMonth(account, now);
  let tier = prices.tiers[0] as PriceList['tiers'][number];
  for (const t of prices.tiers) if (BigInt(t.minTokens) * MICROS <= burned) tier = t;
  return tier;
}

/** list × (100 − discount) / 100 × (100 + surcharge) / 100 on the Terminal, rounded half up once. */
export function charge(prices: PriceList, list: number, discountPct: number, terminal: boolean): bigint {
  const surcharge = BigInt(terminal ? 100 + prices.terminalPct : 100);
  return divHalfUp(BigInt(list) * MICROS * BigInt(100 - discountPct) * surcharge, 10_000n);
}

export function newAccount(kind: ModelAccount['kind']): ModelAccount {
  return {
    kind,
    balance: 0n,
    entries: [],
    usage: [],
    pkg: null,
    credited: new Set(),
    caps: { daily: null, monthly: null },
    burns: [],
    credits: [],
  };
}

export function credit(account: ModelAccount, kind: string, amount: bigint): void {
  account.balance += amount;
  account.entries.push({ kind, amount });
}

/** The package's monthly credit for this month, unless it was credited already. */
export function monthlyCredit(prices: PriceList, account: ModelAccount, now: number): void {
  if (account.pkg === null) return;
  const id = `${account.pkg}:${utcMonth(now)}`;
  if (account.credited.has(id)) return;
  account.credited.add(id);
  const sku = prices.skus[account.pkg];
  if (sku) credit(account, 'monthly_credit', BigInt(sku.monthlyCredits) * MICROS);
}

export type Refusal = 'not_entitled' | 'insufficient_tokens' | 'spending_cap_reached' | 'forbidden';

export interface Outcome {
  refusal: Refusal | null;
  /** The charge after discount and surcharge (notional on a public-test key's P0 read). */
  cost: bigint;
  burned: bigint;
}

/**
 * A metered request (a read or an export) priced at `list` tokens: refused as docs/api.md says (P0 only for
 * public-test keys, a wallet that cannot pay, a key cap that would be passed), else charged.
 */
export function meter(
  prices: PriceList,
  account: ModelAccount,
  now: number,
  request: { dataset: string; label: string; list: number; channel: Channel; export: boolean; p0?: boolean },
): Outcome {
  const terminal = request.channel === 'terminal';
  const cost = charge(prices, request.list, tierOf(prices, account, now).discountPct, terminal);
  if (request.export) {
    const sku = account.pkg === null ? undefined : prices.skus[account.pkg];
    if (account.kind !== 'live' || !sku?.bulkExport) return { refusal: 'forbidden', cost, burned: 0n };
  }
  if (account.kind === 'public_test') {
    if (!(request.p0 ?? isP0(prices, request.dataset))) return { refusal: 'not_entitled', cost, burned: 0n };
    account.usage.push({ dataset: request.label, channel: request.channel, outcome: 'notional', burned: 0n });
    return { refusal: null, cost, burned: 0n };
  }
  if (account.balance < cost) return { refusal: 'insufficient_tokens', cost, burned: 0n };
  if (!terminal && capWouldPass(account, now, cost)) {
    return { refusal: 'spending_cap_reached', cost, burned: 0n };
  }
  account.balance -= cost;
  account.entries.push({ kind: 'burn', amount: -cost });
  account.usage.push({ dataset: request.label, channel: request.channel, outcome: 'charged', burned: cost });
  account.burns.push({ at: now, amount: cost, byKey: !terminal });
  return { refusal: null, cost, burned: cost };
}

function capWouldPass(account: ModelAccount, now: number, cost: bigint): boolean {
  const { daily, monthly } = account.caps;
  if (monthly !== null && keyBurnedSince(account, monthStart(now)) + cost > monthly) return true;
  const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
  return daily !== null && keyBurnedSince(account, dayStart) + cost > daily;
}

/** An export that failed on the service's side after its charge: the tokens come back (docs/api.md). */
export function refundLast(account: ModelAccount): void {
  const burn = account.burns.at(-1);
  const usage = account.usage.at(-1);
  if (!burn || !usage) throw new Error('nothing to refund');
  account.balance += burn.amount;
  account.entries.push({ kind: 'refund', amount: burn.amount });
  account.usage.push({ ...usage, outcome: 'refunded', burned: -usage.burned });
  account.burns.push({ ...burn, amount: -burn.amount });
}
