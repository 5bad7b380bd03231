/** What an operator gives: token amounts, caps, a new account, a credit's kind and key, the operator token. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { decimalToMicros } from './money.ts';

export const MAX_CREDIT_TOKENS = 1_000_000_000n;
/** What one wallet may hold: far below what a 64-bit balance can count (9.2 x 10^12 tokens). */
export const MAX_BALANCE_TOKENS = 1_000_000_000_000n;

/** A positive token amount: an integer, or a decimal string with at most 6 decimals. */
export const tokenAmount = z
  .union([
    z.int().positive(),
    z.string().regex(/^\d{1,10}(\.\d{1,6})?$/, 'must be a decimal with at most 6 decimals'),
  ])
  .transform((v) => decimalToMicros(String(v)))
  .refine((micros) => micros > 0n, 'must be more than 0')
  .refine(
    (micros) => micros <= MAX_CREDIT_TOKENS * 1_000_000n,
    `must be at most ${MAX_CREDIT_TOKENS} tokens`,
  );

/** A cap: a token amount, or null to remove it. */
export const capAmount = tokenAmount.nullable();

export const newAccountInput = z.strictObject({
  email: z.email().max(254),
  password: z.string().min(10, 'must be at least 10 characters').max(200).optional(),
});

export const creditKinds = ['topup', 'grant', 'refund', 'adjustment'] as const;
export type OperatorCreditKind = (typeof creditKinds)[number];

export const idempotencyKeyPattern = /^[\x21-\x7e]{1,200}$/;

/** Constant-time check of a presented operator token: digests of equal length are compared. */
export function adminTokenMatches(expected: string, presented: string): boolean {
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(presented).digest();
  return timingSafeEqual(a, b);
}
