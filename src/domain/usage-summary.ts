/**
 * An account's usage over recent days, summed for charts: tokens per UTC day by channel, and the
 * datasets that took the most. Built from the same usage events GET /api/v1/me/usage pages through.
 */
import { AppError } from '../errors.ts';
import type { Store } from '../store/port.ts';
import type { Caller } from './caller.ts';
import type { Channel } from './pricing.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Enough for any Terminal user; past it the summary is of the newest events and says it is partial. */
const MAX_EVENTS = 200_000;

export interface UsageDay {
  /** YYYY-MM-DD, UTC. */
  date: string;
  burnedMicros: Record<Channel, bigint>;
  reads: Record<Channel, number>;
}

export interface UsageSummary {
  since: number;
  days: UsageDay[];
  top: { dataset: string; burnedMicros: bigint; reads: number }[];
  /** Only the newest MAX_EVENTS events in range were summed: older days are incomplete. */
  partial: boolean;
}

const zeroByChannel = <T>(zero: T): Record<Channel, T> => ({ rest: zero, mcp: zero, terminal: zero });

/** Usage of the last `days` UTC days (today included), for the caller's account or own key. */
/** Whose usage a caller sees: its account's (every key), or an account-less sandbox key's own; null for none. */
export function usageScope(caller: Caller): { accountId: string } | { keyId: string } | null {
  return caller.account ? { accountId: caller.account.id } : caller.key ? { keyId: caller.key.id } : null;
}

export async function summarizeUsage(
  store: Pick<Store, 'sumUsage'>,
  caller: Caller,
  now: number,
  days: number,
  topCount = 10,
): Promise<UsageSummary> {
  const scope = usageScope(caller);
  if (!scope) throw new AppError('forbidden', 'No usage to show for this credential.');
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const since = today - (days - 1) * DAY_MS;
  const byDay = new Map<string, UsageDay>();
  for (let t = since; t <= today; t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10);
    byDay.set(date, { date, burnedMicros: zeroByChannel(0n), reads: zeroByChannel(0) });
  }
  const byDataset = new Map<string, { burnedMicros: bigint; reads: number }>();
  // Summed by the store per day, dataset and channel: the events themselves never leave the database.
  const { sums, more: partial } = await store.sumUsage(scope, {
    sinceMs: since,
    bucketMs: DAY_MS,
    limit: MAX_EVENTS,
  });
  for (const sum of sums) {
    // A refund's event carries the burn negated: it takes the read back out of the count too.
    const reads = sum.served - sum.refunded;
    const day = byDay.get(new Date(sum.bucketAt).toISOString().slice(0, 10));
    if (day) {
      day.burnedMicros[sum.channel] += sum.burnedMicros;
      day.reads[sum.channel] += reads;
    }
    const total = byDataset.get(sum.dataset) ?? { burnedMicros: 0n, reads: 0 };
    total.burnedMicros += sum.burnedMicros;
    total.reads += reads;
    byDataset.set(sum.dataset, total);
  }
  const top = [...byDataset]
    .map(([dataset, sum]) => ({ dataset, ...sum }))
    .filter((d) => d.reads > 0)
    .sort((a, b) =>
      a.burnedMicros === b.burnedMicros
        ? b.reads - a.reads || a.dataset.localeCompare(b.dataset)
        : a.burnedMicros > b.burnedMicros
          ? -1
          : 1,
    )
    .slice(0, topCount);
  return { since, days: [...byDay.values()], top, partial };
}
