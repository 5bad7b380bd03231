/** Recipes: a list (free) and each recipe (metered once, as the sum of its reads' list costs). */
import { z } from 'zod';
import { recipes } from '../../domain/recipes.ts';
import { chooseType } from '../../edge/accept.ts';
import { publicMetadata } from '../../edge/conventions.ts';
import type { TypedApp } from '../../edge/server.ts';
import { AppError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { costHeaders, costView } from '../../views/cost.ts';
import { presentRecipeInfo, presentRecipeResult, recipeInfoOut, recipeOut } from '../../views/recipes.ts';
import { edge, problems } from '../schemas.ts';

export function registerRecipeRoutes(app: TypedApp, deps: Services): void {
  app.get(
    '/api/v1/recipes',
    {
      ...publicMetadata,
      schema: {
        operationId: 'listRecipes',
        tags: ['recipes'],
        summary: 'The recipes, what each reads and what it costs (free to call)',
        response: {
          200: z.object({ data: z.array(recipeInfoOut), meta: z.object({ count: z.int() }) }),
          ...problems(...edge.optional),
        },
      },
    },
    async () => ({
      data: recipes.map((r) =>
        presentRecipeInfo(
          r,
          deps.recipes.listCost(r.name),
          r.reads.every((key) => deps.reads.resolve(key).p0),
        ),
      ),
      meta: { count: recipes.length },
    }),
  );

  app.get(
    '/api/v1/recipes/:name',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'runRecipe',
        tags: ['recipes'],
        summary: 'Run a recipe (metered once: the sum of its reads list costs, discounted like any read)',
        security: [{ bearer: [] }, { apiKey: [] }],
        params: z.object({ name: z.string().max(64) }),
        querystring: z.strictObject({
          tz: z
            .string()
            .max(64)
            .optional()
            .describe('calendar-tonight: IANA time zone (default America/New_York).'),
        }),
        response: {
          200: recipeOut,
          ...problems(
            ...edge.required,
            'invalid_request',
            'not_entitled',
            'insufficient_tokens',
            'spending_cap_reached',
            'recipe_not_found',
            'not_acceptable',
          ),
        },
      },
    },
    async (request, reply) => {
      const caller = request.caller;
      if (!caller) throw new AppError('missing_credentials', 'This endpoint needs a key.');
      chooseType(request.headers.accept, ['application/json']);
      const result = await deps.recipes.run(caller, request.id, request.params.name, {
        tz: request.query.tz,
      });
      reply.headers(costHeaders(costView(deps.pricing, result.cost)));
      return presentRecipeResult(result.value);
    },
  );
}
