/**
 * Money is integer micro-tokens (1 token = 1,000,000 micros) held in bigint, never a float.
 * One rounding rule: half up to the micro-token, applied once at the end of a charge.
 */

export const MICROS_PER_TOKEN = 1_000_000n;

export function tokensToMicros(tokens: number | bigint): bigint {
  if (typeof tokens === 'bigint') return tokens * MICROS_PER_TOKEN;
  if (Number.isInteger(tokens)) return BigInt(tokens) * MICROS_PER_TOKEN;
  return decimalToMicros(String(tokens));
}

/** Parses a plain decimal string ("12.5", "0.000001") into micros; rejects more than six decimals. */
export function decimalToMicros(text: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!match) throw new RangeError(`not a token amount with at most 6 decimals: ${text}`);
  const [, sign, whole = '0', frac = ''] = match;
  const micros = BigInt(whole) * MICROS_PER_TOKEN + BigInt(frac.padEnd(6, '0'));
  return sign === '-' ? -micros : micros;
}

/** Exact plain decimal, no trailing zeros: 5737500n -> "5.7375", 2000000n -> "2", 0n -> "0". */
export function formatMicros(micros: bigint): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / MICROS_PER_TOKEN;
  const frac = (abs % MICROS_PER_TOKEN).toString().padStart(6, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** A percentage from configuration (e.g. 2.0, 12.5) as integer basis points; config validation keeps it exact. */
export function percentToBasisPoints(percent: number): bigint {
  const bp = Math.round(percent * 100);
  if (Math.abs(bp - percent * 100) > 1e-9)
    throw new RangeError(`percentage ${percent} has more than 2 decimals`);
  return BigInt(bp);
}

/** Integer division rounding half up (for non-negative operands). */
export function divRoundHalfUp(numerator: bigint, denominator: bigint): bigint {
  return (numerator * 2n + denominator) / (denominator * 2n);
}

export interface ChargeInput {
  listCostTokens: number;
  discountBasisPoints: bigint;
  terminal: boolean;
  terminalSurchargePercent: bigint;
}

/**
 * Spec 8.4: list cost, less the loyalty discount, times (1 + surcharge) for Terminal calls.
 * Computed as one fraction so the only rounding is the final half-up to the micro-token.
 */
export function chargeMicros(input: ChargeInput): bigint {
  const list = tokensToMicros(input.listCostTokens);
  const surcharge = input.terminal ? 100n + input.terminalSurchargePercent : 100n;
  return divRoundHalfUp(list * (10_000n - input.discountBasisPoints) * surcharge, 10_000n * 100n);
}

/** EUR value of micros at a per-token price given in micro-euros, as an exact decimal string. */
export function eurString(micros: bigint, microEurPerToken: bigint): string {
  // micros * microEur / 1e6 gives micro-euro-micros; keep 12 decimals then trim.
  const pico = micros * microEurPerToken; // units of 1e-12 EUR
  const negative = pico < 0n;
  const abs = negative ? -pico : pico;
  const scale = 1_000_000_000_000n;
  const whole = abs / scale;
  const frac = (abs % scale).toString().padStart(12, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}
