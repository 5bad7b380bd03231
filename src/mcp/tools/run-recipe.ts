/** run_recipe: a fixed multi-step read with a ready answer, metered once through Recipes. */
import { z } from 'zod';
import type { Pricing } from '../../domain/pricing.ts';
import { type Recipes, recipes as recipeList } from '../../domain/recipes.ts';
import { costView } from '../../views/cost.ts';
import { presentRecipeResult, recipeOut } from '../../views/recipes.ts';
import { csvOf, tokensOf } from '../raw-rows.ts';
import {
  COST_META_KEY,
  costFigures,
  costNote,
  defineTool,
  type McpTool,
  meteredMeta,
  recipeName,
  text,
} from '../tool-kit.ts';

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
    async run(args, call) {
      const result = await recipes.run(call.caller, call.requestId, args.recipe, { tz: args.tz });
      call.cost = costView(pricing, result.cost);
      const value = presentRecipeResult(result.value);
      const figures = costFigures(call.cost, recipes.listCost(args.recipe));
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
      return {
        content: [text(`${header}\n${table}`), text(costNote(figures))],
        structuredContent: value,
        _meta: meteredMeta(figures),
      };
    },
  });
}
