/**
 * The encoders of a metered read (domain/reads.ts `MeteredRead`): the REST answer as the JSON envelope
 * or CSV, and the MCP tool result. Each renders the one read value; none reads or prices anything.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { csvLine } from '../catalog/csv.ts';
import type { StoredResponse } from '../domain/idempotency.ts';
import { type MeteredRead, projectRow } from '../domain/reads.ts';
import { type CostView, costHeaders, costNote, meteredMeta, readCostView, toolCostFigures } from './cost.ts';
import { type RawPart, rawPart } from './raw-parts.ts';
import { csvOf, csvOfRows, csvTextJson, jsonOf, rowTokens } from './raw-rows.ts';
import { readMeta } from './reads.ts';

/** The headers of every REST read answer: the cost figures and whether the rows are sample data. */
function readHeaders(read: MeteredRead, cost: CostView): Record<string, string> {
  return { ...costHeaders(cost), 'x-data-sample': String(read.value.source === 'sample') };
}

/** A read as the JSON envelope `{data, meta}`, stored rows spliced in as stored. */
export function encodeReadJson(read: MeteredRead): StoredResponse {
  const { value } = read;
  const cost = readCostView(read.cost);
  const meta = readMeta(read, cost);
  // Stored rows are already JSON: splice them in rather than parse and re-serialise on the hot path.
  const data = value.page
    ? value.page.json
    : value.fields === null
      ? value.rows.map((r) => r.json).join(',')
      : value.rows.map((r) => JSON.stringify(projectRow(r, value.fields))).join(',');
  return {
    status: 200,
    contentType: 'application/json; charset=utf-8',
    headers: readHeaders(read, cost),
    body: `{"data":[${data}],"meta":${JSON.stringify(meta)}}`,
  };
}

/** A read as CSV (RFC 4180, a header row), the next cursor in X-Next-Cursor. */
export function encodeReadCsv(read: MeteredRead): StoredResponse {
  const { value } = read;
  const headers = readHeaders(read, readCostView(read.cost));
  const columns = value.fields ?? value.entry.columns;
  let body = csvLine(columns);
  if (value.page) {
    // Full rows: their stored lines, joined by the store.
    if (value.page.count > 0) body += `${value.page.csv}\r\n`;
  } else {
    for (const row of value.rows) {
      const projected = projectRow(row, columns);
      body += csvLine(columns.map((c) => projected[c]));
    }
  }
  if (value.nextCursor) headers['x-next-cursor'] = value.nextCursor;
  headers['content-disposition'] = `inline; filename="${value.entry.key.replace('/', '_')}.csv"`;
  return { status: 200, contentType: 'text/csv; charset=utf-8', headers, body };
}

/** A tool's answer: the result, the cost of a metered call, and the parts spliced in as it is encoded. */
export interface ToolAnswer {
  result: CallToolResult;
  cost: CostView | null;
  raw: RawPart[] | null;
}

/** What a model is told of the page it asked for. */
export interface PageAsked {
  limit: number;
  sort: 'asc' | 'desc';
}

/** The page-text budget of an MCP read (PAGE_TEXT_BUDGET in mcp/), as a model is told it. */
const BUDGET_WORDS = 'about 20,000 tokens of text';

/**
 * A read as an MCP tool result: the rows as compact CSV text, the REST envelope in structuredContent,
 * the cost in a text line and `_meta`, and how to go on last. The rows and the page text are raw parts,
 * rendered from the stored text once.
 */
export function encodeReadTool(read: MeteredRead, asked: PageAsked): ToolAnswer {
  const { value } = read;
  const cost = readCostView(read.cost);
  const meta = readMeta(read, cost);
  const figures = toolCostFigures(cost, value.entry.listCost);
  const order = asked.sort === 'desc' ? 'newest first' : 'oldest first';
  const sample = meta.sample ? ' (generated sample data, not real observations)' : '';
  const cut = value.cut
    ? ` (cut short of limit ${asked.limit} to stay within ${BUDGET_WORDS}; ask for fewer fields for more rows a page)`
    : '';
  // The last text says how to go on and what it costs: a model reads to the end before it acts.
  const next = value.nextCursor
    ? `next_cursor: ${value.nextCursor}\nNext page: pass it as cursor with the same arguments; it is another read at ${figures.token_cost} tokens.`
    : 'No more rows: this is the last page.';
  const head = `${value.entry.key}: ${value.count} rows, ${order}${sample}${cut}\n`;
  let rowsJson: string;
  let pageJson: string;
  if (value.page) {
    // Full rows as stored: their JSON and their CSV lines, joined (and escaped) by the store. The
    // header is the entry's columns, as meta.fields lists them.
    rowsJson = `[${value.page.json}]`;
    pageJson =
      value.count === 0
        ? JSON.stringify(`${head}(no rows match)`)
        : csvTextJson(head, value.entry.columns, value.page.csv as string, '');
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
  const rows = rawPart(rowsJson);
  const page = rawPart(pageJson);
  return {
    result: {
      content: [text(page.placeholder), text(costNote(figures)), text(next)],
      structuredContent: { data: rows.placeholder, meta },
      _meta: meteredMeta(figures),
    },
    cost,
    raw: [rows, page],
  };
}

const text = (value: string) => ({ type: 'text' as const, text: value });
