/** estimate_cost: what a read or recipe would cost the caller now, and whether it would be refused. Free. */
import { z } from 'zod';
import type { Pricing } from '../../domain/pricing.ts';
import type { MeteredReads } from '../../domain/reads.ts';
import type { Recipes } from '../../domain/recipes.ts';
import { AppError } from '../../errors.ts';
import { estimateOut, presentEstimate } from '../../views/cost.ts';
import { datasetKey, defineTool, type McpTool, recipeName, text } from '../tool-kit.ts';

export function estimateCostTool(reads: MeteredReads, recipes: Recipes, pricing: Pricing): McpTool {
  return defineTool({
    name: 'estimate_cost',
    title: 'Estimate a cost',
    description:
      'What one read_dataset call on a dataset (or one run_recipe call) would cost you now, and whether it would be refused, without reading or burning anything. Free: burns no tokens. Give exactly one of dataset or recipe.',
    metered: false,
    input: z.strictObject({
      dataset: datasetKey.optional(),
      recipe: recipeName.optional(),
    }),
    output: estimateOut,
    async run(args, context) {
      if ((args.dataset === undefined) === (args.recipe === undefined)) {
        throw new AppError('invalid_request', 'Give exactly one of dataset or recipe.', {
          errors: [{ path: 'dataset', message: 'give exactly one of dataset or recipe' }],
        });
      }
      const estimate =
        args.dataset !== undefined
          ? await reads.estimate(context.caller, args.dataset)
          : await recipes.estimate(context.caller, args.recipe as string);
      const e = presentEstimate(pricing, estimate);
      const verdict =
        e.would_refuse === null
          ? `It would burn ${e.tokens_burned} tokens (${e.cost_eur} EUR), leaving ${e.balance_after}.`
          : e.would_refuse === 'not_entitled'
            ? 'It would be refused (402 not_entitled): your key reads only P0 datasets.'
            : e.would_refuse === 'insufficient_tokens'
              ? 'It would be refused (402 insufficient_tokens): your wallet cannot cover it.'
              : `It would be refused (402 spending_cap_reached). ${e.refusal_detail}`;
      return {
        content: [
          text(
            `${e.target}: costs you ${e.token_cost} tokens (list ${e.list_cost}). ${verdict} Nothing was burned.`,
          ),
        ],
        structuredContent: e,
      };
    },
  });
}
