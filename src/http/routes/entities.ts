/** GET /api/v1/catalog/{domain}/{name}/entities: values to suggest for a dataset's entity filters. */
import { z } from 'zod';
import { entitySuggestions } from '../../catalog/entity-suggestions.ts';
import type { TypedApp } from '../../edge/server.ts';
import type { Services } from '../../services.ts';
import { edge, problems } from '../schemas.ts';

export function registerEntityRoutes(app: TypedApp, deps: Services): void {
  app.get(
    '/api/v1/catalog/:domain/:name/entities',
    {
      schema: {
        operationId: 'suggestEntities',
        tags: ['catalog'],
        summary: "Values to suggest for a dataset's entity filters (free to call)",
        description:
          "The catalog's values for each entity field (symbols, series ids, market codes): the ones sample rows are made of. Imported rows may hold others; any value can be filtered on.",
        params: z.object({ domain: z.string().max(64), name: z.string().max(128) }),
        response: {
          200: z.object({
            dataset: z.string(),
            entities: z.record(z.string(), z.array(z.string())),
          }),
          ...problems(...edge.optional, 'invalid_request', 'dataset_not_found'),
        },
      },
    },
    async (request) => {
      const entry = deps.reads.resolve(`${request.params.domain}/${request.params.name}`);
      return { dataset: entry.key, entities: entitySuggestions(entry) };
    },
  );
}
