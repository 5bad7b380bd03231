/**
 * Per-key spending caps (DECISIONS: Partner accounts may cap tokens per UTC day and month). A cap
 * counts the tokens the key actually burned; it is checked inside the debit, atomically, so concurrent
 * reads can never take a key past its cap.
 */
import { AppError } from '../errors.ts';
import type { KeyRecord, SpendCap, Store } from '../store/port.ts';
import { formatMicros } from './money.ts';

const DAY_MS = 86_400_000;

export function utcDayStart(now: number): number {
  return Math.floor(now / DAY_MS) * DAY_MS;
}

export function utcMonthStart(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export function nextUtcMonthStart(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** When the spend counted by this period starts again. */
export function capResetAt(period: SpendCap['period'], now: number): number {
  return period === 'day' ? utcDayStart(now) + DAY_MS : nextUtcMonthStart(now);
}

/** The caps a debit by this key must respect; month first, so when both are reached the later reset is reported. */
export function spendCapsOf(key: KeyRecord | null, now: number): SpendCap[] {
  if (!key) return [];
  const caps: SpendCap[] = [];
  if (key.monthlyCapMicros !== null) {
    caps.push({ period: 'month', sinceMs: utcMonthStart(now), capMicros: key.monthlyCapMicros });
  }
  if (key.dailyCapMicros !== null) {
    caps.push({ period: 'day', sinceMs: utcDayStart(now), capMicros: key.dailyCapMicros });
  }
  return caps;
}

/**
 * The cap a debit of `amountMicros` by this key would pass now, checked as the debit checks them (in
 * order, the first one refuses), or null. A forecast for estimates: it reads only when the key has caps.
 */
export async function capThatWouldRefuse(
  store: Pick<Store, 'keyBurnedSince'>,
  key: KeyRecord | null,
  amountMicros: bigint,
  now: number,
): Promise<(SpendCap & { spentMicros: bigint }) | null> {
  if (!key || amountMicros <= 0n) return null;
  for (const cap of spendCapsOf(key, now)) {
    const spentMicros = await store.keyBurnedSince(key.id, cap.sinceMs);
    if (spentMicros + amountMicros > cap.capMicros) return { ...cap, spentMicros };
  }
  return null;
}

export function spendingCapReached(
  cap: SpendCap & { spentMicros: bigint },
  requiredMicros: bigint,
  now: number,
): AppError {
  const resetAt = new Date(capResetAt(cap.period, now)).toISOString();
  const label = cap.period === 'day' ? 'daily' : 'monthly';
  const when = cap.period === 'day' ? 'today (UTC)' : 'this month (UTC)';
  return new AppError(
    'spending_cap_reached',
    `This key's ${label} spending cap of ${formatMicros(cap.capMicros)} tokens is reached: it burned ${formatMicros(cap.spentMicros)} ${when} and this request costs ${formatMicros(requiredMicros)}. The cap resets at ${resetAt}.`,
    {
      period: cap.period,
      cap_tokens: formatMicros(cap.capMicros),
      spent_tokens: formatMicros(cap.spentMicros),
      required_tokens: formatMicros(requiredMicros),
      reset_at: resetAt,
    },
  );
}
