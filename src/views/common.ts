/** Value shapes every view shares: exact token amounts as decimal strings, times as ISO 8601. */
import { z } from 'zod';

export const tokens = z
  .string()
  .regex(/^-?\d+(\.\d{1,6})?$/)
  .describe('An exact token amount as a decimal string.');

export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Free text a client names things with (a key's name, a memo): stored as given, so no control characters. */
export const label = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^\P{Cc}*$/u, 'must not contain control characters');

/** A key's expiry: an ISO 8601 time with its zone, Z or an offset (never the server's local time). */
export const keyExpiry = z.iso
  .datetime({ offset: true })
  .refine((v) => Date.parse(v) < Date.UTC(10000, 0, 1), 'must be before the year 10000')
  .optional()
  .describe(
    'Optional expiry, an ISO 8601 time with Z or an offset (2027-01-01T00:00:00+01:00); never by default.',
  );

/** The one envelope of every list: the items, then what describes the page. */
export const listOf = <T extends z.ZodType, M extends z.ZodRawShape>(item: T, meta: M) =>
  z.object({ data: z.array(item), meta: z.object(meta) });
