/**
 * read_dataset: one metered page of a dataset, the same read as REST's (its request built by the same
 * readRequestFrom), encoded as a tool result by views/read-encoders.ts.
 */
import { z } from 'zod';
import type { Catalog } from '../../catalog/catalog.ts';
import { readOptionsShape, SCAN_CAP } from '../../catalog/read-plan.ts';
import { type MeteredReads, readRequestFrom } from '../../domain/reads.ts';
import { readCostView } from '../../views/cost.ts';
import { encodeReadTool } from '../../views/read-encoders.ts';
import { readEnvelope } from '../../views/reads.ts';
import { ChargedFault, COST_META_KEY, datasetKey, defineTool, type McpTool } from '../tool-kit.ts';

/**
 * The most characters of rows one page's text carries: about 20,000 model tokens at three characters a
 * token (numbers and commas tokenize densely), under the ~25,000 at which clients cut a tool result.
 */
export const PAGE_TEXT_BUDGET = 60_000;

/** A filter value as an agent may write it: text or a list as on REST, or a JSON number or boolean. */
const mcpScalar = z.union([z.string().max(4096), z.number(), z.boolean()]);
const mcpFilterValue = z.union([mcpScalar, z.array(mcpScalar).max(100)]);

export function readDatasetTool(reads: MeteredReads, catalog: Catalog, eurPerToken: number): McpTool {
  const listCosts = [...new Set(catalog.entries().map((e) => e.listCost))].sort((a, b) => a - b);
  return defineTool({
    name: 'read_dataset',
    title: 'Read a dataset page',
    description: `Read one page (up to 1000 rows, and at most about 20,000 tokens of text: a page of wide rows is cut short and next_cursor continues it) of a dataset: the same read as GET /api/v1/data/{domain}/{name}. Ask for what you need: \`fields\` with only the columns you will use and \`from\`/\`to\` for the dates you need fit more rows in a page and take fewer paid pages. Metered: every call burns the dataset's list cost (${listCosts.join(', ')} tokens; 1 token = ${eurPerToken} EUR) less your loyalty-tier discount, whatever the page size; public-test keys burn 0 on P0 datasets (the cost is still reported). A refused call burns nothing. Rows come back as CSV text and as structured data; the cost, then how to get the next page and what it costs, are in the last text lines and the cost in _meta["${COST_META_KEY}"]. Check the price first with describe_dataset or estimate_cost.`,
    metered: true,
    input: z.strictObject({
      dataset: datasetKey,
      filters: z
        .record(z.string().max(64), mcpFilterValue)
        .optional()
        .describe(
          `Filters by field, e.g. {"symbol": ["AAPL", "MSFT"]} or {"symbol": "AAPL,MSFT"}; number and boolean fields also take JSON numbers and booleans ({"maturity_months": 120}, {"is_fomc_meeting": true}) and match by value. Entity fields (describe_dataset lists them and their types) are indexed; a filter on any other field is checked on at most ${SCAN_CAP} stored rows per call, and meta.next_cursor then continues the scan even when the page is short or empty.`,
        ),
      from: readOptionsShape.from.describe(
        'Earliest time on the time field, inclusive: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ.',
      ),
      to: readOptionsShape.to.describe('Latest time on the time field, inclusive for a date.'),
      fields: readOptionsShape.fields.describe(
        'Comma-separated field names to return (describe_dataset lists them); all fields when absent. Fewer fields fit more rows in a page.',
      ),
      limit: readOptionsShape.limit,
      cursor: readOptionsShape.cursor.describe(
        'next_cursor of the previous page, with the other arguments unchanged. Each page is one read.',
      ),
      sort: readOptionsShape.sort,
    }),
    output: readEnvelope,
    async run(args, context) {
      const params = readRequestFrom(args, 'values');
      const read = await reads.read(context.caller, context.requestId, args.dataset, params, {
        as: 'csv-json',
        maxChars: PAGE_TEXT_BUDGET,
      });
      try {
        return encodeReadTool(read, params);
      } catch (error) {
        throw new ChargedFault(error, readCostView(read.cost));
      }
    },
  });
}
