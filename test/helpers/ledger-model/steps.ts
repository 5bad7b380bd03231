/**
 * The steps of a sequence, as plain data (so fast-check prints and shrinks them), and the generator.
 * An actor is named by an index taken modulo the actors made so far, so every shrunk sequence still runs.
 */
import fc from 'fast-check';
import type { Channel } from './model.ts';

/** Read targets: P0 and not, list costs 1 to 10 (the export's dataset among them, loaded rows). */
export const DATASETS = [
  'macro/fed-h15-series',
  'equities/stocks',
  'filings/documents',
  'geospatial/gvp-volcanoes',
  'corporate/financial-statements',
  'system/api-usage',
] as const;

export const RECIPES = ['dow30-sandbox-smoke', 'calendar-tonight'] as const;

export const PACKAGES = [null, 'starter', 'pro', 'partner'] as const;

export type Step =
  | { t: 'signup' }
  | { t: 'open'; micros: number; pkg: (typeof PACKAGES)[number] }
  /** `same`: the last credit's Idempotency-Key again (no new entry); `other`: that key with another amount (409). */
  | { t: 'credit'; a: number; micros: number; replay: 'no' | 'same' | 'other' }
  | { t: 'estimate'; a: number; ds: number; via: Channel }
  /** A read with an Idempotency-Key: a new one, a retry of the actor's last, or that key on another read. */
  | { t: 'idempotent'; a: number; ds: number; via: Channel; mode: 'new' | 'retry' | 'reuse' }
  | { t: 'read'; a: number; ds: number; via: Channel }
  | { t: 'recipe'; a: number; r: number; via: 'rest' | 'terminal' }
  | { t: 'bad'; a: number; via: Channel }
  | { t: 'burst'; a: number; ds: number; n: number }
  /** `later`: the stream fails after midnight (UTC), so its refund is made on the next day. */
  | { t: 'export'; a: number; fail: 'no' | 'now' | 'later'; via: 'rest' | 'terminal' }
  | { t: 'caps'; a: number; daily: number | null; monthly: number | null; self: boolean }
  | { t: 'package'; a: number; pkg: (typeof PACKAGES)[number] }
  | { t: 'monthly' }
  | { t: 'advance'; unit: 'day' | 'month' }
  | { t: 'restart' };

const actor = fc.nat({ max: 5 });
const channel = fc.constantFrom<Channel>('rest', 'mcp', 'terminal');
/** Micro-token amounts: whole tokens mostly, some with decimals, up to 60 tokens. */
const micros = fc.oneof(
  fc.integer({ min: 1, max: 60 }).map((t) => t * 1_000_000),
  fc.integer({ min: 1, max: 60_000_000 }),
);
const cap = fc.option(fc.integer({ min: 1, max: 20 }), { nil: null });

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.constant({ t: 'signup' as const }), weight: 1 },
  {
    arbitrary: fc.record({
      t: fc.constant('open' as const),
      micros: fc.oneof(fc.constant(0), micros),
      pkg: fc.constantFrom(...PACKAGES),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      t: fc.constant('credit' as const),
      a: actor,
      micros,
      replay: fc.constantFrom('no' as const, 'no' as const, 'same' as const, 'other' as const),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      t: fc.constant('read' as const),
      a: actor,
      ds: fc.nat({ max: DATASETS.length - 1 }),
      via: channel,
    }),
    weight: 8,
  },
  {
    arbitrary: fc.record({
      t: fc.constant('burst' as const),
      a: actor,
      ds: fc.nat({ max: DATASETS.length - 1 }),
      n: fc.integer({ min: 2, max: 6 }),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      t: fc.constant('idempotent' as const),
      a: actor,
      ds: fc.nat({ max: DATASETS.length - 1 }),
      via: channel,
      mode: fc.constantFrom('new' as const, 'retry' as const, 'retry' as const, 'reuse' as const),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      t: fc.constant('estimate' as const),
      a: actor,
      ds: fc.nat({ max: DATASETS.length - 1 }),
      via: channel,
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      t: fc.constant('recipe' as const),
      a: actor,
      r: fc.nat({ max: RECIPES.length - 1 }),
      via: fc.constantFrom('rest' as const, 'terminal' as const),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ t: fc.constant('bad' as const), a: actor, via: channel }), weight: 1 },
  {
    arbitrary: fc.record({
      t: fc.constant('export' as const),
      a: actor,
      fail: fc.constantFrom('no' as const, 'now' as const, 'later' as const),
      via: fc.constantFrom('rest' as const, 'terminal' as const),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      t: fc.constant('caps' as const),
      a: actor,
      daily: cap,
      monthly: cap,
      self: fc.boolean(),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ t: fc.constant('package' as const), a: actor, pkg: fc.constantFrom(...PACKAGES) }),
    weight: 3,
  },
  { arbitrary: fc.constant({ t: 'monthly' as const }), weight: 1 },
  {
    arbitrary: fc.record({ t: fc.constant('advance' as const), unit: fc.constantFrom('day', 'month') }),
    weight: 1,
  },
  { arbitrary: fc.constant({ t: 'restart' as const }), weight: 1 },
);

/** A sequence starts with an account of each kind (one that may export), so even the shortest touch the ledger. */
export const sequenceArb = (maxLength: number): fc.Arbitrary<Step[]> =>
  fc
    .array(stepArb, { minLength: 1, maxLength, size: 'max' })
    .map((steps): Step[] => [{ t: 'open', micros: 30_000_000, pkg: 'pro' }, { t: 'signup' }, ...steps]);

/** Decimal tokens for a micro-token amount, as the API takes and answers them ("12.5", "3"). */
export function tokensOf(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  const whole = abs / 1_000_000n;
  const fraction = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Micro-tokens of a decimal token string from the API. */
export function microsOf(tokens: string | number): bigint {
  const text = String(tokens);
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = text.replace(/^-/, '').split('.');
  const value = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6) || '0');
  return negative ? -value : value;
}
