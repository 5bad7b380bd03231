/**
 * read_dataset: one metered page of a dataset, the same read as REST's, through DataReads. The rows and
 * the page text go out as placeholders the route fills with their stored JSON (rawJson).
 */
import { z } from 'zod';
import type { Catalog } from '../../catalog/catalog.ts';
import {
  DEFAULT_LIMIT,
  quoteValue,
  type ReadParams,
  readOptionsShape,
  SCAN_CAP,
} from '../../catalog/read-plan.ts';
import type { Pricing } from '../../domain/pricing.ts';
import type { DataReads } from '../../domain/reads.ts';
import { costView } from '../../views/cost.ts';
import { readEnvelope, readMeta } from '../../views/reads.ts';
import { csvOf, csvOfRows, csvTextJson, jsonOf, rowTokens } from '../raw-rows.ts';
import {
  COST_META_KEY,
  costFigures,
  costNote,
  datasetKey,
  defineTool,
  type McpTool,
  meteredMeta,
  rawJson,
  text,
} from '../tool-kit.ts';

/**
 * The most characters of rows one page's text carries: about 20,000 model tokens at three characters a
 * token (numbers and commas tokenize densely), under the ~25,000 at which clients cut a tool result.
 */
export const PAGE_TEXT_BUDGET = 60_000;

/** A filter value as an agent may write it: text or a list as on REST, or a JSON number or boolean. */
const mcpScalar = z.union([z.string().max(4096), z.number(), z.boolean()]);
const mcpFilterValue = z.union([mcpScalar, z.array(mcpScalar).max(100)]);

export function readDatasetTool(
  reads: DataReads,
  catalog: Catalog,
  pricing: Pricing,
  eurPerToken: number,
): McpTool {
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
    async run(args, call) {
      const filters: ReadParams['filters'] = {};
      for (const [name, value] of Object.entries(args.filters ?? {})) {
        // An array holds the values themselves (a comma in one is part of it); a string is a list; a
        // JSON number or boolean is one value of that type (planRead checks it against the field's).
        filters[name] = Array.isArray(value)
          ? value.map((v) => (typeof v === 'string' ? quoteValue(v) : v))
          : [value];
      }
      const params: ReadParams = {
        filters,
        from: args.from,
        to: args.to,
        fields: args.fields?.split(','),
        limit: args.limit ?? DEFAULT_LIMIT,
        cursor: args.cursor,
        sort: args.sort ?? 'desc',
      };
      const result = await reads.read(call.caller, call.requestId, args.dataset, params, {
        as: 'csv-json',
        maxChars: PAGE_TEXT_BUDGET,
      });
      const cost = costView(pricing, result.cost);
      call.cost = cost;
      const { value } = result;
      const meta = readMeta(result, cost);
      const figures = costFigures(cost, value.entry.listCost);
      const order = params.sort === 'desc' ? 'newest first' : 'oldest first';
      const sample = meta.sample ? ' (generated sample data, not real observations)' : '';
      const cut = value.cut
        ? ` (cut short of limit ${params.limit} to stay within about 20,000 tokens of text; ask for fewer fields for more rows a page)`
        : '';
      // The last text says how to go on and what it costs: a model reads to the end before it acts.
      const next = value.nextCursor
        ? `next_cursor: ${value.nextCursor}\nNext page: pass it as cursor with the same arguments; it is another read at ${figures.token_cost} tokens.`
        : 'No more rows: this is the last page.';
      const head = `${value.entry.key}: ${value.count} rows, ${order}${sample}${cut}\n`;
      let rowsJson: string;
      let pageJson: string;
      if (value.page) {
        // Full rows as stored: their JSON and their CSV lines, joined (and escaped) by the store.
        rowsJson = `[${value.page.json}]`;
        pageJson =
          value.count === 0
            ? JSON.stringify(`${head}(no rows match)`)
            : csvTextJson(head, meta.fields, value.page.csv as string, '');
      } else {
        // A projection needs each row's members by name; rows without stored lines are rendered here.
        const texts = value.rows.map((r) => r.json);
        const members = value.fields === null ? null : rowTokens(texts, value.fields);
        const table =
          texts.length === 0
            ? '(no rows match)\n'
            : members
              ? csvOf(meta.fields, members)
              : csvOfRows(texts, meta.fields);
        rowsJson =
          value.fields === null || members === null ? `[${texts.join(',')}]` : jsonOf(value.fields, members);
        pageJson = JSON.stringify(`${head}${table}`);
      }
      const rows = rawJson(call, rowsJson);
      const page = rawJson(call, pageJson);
      return {
        content: [text(page), text(costNote(figures)), text(next)],
        structuredContent: { data: rows, meta },
        _meta: meteredMeta(figures),
      };
    },
  });
}
