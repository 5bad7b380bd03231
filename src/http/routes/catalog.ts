/** The catalog: free to read, with or without a key. */

import { z } from 'zod';
import { publicMetadata } from '../../edge/conventions.ts';
import type { TypedApp } from '../../edge/server.ts';
import type { Services } from '../../services.ts';
import { datasetOut, describeDataset, entryOut, presentDataset } from '../../views/catalog.ts';
import { edge, problems, queryInt } from '../schemas.ts';

export function registerCatalogRoutes(app: TypedApp, deps: Services): void {
  app.get(
    '/api/v1/catalog',
    {
      ...publicMetadata,
      schema: {
        operationId: 'listCatalog',
        tags: ['catalog'],
        summary: 'Every dataset key with its cost and P0 flag (free to call)',
        querystring: z.strictObject({
          domain: z.string().max(64).optional().describe('Only keys in this domain.'),
          free: z.enum(['true', 'false']).optional().describe('true: only P0 keys (readable by free keys).'),
          max_cost: queryInt(0, Number.MAX_SAFE_INTEGER)
            .optional()
            .describe('Only keys whose list cost is at most this (a whole number).'),
          q: z
            .string()
            .max(200)
            .optional()
            .describe(
              'Words that must each match a dataset: its key, title, description or field names, or an entity it holds (AAPL, DGS10). The best matches come first.',
            ),
        }),
        response: {
          200: z.object({ data: z.array(entryOut), meta: z.object({ count: z.int() }) }),
          ...problems(...edge.optional, 'invalid_request'),
        },
      },
    },
    async (request) => {
      const { domain, free, max_cost: maxCost, q } = request.query;
      const found = deps.catalog.search({
        domain,
        p0: free === undefined ? undefined : free === 'true',
        maxCost,
        q,
      });
      const data = await Promise.all(found.map(async (e) => presentDataset(e, await deps.reads.sourceOf(e))));
      return { data, meta: { count: data.length } };
    },
  );

  app.get(
    '/api/v1/catalog/:domain/:name',
    {
      ...publicMetadata,
      schema: {
        operationId: 'describeDataset',
        tags: ['catalog'],
        summary: 'One dataset: fields, time field, entity filters, cost, P0 flag, aliases, an example read',
        params: z.object({ domain: z.string().max(64), name: z.string().max(128) }),
        response: {
          200: datasetOut,
          ...problems(...edge.optional, 'invalid_request', 'dataset_not_found'),
        },
      },
    },
    async (request) => {
      const entry = deps.reads.resolve(`${request.params.domain}/${request.params.name}`);
      return describeDataset(entry, await deps.reads.status(entry));
    },
  );
}
