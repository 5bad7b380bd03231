/** A key as its owner and operators see it: never its secret, except once when issued. */
import { z } from 'zod';
import { keyKinds } from '../domain/keys.ts';
import { formatMicros } from '../domain/money.ts';
import { keyExpiresAt } from '../domain/public-test.ts';
import type { KeyRecord } from '../store/port.ts';
import { iso, tokens } from './common.ts';

export const keyOut = z.object({
  id: z.string(),
  kind: z.enum(keyKinds),
  prefix: z.string().describe('The first characters of the key, to tell keys apart.'),
  name: z.string().nullable(),
  created_at: z.string(),
  expires_at: z
    .string()
    .nullable()
    .describe(
      "When the key stops working (null: never). A public-test key also stops at the end of the public test; the account's public-test window (GET /api/v1/me) is another date, shown apart.",
    ),
  revoked_at: z.string().nullable(),
  status: z.enum(['active', 'expired', 'revoked']),
  spending_caps: z
    .object({ daily: tokens.nullable(), monthly: tokens.nullable() })
    .describe('Tokens this key may burn per UTC day and month; null for no cap.'),
});

export const issuedKeyOut = keyOut.extend({
  key: z.string().describe('The key itself. It is shown once, now; only its SHA-256 digest is stored.'),
});

/**
 * A key as its owner sees it. `publicTestEnd` (publicTestEndsAt of the configuration) is passed wherever
 * a public-test key may be shown: its expires_at is then the instant it stops working, as authentication
 * decides it (keyExpiresAt).
 */
export function presentKey(
  key: KeyRecord,
  now: number,
  publicTestEnd: number | null = null,
): z.infer<typeof keyOut> {
  const expiresAt = keyExpiresAt(key, publicTestEnd);
  const status =
    key.revokedAt !== null ? 'revoked' : expiresAt !== null && expiresAt <= now ? 'expired' : 'active';
  return {
    id: key.id,
    kind: key.kind,
    prefix: key.displayPrefix,
    name: key.name,
    created_at: iso(key.createdAt) as string,
    expires_at: iso(expiresAt),
    revoked_at: iso(key.revokedAt),
    status,
    spending_caps: {
      daily: key.dailyCapMicros === null ? null : formatMicros(key.dailyCapMicros),
      monthly: key.monthlyCapMicros === null ? null : formatMicros(key.monthlyCapMicros),
    },
  };
}
