/** Response schemas shared by the routes (they document; handlers build the bodies). */
import { z } from 'zod';
import { problemSchema } from '../edge/problem.ts';
import { type ErrorCode, errorCatalogue } from '../errors.ts';

export { bodyCodes, edge } from '../edge/refusals.ts';

/**
 * A whole number in a query string: digits only ('' and 0x10 are not numbers, as z.coerce would take
 * them for 0 and 16), then bounded.
 */
export const queryInt = (min: number, max: number, defaultValue?: number) =>
  z
    .string()
    .regex(/^\d{1,15}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.int().min(min).max(max))
    // The OpenAPI document shows what a client sends: an integer within the bounds.
    .meta({
      type: 'integer',
      minimum: min,
      maximum: max,
      ...(defaultValue !== undefined && { default: defaultValue }),
    });

/**
 * The problem body, documented once (components.schemas.Problem) with what each extra member is for;
 * every problem response refers to it.
 */
const problem = problemSchema
  .extend({
    retry_after: problemSchema.shape.retry_after.describe(
      '429: seconds until a retry can succeed, as in Retry-After.',
    ),
    required_tokens: problemSchema.shape.required_tokens.describe(
      '402 insufficient_tokens, spending_cap_reached: what the request costs.',
    ),
    balance: problemSchema.shape.balance.describe('402 insufficient_tokens: the wallet balance.'),
    reset_at: z.string().optional().describe('402 spending_cap_reached: when the cap resets.'),
    suggestions: problemSchema.shape.suggestions.describe('404 dataset_not_found: close dataset keys.'),
    errors: problemSchema.shape.errors.describe('400 invalid_request: each bad parameter or field.'),
  })
  .meta({ id: 'Problem', description: problemSchema.description });

/** application/problem+json responses for the codes a route can answer: one per status, naming its codes. */
export function problems(...codes: ErrorCode[]) {
  const out: Record<number, { description: string; content: Record<string, { schema: z.ZodType }> }> = {};
  const statuses = new Set(codes.map((code) => errorCatalogue[code].status));
  for (const status of statuses) {
    const named = (Object.keys(errorCatalogue) as ErrorCode[]).filter(
      (code) => errorCatalogue[code].status === status && codes.includes(code),
    );
    out[status] = {
      description: `Problem details. Codes: ${named.join(', ')}.`,
      content: { 'application/problem+json': { schema: problem } },
    };
  }
  return out;
}
