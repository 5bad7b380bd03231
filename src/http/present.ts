/** Turns domain records into response bodies: ISO times, token amounts as exact decimal strings. */
import type { KeyRecord } from '../store/port.ts';

export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function presentKey(key: KeyRecord, now: number) {
  const status =
    key.revokedAt !== null
      ? 'revoked'
      : key.expiresAt !== null && key.expiresAt <= now
        ? 'expired'
        : 'active';
  return {
    id: key.id,
    kind: key.kind,
    prefix: key.displayPrefix,
    name: key.name,
    created_at: iso(key.createdAt) as string,
    expires_at: iso(key.expiresAt),
    revoked_at: iso(key.revokedAt),
    status: status as 'active' | 'expired' | 'revoked',
  };
}
