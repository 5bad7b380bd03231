/**
 * A read's cost as clients see it. REST renders it as the four cost headers, MCP as `_meta` and a text
 * line, the CLI and the Terminal as JSON: the figures are computed here once.
 */
import { z } from 'zod';
import type { CostFigures, Estimate } from '../domain/metering.ts';
import { formatMicros } from '../domain/money.ts';
import { costEur, type Pricing } from '../domain/pricing.ts';
import type { ReadCost } from '../domain/reads.ts';
import { tokens } from './common.ts';

/** A served request's cost, one name per figure wherever it is shown (REST, MCP, CLI, Terminal). */
export interface CostView {
  /** X-Token-Cost: after discount and surcharge; notional for zero-burn reads. */
  token_cost: string;
  /** X-Request-Tokens: what was burned. */
  tokens_burned: string;
  /** X-Request-Cost-EUR: the burn in euros. */
  cost_eur: string;
  /** X-Credits-Remaining: the wallet balance after the request. */
  credits_remaining: string;
  outcome: CostFigures['outcome'];
}

/** The figures of a cost whose burn is already in euros (`eur`). */
function costFiguresView(cost: CostFigures, eur: string): CostView {
  return {
    token_cost: formatMicros(cost.costMicros),
    tokens_burned: formatMicros(cost.burnedMicros),
    cost_eur: eur,
    credits_remaining: formatMicros(cost.balanceMicros),
    outcome: cost.outcome,
  };
}

export function costView(pricing: Pricing, cost: CostFigures): CostView {
  return costFiguresView(cost, costEur(pricing, cost.burnedMicros));
}

/** A metered read's cost: its burn comes in euros from the domain, no pricing needed here. */
export function readCostView(cost: ReadCost): CostView {
  return costFiguresView(cost, cost.costEur);
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
    'x-request-tokens': cost.tokens_burned,
    'x-request-cost-eur': cost.cost_eur,
    'x-credits-remaining': cost.credits_remaining,
  };
}

/** The `_meta` key of a metered MCP tool result: the four figures of the cost headers, and more. */
export const COST_META_KEY = 'tmd.example/cost';

/**
 * A served call's cost as a model reads it in `_meta`: the figures of the cost headers, named as
 * everywhere, and the list cost. `request_tokens` and `request_cost_eur` are the old names of
 * `tokens_burned` and `cost_eur`, kept because docs/mcp.md documented them.
 */
export function toolCostFigures(cost: CostView, listCost: number) {
  return {
    token_cost: cost.token_cost,
    tokens_burned: cost.tokens_burned,
    cost_eur: cost.cost_eur,
    credits_remaining: cost.credits_remaining,
    list_cost: String(listCost),
    outcome: cost.outcome,
    request_tokens: cost.tokens_burned,
    request_cost_eur: cost.cost_eur,
  };
}

export type ToolCost = ReturnType<typeof toolCostFigures>;

/** The one-line cost note a model reads: the same figures as the headers and `_meta`. */
export function costNote(figures: ToolCost): string {
  const why =
    figures.outcome === 'notional'
      ? ', notional: a public-test key burns nothing on P0 reads'
      : figures.outcome === 'grandfathered'
        ? ', grandfathered: served at zero burn (early_bird)'
        : '';
  return `Cost: ${figures.token_cost} tokens (list ${figures.list_cost}${why}); burned ${figures.tokens_burned} tokens = ${figures.cost_eur} EUR; ${figures.credits_remaining} tokens left.`;
}

/** The `_meta` of a metered tool result. */
export function meteredMeta(figures: ToolCost) {
  return { [COST_META_KEY]: figures };
}
