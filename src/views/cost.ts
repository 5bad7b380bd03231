/**
 * A read's cost as clients see it. REST renders it as the four cost headers, MCP as `_meta` and a text
 * line, the CLI and the Terminal as JSON: the figures are computed here once.
 */
import { z } from 'zod';
import type { CostFigures, Estimate } from '../domain/metering.ts';
import { formatMicros } from '../domain/money.ts';
import { costEur, type Pricing } from '../domain/pricing.ts';
import { tokens } from './common.ts';

export interface CostView {
  /** X-Token-Cost: after discount and surcharge; notional for zero-burn reads. */
  token_cost: string;
  /** X-Request-Tokens: what was burned. */
  request_tokens: string;
  /** X-Request-Cost-EUR: the burn in euros. */
  request_cost_eur: string;
  /** X-Credits-Remaining: the wallet balance after the request. */
  credits_remaining: string;
  outcome: CostFigures['outcome'];
}

export function costView(pricing: Pricing, cost: CostFigures): CostView {
  return {
    token_cost: formatMicros(cost.costMicros),
    request_tokens: formatMicros(cost.burnedMicros),
    request_cost_eur: costEur(pricing, cost.burnedMicros),
    credits_remaining: formatMicros(cost.balanceMicros),
    outcome: cost.outcome,
  };
}

export const quoteOut = z.object({
  list_cost: tokens.describe('Tokens per read before the loyalty discount.'),
  token_cost: tokens.describe(
    'What the call costs you: list cost less your tier discount (×1.35 from the Terminal).',
  ),
  tokens_burned: tokens.describe(
    'What the call would burn from your wallet: 0 for public-test keys on P0 data.',
  ),
  cost_eur: z.string().describe('tokens_burned × 0.1 EUR.'),
  entitled: z.boolean().describe('false: your key may not read it (402 not_entitled).'),
});

export const estimateOut = quoteOut.extend({
  target: z.string().describe('The dataset key, or recipe:<name>.'),
  balance: tokens.describe('Your wallet balance now.'),
  balance_after: tokens.describe('Your wallet balance after such a call.'),
  would_refuse: z
    .enum(['not_entitled', 'insufficient_tokens', 'spending_cap_reached'])
    .nullable()
    .describe(
      "The refusal such a call would get now, or null; spending_cap_reached: it would pass your key's daily or monthly cap.",
    ),
  refusal_detail: z
    .string()
    .nullable()
    .describe('What the refusal would say (the problem detail of the 402), or null.'),
  spending_cap: z
    .object({
      period: z.enum(['day', 'month']),
      cap_tokens: tokens,
      spent_tokens: tokens,
      reset_at: z.string().describe('When the cap counts from zero again (ISO 8601, UTC).'),
    })
    .optional()
    .describe(
      'With spending_cap_reached: the cap that would refuse, what the key burned under it, and its reset.',
    ),
});

export function presentQuote(pricing: Pricing, e: Estimate): z.infer<typeof quoteOut> {
  return {
    list_cost: String(e.listCost),
    token_cost: formatMicros(e.costMicros),
    tokens_burned: formatMicros(e.burnMicros),
    cost_eur: costEur(pricing, e.burnMicros),
    entitled: e.entitled,
  };
}

export function presentEstimate(pricing: Pricing, e: Estimate): z.infer<typeof estimateOut> {
  const code = e.refusal?.code;
  const wouldRefuse =
    code === 'not_entitled' || code === 'insufficient_tokens' || code === 'spending_cap_reached'
      ? code
      : null;
  const extras = e.refusal?.extras ?? {};
  return {
    ...presentQuote(pricing, e),
    target: e.target,
    balance: formatMicros(e.balanceMicros),
    balance_after: formatMicros(e.balanceAfterMicros),
    would_refuse: wouldRefuse,
    refusal_detail: e.refusal?.message ?? null,
    ...(code === 'spending_cap_reached'
      ? {
          spending_cap: {
            period: extras.period as 'day' | 'month',
            cap_tokens: extras.cap_tokens as string,
            spent_tokens: extras.spent_tokens as string,
            reset_at: extras.reset_at as string,
          },
        }
      : {}),
  };
}

/** The four cost headers of DECISIONS, sent on every metered HTTP answer (REST and MCP alike). */
export function costHeaders(cost: CostView): Record<string, string> {
  return {
    'x-token-cost': cost.token_cost,
    'x-request-tokens': cost.request_tokens,
    'x-request-cost-eur': cost.request_cost_eur,
    'x-credits-remaining': cost.credits_remaining,
  };
}
