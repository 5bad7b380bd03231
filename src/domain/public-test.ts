/**
 * The public test's dates. An account's window is when its public-test keys read the free (P0) datasets
 * at no cost; each key also has its own expiry, within the window. Both are shown, each under its name.
 */
import type { ServiceFile } from '../config.ts';
import type { AccountRecord, KeyRecord } from '../store/port.ts';

const DAY_MS = 24 * 3_600_000;

/** When the whole public test ends (`free_public_test.ends_at`), or null for no end. */
export function publicTestEndsAt(config: ServiceFile): number | null {
  const endsAt = config.pricing.free_public_test.ends_at;
  return endsAt === null ? null : Date.parse(endsAt);
}

/** The instant the account's public-test window closes: start + window_days, or ends_at if sooner. */
export function publicTestWindowEnd(config: ServiceFile, account: AccountRecord): number | null {
  if (account.publicTestStartedAt === null) return null;
  const windowEnd = account.publicTestStartedAt + config.pricing.free_public_test.window_days * DAY_MS;
  const endsAt = publicTestEndsAt(config);
  return endsAt !== null && endsAt < windowEnd ? endsAt : windowEnd;
}

/**
 * When a key stops working: its own expiry, or for a public-test key the end of the public test if that
 * came sooner (an operator moved `ends_at` after the key was issued). The one expiry every face shows.
 */
export function keyExpiresAt(
  key: Pick<KeyRecord, 'kind' | 'expiresAt'>,
  publicTestEnd: number | null,
): number | null {
  if (key.kind !== 'public_test' || publicTestEnd === null) return key.expiresAt;
  return key.expiresAt === null || publicTestEnd < key.expiresAt ? publicTestEnd : key.expiresAt;
}
