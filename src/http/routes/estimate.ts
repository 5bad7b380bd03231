/** What a read would cost the caller, before reading: free, and the same figures as the MCP estimate_cost tool. */
import { z } from 'zod';
import type { Caller } from '../../domain/caller.ts';
import type { TypedApp } from '../../edge/server.ts';
import { AppError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { estimateOut, presentEstimate } from '../../views/cost.ts';
import { edge, problems } from '../schemas.ts';

export function registerEstimateRoutes(app: TypedApp, deps: Services): void {
  app.get(
    '/api/v1/estimate',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'estimateCost',
        tags: ['data'],
        summary:
          'What one read of a dataset (or one recipe run) would cost you now, and whether it would be refused',
        description:
          'Free: reads and burns nothing. Priced for the calling credential and channel (a Terminal session pays the Terminal surcharge). Give exactly one of dataset or recipe.',
        security: [{ bearer: [] }, { apiKey: [] }],
        querystring: z.strictObject({
          dataset: z.string().min(3).max(200).optional().describe('A dataset key, domain/name.'),
          recipe: z.string().max(64).optional().describe('A recipe name.'),
        }),
        response: {
          200: estimateOut,
          ...problems(...edge.required, 'invalid_request', 'dataset_not_found', 'recipe_not_found'),
        },
      },
    },
    async (request) => {
      const { dataset, recipe } = request.query;
      if ((dataset === undefined) === (recipe === undefined)) {
        throw new AppError('invalid_request', 'Give exactly one of dataset or recipe.', {
          errors: [{ path: 'dataset', message: 'give exactly one of dataset or recipe' }],
        });
      }
      const caller = request.caller as Caller;
      const estimate =
        dataset !== undefined
          ? await deps.reads.estimate(caller, dataset)
          : await deps.recipes.estimate(caller, recipe as string);
      return presentEstimate(deps.pricing, estimate);
    },
  );
}
