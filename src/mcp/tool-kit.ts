/**
 * What every MCP tool is made of: the context of the call the edge authenticated, a tool's definition
 * and its one way to answer a refusal. A tool returns its answer `{result, cost, raw}` (views/
 * read-encoders.ts); nothing is written into the context.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Caller } from '../domain/caller.ts';
import type { Idempotency } from '../domain/idempotency.ts';
import { recipes } from '../domain/recipes.ts';
import { AppError, toProblem } from '../errors.ts';
import { COST_META_KEY, type CostView, costHeaders } from '../views/cost.ts';
import { spliceRaw } from '../views/raw-parts.ts';
import type { ToolAnswer } from '../views/read-encoders.ts';

export type { ToolAnswer };
export { COST_META_KEY, spliceRaw };

/** The `_meta` key of a refused tool result: the REST problem, fields and request id included. */
export const PROBLEM_META_KEY = 'tmd.example/problem';

/** One tools/call as the edge authenticated it: read by the tools, never written. */
export interface ToolContext {
  caller: Caller;
  /** The HTTP request id: usage events and problem bodies name it, as on REST. */
  requestId: string;
  /** A tools/call sent with `_meta.idempotency_key`: a metered tool answers its retries (defineTool). */
  idempotent?: { key: string; service: Idempotency };
  /**
   * Set when the call is refused before any tool runs (a limit at the edge, arguments that are not an
   * object): every tools/call then answers it as a refused tool result, whatever tool it names.
   */
  refusal?: AppError;
  /** Faults that are ours (not the caller's) are logged with the request id, never shown. */
  logError: (error: unknown) => void;
}

/** A tool's answer as the route sends it: a replay carries the first answer's cost headers instead. */
export interface McpAnswer extends ToolAnswer {
  /** The headers of a replayed answer (its cost headers and Idempotent-Replayed), which ran no tool now. */
  replayed?: Record<string, string>;
}

/** The answer of a call that costs nothing and has no raw parts. */
export const freeAnswer = (result: CallToolResult): McpAnswer => ({ result, cost: null, raw: null });

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
  call(args: unknown, context: ToolContext): Promise<McpAnswer>;
}

interface ToolSpec<I extends z.ZodType, O extends z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  /** Burns tokens when it succeeds (not idempotent: each call is another read); returns its cost. */
  metered: boolean;
  run(args: z.output<I>, context: ToolContext): Promise<CallToolResult | ToolAnswer>;
}

const isAnswer = (value: CallToolResult | ToolAnswer): value is ToolAnswer =>
  'result' in value && 'raw' in value;

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
  const run = async (args: z.output<I>, context: ToolContext): Promise<McpAnswer> => {
    const answer = await spec.run(args, context);
    return isAnswer(answer) ? answer : freeAnswer(answer);
  };
  return {
    definition,
    async call(args, context) {
      try {
        const parsed = spec.input.safeParse(args ?? {});
        if (!parsed.success) throw invalidArguments(spec.name, parsed.error, args);
        const idempotent = context.idempotent;
        if (!spec.metered || !idempotent) return await run(parsed.data, context);
        return await replayable(spec.name, parsed.data, context, idempotent, () => run(parsed.data, context));
      } catch (caught) {
        const error = caught instanceof ChargedFault ? caught.cause : caught;
        if (error instanceof AppError && !(caught instanceof ChargedFault))
          return freeAnswer(refusalResult(error, context.requestId));
        context.logError(error);
        const internal = new AppError(
          'internal_error',
          'Something went wrong on our side; the request id helps us find it.',
        );
        const cost = caught instanceof ChargedFault ? caught.cost : null;
        return { ...freeAnswer(refusalResult(internal, context.requestId, cost !== null)), cost };
      }
    },
  };
}

/** A fault of ours after the call was served and paid for: its cost still goes on the headers. */
export class ChargedFault extends Error {
  readonly cost: CostView;
  constructor(cause: unknown, cost: CostView) {
    super('a paid call failed', { cause });
    this.cost = cost;
  }
}

/**
 * A metered call sent with an idempotency key: the first answer is kept as the client received it (the
 * raw parts spliced in) and a retry is answered from it, with the first answer's cost headers.
 */
async function replayable(
  tool: string,
  args: unknown,
  context: ToolContext,
  idempotent: NonNullable<ToolContext['idempotent']>,
  run: () => Promise<McpAnswer>,
): Promise<McpAnswer> {
  let first: McpAnswer | null = null;
  const { response, replayed } = await idempotent.service.run(
    context.caller,
    idempotent.key,
    `mcp ${tool} ${JSON.stringify(args)}`,
    async () => {
      first = await run();
      const serialized = JSON.stringify(first.result);
      return {
        status: 200,
        contentType: 'application/json',
        headers: first.cost ? costHeaders(first.cost) : {},
        body: first.raw ? spliceRaw(serialized, first.raw) : serialized,
      };
    },
  );
  const result = JSON.parse(response.body) as CallToolResult;
  if (replayed)
    return { ...freeAnswer(result), replayed: { ...response.headers, 'idempotent-replayed': 'true' } };
  // The first answer, already spliced: its cost goes on the headers, nothing is left to put back.
  return { result, cost: (first as McpAnswer | null)?.cost ?? null, raw: null };
}

export const text = (value: string) => ({ type: 'text' as const, text: value });

export const datasetKey = z
  .string()
  .min(3)
  .max(200)
  .describe('Dataset key "domain/name", e.g. "equities/stock-prices" (search_datasets lists them).');

export const recipeName = z
  .enum(recipes.map((r) => r.name) as [string, ...string[]])
  .describe(recipes.map((r) => `${r.name}: ${r.description}`).join(' '));
