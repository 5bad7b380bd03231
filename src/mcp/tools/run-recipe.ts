/** run_recipe: a fixed multi-step read with a ready answer, metered once through Recipes. */
import { z } from 'zod';
import type { Pricing } from '../../domain/pricing.ts';
import { type Recipes, recipes as recipeList } from '../../domain/recipes.ts';
import { costNote, costView, meteredMeta, toolCostFigures } from '../../views/cost.ts';
import { csvOf, tokensOf } from '../../views/raw-rows.ts';
import { presentRecipeResult, recipeOut } from '../../views/recipes.ts';
import { ChargedFault, COST_META_KEY, defineTool, type McpTool, recipeName, text } from '../tool-kit.ts';

export function runRecipeTool(recipes: Recipes, pricing: Pricing): McpTool {
  const recipeCosts = recipeList.map((r) => `${r.name} costs ${recipes.listCost(r.name)} tokens`);
  return defineTool({
    name: 'run_recipe',
    title: 'Run a recipe',
    description: `Run a fixed multi-step read with a ready answer: the same as GET /api/v1/recipes/{name}. Metered once, as the sum of its reads' list costs less your tier discount (${recipeCosts.join('; ')}). A refused call burns nothing; the cost is in the last text line and in _meta["${COST_META_KEY}"].`,
    metered: true,
    input: z.strictObject({
      recipe: recipeName,
      tz: z
        .string()
        .max(64)
        .optional()
        .describe('calendar-tonight: IANA time zone (default America/New_York).'),
    }),
    output: recipeOut,
    async run(args, context) {
      const result = await recipes.run(context.caller, context.requestId, args.recipe, { tz: args.tz });
      const cost = costView(pricing, result.cost);
      try {
        const value = presentRecipeResult(result.value);
        const figures = toolCostFigures(cost, recipes.listCost(args.recipe));
        const items = value.data;
        const columns = items[0] ? Object.keys(items[0]) : [];
        const table =
          items.length > 0
            ? csvOf(
                columns,
                items.map((item) => tokensOf(item, columns)),
              )
            : '';
        const header = Object.entries(value.meta)
          .map(([k, v]) => `${k}: ${String(v)}`)
          .join(', ');
        const toolResult = {
          content: [text(`${header}\n${table}`), text(costNote(figures))],
          structuredContent: value,
          _meta: meteredMeta(figures),
        };
        return { result: toolResult, cost, raw: null };
      } catch (error) {
        throw new ChargedFault(error, cost);
      }
    },
  });
}
