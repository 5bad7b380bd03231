/**
 * The MCP tools: thin adapters from tool arguments onto the same domain calls and zod schemas as REST.
 * The two metered tools read through DataReads and Recipes (the one metered path, channel `mcp`) and
 * leave their cost figures on the call, so the HTTP response can carry the cost headers too.
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { CatalogEntry } from '../catalog/catalog.ts';
import { DEFAULT_LIMIT, quoteValue, type ReadParams, readOptionsShape } from '../catalog/read-plan.ts';
import type { Deps } from '../deps.ts';
import type { Caller } from '../domain/caller.ts';
import { type CostFigures, costHeaders, quote } from '../domain/metering.ts';
import { formatMicros } from '../domain/money.ts';
import { costEur } from '../domain/pricing.ts';
import { recipes } from '../domain/recipes.ts';
import { capThatWouldRefuse, spendingCapReached } from '../domain/spending-caps.ts';
import { AppError, toProblem } from '../errors.ts';
import { datasetOut, describeEntry, entryOut, presentEntry, searchCatalog } from '../http/routes/catalog.ts';
import { readEnvelope, readMeta } from '../http/routes/data.ts';

import { accountOut, presentAccount } from '../http/routes/me.ts';
import { recipeOut } from '../http/routes/recipes.ts';
import { tokens } from '../http/schemas.ts';
import { csvOf, csvOfRows, csvTextJson, jsonOf, rowTokens, tokensOf } from './raw-rows.ts';

/** A filter value as an agent may write it: text or a list as on REST, or a JSON number or boolean. */
const mcpScalar = z.union([z.string().max(4096), z.number(), z.boolean()]);
const mcpFilterValue = z.union([mcpScalar, z.array(mcpScalar).max(100)]);

/** The `_meta` key of a metered tool result: the four figures of the cost headers, and more. */
export const COST_META_KEY = 'tmd.example/cost';
/** The `_meta` key of a refused tool result: the REST problem, fields and request id included. */
export const PROBLEM_META_KEY = 'tmd.example/problem';

/** One tools/call as the edge authenticated it. */
export interface McpCall {
  caller: Caller;
  /** The HTTP request id: usage events and problem bodies name it, as on REST. */
  requestId: string;
  /** Set by a metered tool once its read is served: the figures for the HTTP cost headers. */
  cost: CostFigures | null;
  /**
   * Parts of the result that are JSON text already, to be spliced into the serialized response where the
   * result holds each `placeholder` string (see `rawJson`): the stored rows go out as stored, as on REST,
   * and the long CSV text is encoded once, not again inside the SDK's encoding of the whole message.
   * The route takes them as it encodes the answer, and sets this back to null.
   */
  raw: { placeholder: string; json: string }[] | null;
  /**
   * Set when the call is refused before any tool runs (a limit at the edge, arguments that are not an
   * object): every tools/call then answers it as a refused tool result, whatever tool it names.
   */
  refusal?: AppError;
  /** Faults that are ours (not the caller's) are logged with the request id, never shown. */
  logError: (error: unknown) => void;
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema: { type: 'object'; [key: string]: unknown };
  annotations: {
    title: string;
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
}

export interface McpTool {
  definition: ToolDefinition;
  /** Validates the arguments and runs the tool; refusals are tool results with isError, never throws. */
  call(args: unknown, call: McpCall): Promise<CallToolResult>;
}

interface ToolSpec<I extends z.ZodType, O extends z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  /** Burns tokens when it succeeds (not idempotent: each call is another read). */
  metered: boolean;
  run(args: z.output<I>, call: McpCall): Promise<CallToolResult>;
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): { type: 'object'; [key: string]: unknown } {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  return { ...rest, type: 'object' };
}

/** A recipe name that names none: the REST refusal (404 recipe_not_found), with the names there are. */
function unknownRecipe(args: unknown): AppError | null {
  const name = (args as { recipe?: unknown } | null | undefined)?.recipe;
  if (typeof name !== 'string' || recipes.some((r) => r.name === name)) return null;
  return new AppError(
    'recipe_not_found',
    `No recipe "${name.slice(0, 64)}". Recipes: ${recipes.map((r) => r.name).join(', ')}.`,
  );
}

function invalidArguments(tool: string, error: z.ZodError, args: unknown): AppError {
  // A `recipe` argument outside the recipes' enum: the REST refusal, not a schema message.
  const recipe = error.issues.some((i) => i.code === 'invalid_value' && i.path.join('.') === 'recipe');
  const unknown = recipe ? unknownRecipe(args) : null;
  if (unknown) return unknown;
  const errors = error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => `"${k}"`).join(', ');
      const hint =
        tool === 'read_dataset'
          ? ' Entity filters go inside "filters", e.g. {"filters": {"symbol": "AAPL"}}.'
          : '';
      return { path: path || issue.keys.join(','), message: `unknown argument(s) ${keys}.${hint}` };
    }
    return { path: path || '(arguments)', message: issue.message };
  });
  const first = errors[0];
  return new AppError(
    'invalid_request',
    `Invalid arguments for ${tool}${first ? `: ${first.path}: ${first.message}` : '.'}`,
    { errors },
  );
}

/**
 * A refused call as the model sees it: a sentence in text, the REST problem in `_meta`. No
 * structuredContent: it would not match the tool's output schema, and clients that check it (the 1.x
 * SDK) would throw instead of handing the refusal over.
 * `charged` is only ever true for a fault of ours after the read was served and paid for.
 */
export function refusalResult(error: AppError, requestId: string, charged = false): CallToolResult {
  const problem = toProblem(error, requestId);
  const detail = /[.!?]$/.test(problem.detail) ? problem.detail : `${problem.detail}.`;
  const retry = typeof problem.retry_after === 'number' ? ` Retry in ${problem.retry_after} s.` : '';
  const charge = charged ? 'The read was charged (see the cost headers).' : 'Nothing was charged.';
  return {
    content: [
      {
        type: 'text',
        text: `Refused: ${problem.code} (${problem.status}). ${detail}${retry} ${charge}`,
      },
    ],
    _meta: { [PROBLEM_META_KEY]: problem },
    isError: true,
  };
}

function defineTool<I extends z.ZodType, O extends z.ZodType>(spec: ToolSpec<I, O>): McpTool {
  const definition: ToolDefinition = {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: jsonSchema(spec.input, 'input'),
    outputSchema: jsonSchema(spec.output, 'output'),
    annotations: {
      title: spec.title,
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: !spec.metered,
      openWorldHint: false,
    },
  };
  return {
    definition,
    async call(args, call) {
      try {
        const parsed = spec.input.safeParse(args ?? {});
        if (!parsed.success) throw invalidArguments(spec.name, parsed.error, args);
        return await spec.run(parsed.data, call);
      } catch (error) {
        if (error instanceof AppError) return refusalResult(error, call.requestId);
        call.logError(error);
        return refusalResult(
          new AppError(
            'internal_error',
            'Something went wrong on our side; the request id helps us find it.',
          ),
          call.requestId,
          call.cost !== null,
        );
      }
    },
  };
}

const text = (value: string) => ({ type: 'text' as const, text: value });

/**
 * A placeholder string for `json` (JSON text) in a tool result: the route puts `json` where the encoded
 * placeholder stands in the serialized response. Placeholders are random per call, so no text of ours
 * or of a dataset can be taken for one.
 */
function rawJson(call: McpCall, json: string): string {
  const placeholder = `tmd-raw-${randomUUID()}`;
  if (call.raw) call.raw.push({ placeholder, json });
  else call.raw = [{ placeholder, json }];
  return placeholder;
}

function costFigures(deps: Deps, cost: CostFigures, listCost: number) {
  const headers = costHeaders(deps.pricing, cost);
  return {
    token_cost: headers['x-token-cost'],
    request_tokens: headers['x-request-tokens'],
    request_cost_eur: headers['x-request-cost-eur'],
    credits_remaining: headers['x-credits-remaining'],
    list_cost: String(listCost),
    outcome: cost.outcome,
  };
}

/** The one-line cost note a model reads: the same four figures as the headers and `_meta`. */
function costNote(figures: ReturnType<typeof costFigures>): string {
  const why =
    figures.outcome === 'notional'
      ? ', notional: a public-test key burns nothing on P0 reads'
      : figures.outcome === 'grandfathered'
        ? ', grandfathered: served at zero burn (early_bird)'
        : '';
  return `Cost: ${figures.token_cost} tokens (list ${figures.list_cost}${why}); burned ${figures.request_tokens} tokens = ${figures.request_cost_eur} EUR; ${figures.credits_remaining} tokens left.`;
}

function meteredMeta(figures: ReturnType<typeof costFigures>) {
  return { [COST_META_KEY]: figures };
}

const datasetKey = z
  .string()
  .min(3)
  .max(200)
  .describe('Dataset key "domain/name", e.g. "equities/stock-prices" (search_datasets lists them).');

const recipeName = z
  .enum(recipes.map((r) => r.name) as [string, ...string[]])
  .describe(recipes.map((r) => `${r.name}: ${r.description}`).join(' '));

const quoteOut = z.object({
  list_cost: tokens.describe('Tokens per read before the loyalty discount.'),
  token_cost: tokens.describe(
    'What the call costs you: list cost less your tier discount (×1.35 from the Terminal).',
  ),
  tokens_burned: tokens.describe(
    'What the call would burn from your wallet: 0 for public-test keys on P0 data.',
  ),
  cost_eur: z.string().describe('tokens_burned × 0.1 EUR.'),
  entitled: z.boolean().describe('false: your key may not read it (402 not_entitled).'),
});

const estimateOut = quoteOut.extend({
  target: z.string().describe('The dataset key, or recipe:<name>.'),
  balance: tokens.describe('Your wallet balance now.'),
  balance_after: tokens.describe('Your wallet balance after such a call.'),
  would_refuse: z
    .enum(['not_entitled', 'insufficient_tokens', 'spending_cap_reached'])
    .nullable()
    .describe(
      "The refusal such a call would get now, or null; spending_cap_reached: it would pass your key's daily or monthly cap.",
    ),
  spending_cap: z
    .object({
      period: z.enum(['day', 'month']),
      cap_tokens: tokens,
      spent_tokens: tokens,
      reset_at: z.string().describe('When the cap counts from zero again (ISO 8601, UTC).'),
    })
    .optional()
    .describe(
      'With spending_cap_reached: the cap that would refuse, what the key burned under it, and its reset.',
    ),
});

function pickCapFields({ period, cap_tokens, spent_tokens, reset_at }: Record<string, unknown>) {
  return { period, cap_tokens, spent_tokens, reset_at };
}

export function createTools(deps: Deps): McpTool[] {
  const meterDeps = deps.reads.meterDeps;
  const listCosts = [...new Set(deps.catalog.entries().map((e) => e.listCost))].sort((a, b) => a - b);
  const eurPerToken = deps.config.pricing.eur_per_token;
  const recipeCosts = recipes.map((r) => {
    const cost = r.reads.reduce((sum, key) => sum + deps.reads.resolve(key).listCost, 0);
    return `${r.name} costs ${cost} tokens`;
  });

  /** The caller with its wallet as it is now: tier and balance move with every burn. */
  async function fresh(caller: Caller): Promise<Caller> {
    const wallet = await deps.store.getWallet(caller.wallet.id);
    return wallet ? { ...caller, wallet } : caller;
  }

  function quoteFor(caller: Caller, entries: readonly CatalogEntry[]) {
    const items = entries.map((e) => ({ label: e.key, listCost: e.listCost, p0: e.p0 }));
    const q = quote(meterDeps, caller, items);
    const balance = caller.wallet.balanceMicros;
    const grandfathered = caller.kind === 'session' && caller.account?.plan === 'early_bird';
    let burn = q.entitled ? q.burnMicros : 0n;
    let refusal: 'not_entitled' | 'insufficient_tokens' | null = q.entitled ? null : 'not_entitled';
    if (refusal === null && burn > balance) {
      // Mirrors meter(): early_bird is served at zero burn where the wallet cannot cover the read.
      if (grandfathered) burn = 0n;
      else refusal = 'insufficient_tokens';
    }
    return {
      /**
       * What meter() would ask the debit for, whose spending caps it checks: the full burn even where
       * early_bird then reads at zero burn (the grandfather comes after a failed debit), and nothing
       * for a zero-burn read or a refusal before the debit.
       */
      debitMicros: refusal === null ? q.burnMicros : 0n,
      quote: {
        list_cost: String(q.listCost),
        token_cost: formatMicros(q.costMicros),
        tokens_burned: formatMicros(burn),
        cost_eur: costEur(deps.pricing, burn),
        entitled: q.entitled,
      },
      balance,
      burn,
      refusal,
    };
  }

  const searchDatasets = defineTool({
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
        .describe('Words that must all appear in the key, title or description, e.g. "treasury yield".'),
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
      const found = searchCatalog(deps.catalog, {
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
          ? `No dataset matches. Every word of query must appear in a dataset's key, title or description: try fewer or other words. Domains: ${[...new Set(deps.catalog.entries().map((e) => e.domain))].join(', ')}.`
          : null;
      return {
        content: [
          text(
            none ??
              `${page.length} of ${found.length} datasets${more}. key | list cost (tokens per read) | P0 | title\n${lines.join('\n')}`,
          ),
        ],
        structuredContent: {
          data: page.map(presentEntry),
          meta: { count: page.length, total: found.length },
        },
      };
    },
  });

  const describeDataset = defineTool({
    name: 'describe_dataset',
    title: 'Describe a dataset',
    description:
      "A dataset's fields, time field, entity filters, P0 flag, what one read costs you, and an example read_dataset call. Free: burns no tokens.",
    metered: false,
    input: z.strictObject({ dataset: datasetKey }),
    output: datasetOut.extend({
      your_cost: quoteOut.describe('What one read_dataset call on this key costs you now.'),
      example_call: z.object({
        tool: z.literal('read_dataset'),
        arguments: z.record(z.string(), z.unknown()),
      }),
    }),
    async run(args, call) {
      const entry = deps.reads.resolve(args.dataset);
      const caller = await fresh(call.caller);
      const { quote: yours } = quoteFor(caller, [entry]);
      const d = entry.dataset;
      const entity = d.entity_fields[0];
      const sampleValue = d.fields.find((f) => f.name === entity)?.sample?.values?.[0];
      const example = {
        dataset: entry.key,
        ...(entity && sampleValue !== undefined ? { filters: { [entity]: [String(sampleValue)] } } : {}),
        limit: 10,
      };
      const fields = d.fields
        .map((f) => `${f.name} (${f.type}${f.unit ? `, ${f.unit}` : ''}): ${f.description}`)
        .join('\n');
      const summary = [
        `${entry.key}: ${d.title}. ${d.description} Source: ${d.source}; ${d.frequency}.`,
        `P0: ${entry.p0 ? 'yes' : 'no'}. One read costs you ${yours.token_cost} tokens (list ${yours.list_cost}) and burns ${yours.tokens_burned}${yours.entitled ? '' : '; your key is not entitled to it (402 not_entitled)'}.`,
        `Time field: ${d.time_field}. Entity filters: ${d.entity_fields.join(', ') || 'none'}.`,
        `Fields:\n${fields}`,
        `Example: read_dataset ${JSON.stringify(example)}`,
      ];
      return {
        content: [text(summary.join('\n'))],
        structuredContent: {
          ...describeEntry(entry),
          your_cost: yours,
          example_call: { tool: 'read_dataset', arguments: example },
        },
      };
    },
  });

  const readDataset = defineTool({
    name: 'read_dataset',
    title: 'Read a dataset page',
    description: `Read one page (up to 1000 rows) of a dataset: the same read as GET /api/v1/data/{domain}/{name}. Metered: every call burns the dataset's list cost (${listCosts.join(', ')} tokens; 1 token = ${eurPerToken} EUR) less your loyalty-tier discount, whatever the page size; public-test keys burn 0 on P0 datasets (the cost is still reported). A refused call burns nothing. Rows come back as CSV text and as structured data; the cost is in the last text line and in _meta["${COST_META_KEY}"]. Check the price first with describe_dataset or estimate_cost.`,
    metered: true,
    input: z.strictObject({
      dataset: datasetKey,
      filters: z
        .record(z.string().max(64), mcpFilterValue)
        .optional()
        .describe(
          'Entity filters by field, e.g. {"symbol": ["AAPL", "MSFT"]} or {"symbol": "AAPL,MSFT"}; number and boolean fields also take JSON numbers and booleans ({"maturity_months": 120}, {"is_fomc_meeting": true}) and match by value. describe_dataset lists the entity fields and their types.',
        ),
      from: readOptionsShape.from.describe(
        'Earliest time on the time field, inclusive: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ.',
      ),
      to: readOptionsShape.to.describe('Latest time on the time field, inclusive for a date.'),
      fields: readOptionsShape.fields,
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
      const result = await deps.reads.read(call.caller, call.requestId, args.dataset, params, {
        as: 'csv-json',
      });
      call.cost = result.cost;
      const { value } = result;
      const meta = readMeta(deps.pricing, result);
      const figures = costFigures(deps, result.cost, value.entry.listCost);
      const order = params.sort === 'desc' ? 'newest first' : 'oldest first';
      const sample = meta.sample ? ' (generated sample data, not real observations)' : '';
      const next = value.nextCursor
        ? `\nnext_cursor: ${value.nextCursor} (pass it as cursor with the same arguments for the next page; each page is one read)`
        : '';
      const head = `${value.entry.key}: ${value.count} rows, ${order}${sample}\n`;
      let rowsJson: string;
      let pageJson: string;
      if (value.page) {
        // Full rows as stored: their JSON and their CSV lines, joined (and escaped) by the store.
        rowsJson = `[${value.page.json}]`;
        pageJson =
          value.count === 0
            ? JSON.stringify(`${head}(no rows match)\n${next}`)
            : csvTextJson(head, meta.fields, value.page.csv as string, next);
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
        pageJson = JSON.stringify(`${head}${table}${next}`);
      }
      const rows = rawJson(call, rowsJson);
      const page = rawJson(call, pageJson);
      return {
        content: [text(page), text(costNote(figures))],
        structuredContent: { data: rows, meta },
        _meta: meteredMeta(figures),
      };
    },
  });

  const runRecipe = defineTool({
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
      const result = await deps.recipes.run(call.caller, call.requestId, args.recipe, { tz: args.tz });
      call.cost = result.cost;
      const value = result.value as Record<string, unknown>;
      const listCost = deps.recipes
        .info(args.recipe)
        .reads.reduce((sum, key) => sum + deps.reads.resolve(key).listCost, 0);
      const figures = costFigures(deps, result.cost, listCost);
      const items = Object.values(value).find((v): v is Record<string, unknown>[] => Array.isArray(v)) ?? [];
      const columns = items[0] ? Object.keys(items[0]) : [];
      const table =
        items.length > 0
          ? csvOf(
              columns,
              items.map((item) => tokensOf(item, columns)),
            )
          : '';
      const header = Object.entries(value)
        .filter(([, v]) => !Array.isArray(v))
        .map(([k, v]) => `${k}: ${String(v)}`)
        .join(', ');
      return {
        content: [text(`${header}\n${table}`), text(costNote(figures))],
        structuredContent: value,
        _meta: meteredMeta(figures),
      };
    },
  });

  const getAccount = defineTool({
    name: 'get_account',
    title: 'Your account',
    description:
      'Your credential, wallet balance, loyalty tier, tokens burned this month, next tier and limits (per minute, per day, concurrent): the same as GET /api/v1/me. Free: burns no tokens. REST and MCP share one budget per key.',
    metered: false,
    input: z.strictObject({}),
    output: accountOut,
    async run(_args, call) {
      const me = await presentAccount(deps, call.caller);
      const next = me.next_tier
        ? `; next tier ${me.next_tier.level} in ${me.next_tier.tokens_needed} tokens`
        : '';
      const perDay = me.limits.per_day === null ? 'no daily limit' : `${me.limits.per_day}/day`;
      return {
        content: [
          text(
            `${me.credential.kind} credential. Balance ${me.wallet.balance} tokens; burned ${me.burned_this_month} this month; tier ${me.tier.level} ${me.tier.name} (${me.tier.discount_pct} % discount)${next}. Limits: ${me.limits.per_minute}/min, ${perDay}, ${me.limits.concurrent} concurrent.`,
          ),
        ],
        structuredContent: me,
      };
    },
  });

  const estimateCost = defineTool({
    name: 'estimate_cost',
    title: 'Estimate a cost',
    description:
      'What one read_dataset call on a dataset (or one run_recipe call) would cost you now, and whether it would be refused, without reading or burning anything. Free: burns no tokens. Give exactly one of dataset or recipe.',
    metered: false,
    input: z.strictObject({
      dataset: datasetKey.optional(),
      recipe: recipeName.optional(),
    }),
    output: estimateOut,
    async run(args, call) {
      if ((args.dataset === undefined) === (args.recipe === undefined)) {
        throw new AppError('invalid_request', 'Give exactly one of dataset or recipe.', {
          errors: [{ path: 'dataset', message: 'give exactly one of dataset or recipe' }],
        });
      }
      const entries =
        args.dataset !== undefined
          ? [deps.reads.resolve(args.dataset)]
          : deps.recipes.info(args.recipe as string).reads.map((key) => deps.reads.resolve(key));
      const target = args.dataset ?? `recipe:${args.recipe}`;
      const caller = await fresh(call.caller);
      const { quote: q, balance, burn, debitMicros, refusal: beforeDebit } = quoteFor(caller, entries);
      const now = meterDeps.now();
      const cap = await capThatWouldRefuse(deps.store, caller.key, debitMicros, now);
      const refusal = cap ? 'spending_cap_reached' : beforeDebit;
      const after = refusal === null ? balance - burn : balance;
      const capRefusal = cap ? spendingCapReached(cap, debitMicros, now) : null;
      const verdict = capRefusal
        ? `It would be refused (402 spending_cap_reached). ${capRefusal.message}`
        : refusal === 'not_entitled'
          ? 'It would be refused (402 not_entitled): your key reads only P0 datasets.'
          : refusal === 'insufficient_tokens'
            ? 'It would be refused (402 insufficient_tokens): your wallet cannot cover it.'
            : `It would burn ${q.tokens_burned} tokens (${q.cost_eur} EUR), leaving ${formatMicros(after)}.`;
      return {
        content: [
          text(
            `${target}: costs you ${q.token_cost} tokens (list ${q.list_cost}). ${verdict} Nothing was burned.`,
          ),
        ],
        structuredContent: {
          ...q,
          target,
          balance: formatMicros(balance),
          balance_after: formatMicros(after),
          would_refuse: refusal,
          // The refusal's own figures, as the read's 402 would give them (its required_tokens is above).
          ...(capRefusal ? { spending_cap: pickCapFields(capRefusal.extras) } : {}),
        },
      };
    },
  });

  return [searchDatasets, describeDataset, readDataset, runRecipe, getAccount, estimateCost];
}
