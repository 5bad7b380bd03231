/** Response schemas shared by the routes (they document; handlers build the bodies). */
import { z } from 'zod';
import { type ErrorCode, errorCatalogue } from '../errors.ts';
import { problemSchema } from './problem.ts';

export const tokens = z
  .string()
  .regex(/^-?\d+(\.\d{1,6})?$/)
  .describe('An exact token amount as a decimal string.');

/** Problem responses for the given statuses, each described by the codes it can carry. */
export function problems(...statuses: number[]) {
  const out: Record<number, z.ZodType> = {};
  for (const status of statuses) {
    const codes = (Object.keys(errorCatalogue) as ErrorCode[]).filter(
      (c) => errorCatalogue[c].status === status,
    );
    out[status] = problemSchema.describe(`Problem details. Codes: ${codes.join(', ')}.`);
  }
  return out;
}

export const keyOut = z.object({
  id: z.string(),
  kind: z.enum(['sandbox', 'public_test', 'live']),
  prefix: z.string().describe('The first characters of the key, to tell keys apart.'),
  name: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  status: z.enum(['active', 'expired', 'revoked']),
  spending_caps: z
    .object({ daily: tokens.nullable(), monthly: tokens.nullable() })
    .describe('Tokens this key may burn per UTC day and month; null for no cap.'),
});

export const issuedKeyOut = keyOut.extend({
  key: z.string().describe('The key itself. It is shown once, now; only its SHA-256 digest is stored.'),
});
