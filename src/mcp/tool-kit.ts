/**
 * What every MCP tool is made of: the call the edge authenticated, a tool's definition and its one way to
 * answer a refusal, the raw-JSON placeholders of a metered answer, and its cost note.
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Caller } from '../domain/caller.ts';
import type { Idempotency } from '../domain/idempotency.ts';
import { recipes } from '../domain/recipes.ts';
import { AppError, toProblem } from '../errors.ts';
import { type CostView, costHeaders } from '../views/cost.ts';

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
  cost: CostView | null;
  /**
   * Parts of the result that are JSON text already, to be spliced into the serialized response where the
   * result holds each `placeholder` string (see `rawJson`): the stored rows go out as stored, as on REST,
   * and the long CSV text is encoded once, not again inside the SDK's encoding of the whole message.
   * The route takes them as it encodes the answer, and sets this back to null.
   */
  raw: { placeholder: string; json: string }[] | null;
  /** A tools/call sent with `_meta.idempotency_key`: a metered tool answers its retries (defineTool). */
  idempotent?: { key: string; service: Idempotency };
  /** The cost headers of a replayed answer, which ran no tool now. */
  replayed?: Record<string, string>;
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

export function defineTool<I extends z.ZodType, O extends z.ZodType>(spec: ToolSpec<I, O>): McpTool {
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
        const idempotent = call.idempotent;
        if (!spec.metered || !idempotent) return await spec.run(parsed.data, call);
        // Kept as the client received it (the stored parts spliced in), replayed as it is.
        const { response, replayed } = await idempotent.service.run(
          call.caller,
          idempotent.key,
          `mcp ${spec.name} ${JSON.stringify(parsed.data)}`,
          async () => {
            const result = await spec.run(parsed.data, call);
            const raw = call.raw;
            call.raw = null;
            const serialized = JSON.stringify(result);
            return {
              status: 200,
              contentType: 'application/json',
              headers: call.cost ? costHeaders(call.cost) : {},
              body: raw ? spliceRaw(serialized, raw).toString('utf8') : serialized,
            };
          },
        );
        if (replayed) call.replayed = { ...response.headers, 'idempotent-replayed': 'true' };
        return JSON.parse(response.body) as CallToolResult;
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

export const text = (value: string) => ({ type: 'text' as const, text: value });

/**
 * Puts back the parts the tools left as placeholders (`McpCall.raw`): each stands in the serialized
 * message as a JSON string and is replaced by its JSON text. Stored rows go out as stored, like REST, and
 * the long page text is encoded once; the message around them is the SDK's. The answer is written
 * straight into one buffer of its exact UTF-8 size, in the order the placeholders appear.
 */
export function spliceRaw(serialized: string, raw: readonly { placeholder: string; json: string }[]): Buffer {
  const found = raw
    .map((part) => ({
      json: part.json,
      at: serialized.indexOf(`"${part.placeholder}"`),
      length: part.placeholder.length + 2,
    }))
    .filter((part) => part.at >= 0)
    .sort((a, b) => a.at - b.at);
  const pieces: string[] = [];
  let from = 0;
  for (const part of found) {
    pieces.push(serialized.slice(from, part.at), part.json);
    from = part.at + part.length;
  }
  pieces.push(serialized.slice(from));
  const out = Buffer.allocUnsafe(pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0));
  let offset = 0;
  for (const piece of pieces) offset += out.write(piece, offset);
  return out;
}

/**
 * A placeholder string for `json` (JSON text) in a tool result: the route puts `json` where the encoded
 * placeholder stands in the serialized response. Placeholders are random per call, so no text of ours
 * or of a dataset can be taken for one.
 */
export function rawJson(call: McpCall, json: string): string {
  const placeholder = `tmd-raw-${randomUUID()}`;
  if (call.raw) call.raw.push({ placeholder, json });
  else call.raw = [{ placeholder, json }];
  return placeholder;
}

/** A served call's cost as the model reads it: the four figures of the cost headers, and more. */
export function costFigures(cost: CostView, listCost: number) {
  return {
    token_cost: cost.token_cost,
    request_tokens: cost.request_tokens,
    request_cost_eur: cost.request_cost_eur,
    credits_remaining: cost.credits_remaining,
    list_cost: String(listCost),
    outcome: cost.outcome,
  };
}

export type ToolCost = ReturnType<typeof costFigures>;

/** The one-line cost note a model reads: the same four figures as the headers and `_meta`. */
export function costNote(figures: ToolCost): string {
  const why =
    figures.outcome === 'notional'
      ? ', notional: a public-test key burns nothing on P0 reads'
      : figures.outcome === 'grandfathered'
        ? ', grandfathered: served at zero burn (early_bird)'
        : '';
  return `Cost: ${figures.token_cost} tokens (list ${figures.list_cost}${why}); burned ${figures.request_tokens} tokens = ${figures.request_cost_eur} EUR; ${figures.credits_remaining} tokens left.`;
}

export function meteredMeta(figures: ToolCost) {
  return { [COST_META_KEY]: figures };
}

export const datasetKey = z
  .string()
  .min(3)
  .max(200)
  .describe('Dataset key "domain/name", e.g. "equities/stock-prices" (search_datasets lists them).');

export const recipeName = z
  .enum(recipes.map((r) => r.name) as [string, ...string[]])
  .describe(recipes.map((r) => `${r.name}: ${r.description}`).join(' '));
