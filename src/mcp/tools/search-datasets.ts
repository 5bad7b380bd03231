/** search_datasets: the catalog searched by words, domain, P0 flag and list cost. Free. */
import { z } from 'zod';
import type { Catalog } from '../../catalog/catalog.ts';
import type { MeteredReads } from '../../domain/reads.ts';
import { entryOut, presentDataset } from '../../views/catalog.ts';
import { defineTool, type McpTool, text } from '../tool-kit.ts';

export function searchDatasetsTool(catalog: Catalog, reads: MeteredReads): McpTool {
  return defineTool({
    name: 'search_datasets',
    title: 'Search datasets',
    description:
      'Find datasets by words, domain, P0 (free-key) status or list cost. Free: burns no tokens. Each result gives the key to pass to describe_dataset and read_dataset, its list cost in tokens per read and its P0 flag.',
    metered: false,
    input: z.strictObject({
      query: z
        .string()
        .max(200)
        .optional()
        .describe(
          'Words that must each match a dataset (its key, title, description, field names, or an entity it holds such as a ticker or series id), e.g. "treasury yield" or "AAPL". Best matches first.',
        ),
      domain: z.string().max(64).optional().describe('Only datasets in this domain, e.g. "rates".'),
      free_only: z
        .boolean()
        .optional()
        .describe(
          'true: only P0 datasets, the ones sandbox and public-test keys may read (public-test keys burn 0 on them); false: only the others (as free=false on GET /api/v1/catalog); absent: both.',
        ),
      max_cost: z.int().min(0).optional().describe('Only datasets whose list cost per read is at most this.'),
      limit: z.int().min(1).max(500).optional().describe('At most this many results (default 50).'),
    }),
    output: z.object({
      data: z.array(entryOut),
      meta: z.object({
        count: z.int(),
        total: z.int().describe('Matches before the limit.'),
      }),
    }),
    async run(args) {
      const found = catalog.search({
        domain: args.domain,
        p0: args.free_only,
        maxCost: args.max_cost,
        q: args.query,
      });
      const page = found.slice(0, args.limit ?? 50);
      const lines = page.map((e) => `${e.key} | ${e.listCost} | ${e.p0 ? 'P0' : '-'} | ${e.dataset.title}`);
      const more =
        found.length > page.length ? ` (${found.length - page.length} more: raise limit or narrow)` : '';
      const none =
        found.length === 0
          ? `No dataset matches. Every word of query must match a dataset's key, title, description, fields or entities: try fewer or other words. Domains: ${[...new Set(catalog.entries().map((e) => e.domain))].join(', ')}.`
          : null;
      return {
        content: [
          text(
            none ??
              `${page.length} of ${found.length} datasets${more}. key | list cost (tokens per read) | P0 | title\n${lines.join('\n')}`,
          ),
        ],
        structuredContent: {
          data: await Promise.all(page.map(async (e) => presentDataset(e, await reads.sourceOf(e)))),
          meta: { count: page.length, total: found.length },
        },
      };
    },
  });
}
