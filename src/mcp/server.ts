/**
 * The MCP server of one HTTP request. Stateless: every POST gets a fresh low-level `Server` bound to the
 * context of the call the edge authenticated, so any node behind a load balancer can answer any
 * request. The low-level Server (not McpServer) lets a refused call carry the REST problem in `_meta`,
 * bad arguments included, and keeps zod parsing of each result off the hot path.
 */
import {
  type Implementation,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import type { AppError } from '../errors.ts';
import type { Services } from '../services.ts';
import {
  COST_META_KEY,
  freeAnswer,
  type McpAnswer,
  type McpTool,
  PROBLEM_META_KEY,
  refusalResult,
  type ToolContext,
} from './tool-kit.ts';
import { createTools } from './tools.ts';

/**
 * The 2026-07-28 revision, served on the route's composed path (route.ts). A server built for it lists it
 * beside the SDK's 2025-era revisions, so connecting it to the SDK's per-request transport binds it to
 * that revision; the 2025-era `initialize` never offers it.
 */
export const MODERN_REVISION = '2026-07-28';

/** One tools/call of a tool, as the SDK's servers run it. */
export type ToolRun = (args: unknown, context: ToolContext) => Promise<McpAnswer>;

/** Where a server built for one request hands its tool's answer (its cost and raw parts) to the route. */
export type AnswerSink = (answer: McpAnswer) => void;

export interface McpFace {
  /**
   * A server for one request, bound to its context; a tools/call's answer goes to `sink` (the SDK's
   * message carries only the result). `modern` for one the route serves over the SDK's per-request
   * transport itself (createMcpHandler adds the revision to the servers it builds).
   */
  serverFor(context: ToolContext, sink: AnswerSink, era?: 'modern'): Server;
  /**
   * A tools/call of the tool named, run as the SDK's servers run it (the same handler), for the route's
   * direct path (route.ts); null when no tool has that name.
   */
  toolCall(name: string): ToolRun | null;
  /** Who answers: the servers' identity, which 2026-07-28 results carry in `_meta`. */
  serverInfo: Implementation;
  toolNames: readonly string[];
}

export function createMcpFace(deps: Services): McpFace {
  // Tool definitions and their JSON Schemas are built once per process; servers are built per request.
  const tools = createTools(deps);
  const byName = new Map<string, McpTool>(tools.map((t) => [t.definition.name, t]));
  const listing = tools.map((t) => t.definition);
  const toolNames = tools.map((t) => t.definition.name);
  const modernVersions = [...SUPPORTED_PROTOCOL_VERSIONS, MODERN_REVISION];
  const instructions = [
    'Datasets sold by the read, from a prepaid token wallet (1 token = 0.1 EUR).',
    'search_datasets, describe_dataset, estimate_cost and get_account are free.',
    `read_dataset and run_recipe burn tokens on success; each result states its cost in a text line and in _meta["${COST_META_KEY}"].`,
    'A read_dataset page holds at most about 20,000 tokens of rows: ask only for the fields and dates you need, and follow next_cursor for more.',
    `A refused call (isError) burns nothing and carries a stable code in its text and in _meta["${PROBLEM_META_KEY}"].code.`,
  ].join(' ');

  const serverInfo: Implementation = {
    name: 'token-metered-data',
    title: 'Token-metered data service',
    version: '1.0.0',
  };

  /** A call refused at the edge (a limit, arguments that are not an object): no tool runs. */
  function refused(refusal: AppError, context: ToolContext): McpAnswer {
    deps.metrics.refused(refusal.code);
    return freeAnswer(refusalResult(refusal, context.requestId));
  }

  /** One tools/call of a known tool. */
  async function run(tool: McpTool, args: unknown, context: ToolContext): Promise<McpAnswer> {
    if (context.refusal) return refused(context.refusal, context);
    const answer = await tool.call(args, context);
    // A refused call is an HTTP 200: counted here, as the edge counts REST's problem answers.
    const { result } = answer;
    const code = (result._meta?.[PROBLEM_META_KEY] as { code?: unknown } | undefined)?.code;
    if (result.isError && typeof code === 'string') deps.metrics.refused(code);
    return answer;
  }
  const toolCalls = new Map<string, ToolRun>(
    tools.map((t) => [t.definition.name, (args, context) => run(t, args, context)]),
  );

  return {
    toolNames,
    serverInfo,
    toolCall: (name) => toolCalls.get(name) ?? null,
    serverFor(context, sink, era) {
      const server = new Server(serverInfo, {
        capabilities: { tools: { listChanged: false } },
        instructions,
        ...(era === 'modern' && { supportedProtocolVersions: modernVersions }),
      });
      server.setRequestHandler('tools/list', () => ({ tools: listing }));
      server.setRequestHandler('tools/call', async (request) => {
        // An edge refusal is answered whatever tool the call names.
        if (context.refusal) return refused(context.refusal, context).result;
        const tool = byName.get(request.params.name);
        if (!tool) {
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `Unknown tool "${request.params.name}". Tools: ${toolNames.join(', ')}.`,
            { code: 'invalid_request', request_id: context.requestId },
          );
        }
        const answer = await run(tool, request.params.arguments, context);
        sink(answer);
        return server.projectCallToolResult(answer.result, tool.definition.outputSchema);
      });
      return server;
    },
  };
}
