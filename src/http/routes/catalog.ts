/** The catalog: free to read, with or without a key. */

import { z } from 'zod';
import type { Catalog, CatalogEntry } from '../../catalog/catalog.ts';
import { quoteValue } from '../../catalog/read-plan.ts';
import { fieldTypes } from '../../catalog/types.ts';
import type { Deps } from '../../deps.ts';
import type { TypedApp } from '../app.ts';
import { edge, problems, queryInt } from '../schemas.ts';

export const entryOut = z.object({
  key: z.string(),
  domain: z.string(),
  name: z.string(),
  title: z.string(),
  description: z.string(),
  source: z.string(),
  frequency: z.string(),
  list_cost: z.int().describe('Tokens per read before loyalty discount.'),
  p0: z.boolean().describe('Readable by sandbox and public-test keys (free domains).'),
  canonical_key: z.string(),
  aliases: z
    .array(z.string())
    .describe('Every key that serves the same data; each keeps its own price and P0 flag.'),
  time_field: z.string(),
  entity_fields: z.array(z.string()),
});

export const fieldOut = z.object({
  name: z.string(),
  type: z.enum(fieldTypes),
  unit: z.string().nullable(),
  description: z.string(),
});

export function presentEntry(entry: CatalogEntry) {
  const d = entry.dataset;
  return {
    key: entry.key,
    domain: entry.domain,
    name: entry.name,
    title: d.title,
    description: d.description,
    source: d.source,
    frequency: d.frequency,
    list_cost: entry.listCost,
    p0: entry.p0,
    canonical_key: d.key,
    aliases: [d.key, ...d.aliases].filter((k) => k !== entry.key),
    time_field: d.time_field,
    entity_fields: [...d.entity_fields],
  };
}

export function exampleRead(entry: CatalogEntry): string {
  const entity = entry.dataset.entity_fields[0];
  const field = entry.dataset.fields.find((f) => f.name === entity);
  const value = field?.sample?.values?.[0];
  const filter =
    entity && value !== undefined ? `${entity}=${encodeURIComponent(quoteValue(String(value)))}&` : '';
  return `/api/v1/data/${entry.key}?${filter}limit=10`;
}

export function describeEntry(entry: CatalogEntry) {
  return {
    ...presentEntry(entry),
    fields: entry.dataset.fields.map((f) => ({
      name: f.name,
      type: f.type,
      unit: f.unit ?? null,
      description: f.description,
    })),
    example: exampleRead(entry),
  };
}

export interface CatalogFilters {
  domain?: string | undefined;
  /** true: only P0 keys; false: only the others. */
  p0?: boolean | undefined;
  /** Only keys whose list cost is at most this. */
  maxCost?: number | undefined;
  /** Words that must all appear in the key, title or description. */
  q?: string | undefined;
}

/** The catalog search behind GET /api/v1/catalog and the MCP search_datasets tool. */
export function searchCatalog(catalog: Catalog, filters: CatalogFilters): CatalogEntry[] {
  const { domain, p0, maxCost, q } = filters;
  const words = (q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  return catalog
    .entries()
    .filter((e) => domain === undefined || e.domain === domain)
    .filter((e) => p0 === undefined || e.p0 === p0)
    .filter((e) => maxCost === undefined || e.listCost <= maxCost)
    .filter((e) => {
      const text = `${e.key} ${e.dataset.title} ${e.dataset.description}`.toLowerCase();
      return words.every((w) => text.includes(w));
    });
}

export const datasetOut = entryOut.extend({ fields: z.array(fieldOut), example: z.string() });

export function registerCatalogRoutes(app: TypedApp, deps: Deps): void {
  app.get(
    '/api/v1/catalog',
    {
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
            .describe('Words that must appear in the key, title or description.'),
        }),
        response: {
          200: z.object({ data: z.array(entryOut), meta: z.object({ count: z.int() }) }),
          ...problems(...edge.optional, 'invalid_request'),
        },
      },
    },
    async (request) => {
      const { domain, free, max_cost: maxCost, q } = request.query;
      const data = searchCatalog(deps.catalog, {
        domain,
        p0: free === undefined ? undefined : free === 'true',
        maxCost,
        q,
      }).map(presentEntry);
      return { data, meta: { count: data.length } };
    },
  );

  app.get(
    '/api/v1/catalog/:domain/:name',
    {
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
    async (request) => describeEntry(deps.reads.resolve(`${request.params.domain}/${request.params.name}`)),
  );
}
