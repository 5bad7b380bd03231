/**
 * The direct path of a plain tools/call of either era, once classified: the route runs the tool itself
 * and encodes its result as the SDK's codec of the era does. Building and connecting an SDK server per
 * call, and its schema checks of a request already classified and of our own results, cost as much
 * service CPU as the metered read itself (docs/benchmarks.md).
 */
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  type Implementation,
  type JSONRPCResultResponse,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
} from '@modelcontextprotocol/server';
import { isRecord } from './eras.ts';
import type { ToolRun } from './server.ts';

/** What a direct tools/call may carry in `_meta`: a progress token (never used: no tool reports progress). */
const LEGACY_META_KEYS = new Set(['progressToken']);
/** The same, and the 2026-07-28 envelope, which classifyInboundRequest has checked against its schema. */
const MODERN_META_KEYS = new Set([
  'progressToken',
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
]);

export interface DirectCall {
  id: string | number;
  run: ToolRun;
  args: Record<string, unknown> | undefined;
}

/**
 * A tools/call the route may answer itself: one the SDK would take as it is and hand to the same handler.
 * Only for a message the SDK has already classified (a plain 2025-era request, or a composable 2026-07-28
 * one, whose envelope the classification checked), naming one of our tools, with params of nothing but
 * `name`, an `arguments` object and a `_meta` of the keys above. Anything else (another method, an
 * unknown tool, a task, a progress token of the wrong type, other `_meta` keys) goes to the SDK, which
 * answers it or refuses it in its own words.
 */
export function directToolCall(
  message: unknown,
  era: 'legacy' | 'modern',
  toolCall: (name: string) => ToolRun | null,
): DirectCall | null {
  if (!isRecord(message) || message.method !== 'tools/call') return null;
  const { id, params } = message;
  if ((typeof id !== 'string' && typeof id !== 'number') || !isRecord(params)) return null;
  if (Object.keys(params).some((key) => key !== 'name' && key !== 'arguments' && key !== '_meta'))
    return null;
  const { name, arguments: args, _meta: meta } = params;
  if (args !== undefined && !isRecord(args)) return null;
  if (meta !== undefined) {
    const allowed = era === 'legacy' ? LEGACY_META_KEYS : MODERN_META_KEYS;
    if (!isRecord(meta) || Object.keys(meta).some((key) => !allowed.has(key))) return null;
    const token = meta.progressToken;
    if (token !== undefined && typeof token !== 'string' && !Number.isSafeInteger(token)) return null;
  }
  const run = typeof name === 'string' ? toolCall(name) : null;
  return run ? { id, run, args } : null;
}

/**
 * The answer to a direct tools/call as the SDK encodes a result of ours: the 2025-era codec sends it as it
 * is (our structuredContent is always an object and content never empty, so its projections change
 * nothing); the 2026-07-28 codec stamps `resultType` and the server's identity in `_meta` (tools/call
 * results carry no cache fields). test/mcp.direct.test.ts holds both paths to the same answers.
 */
export function directAnswer(
  id: string | number,
  result: CallToolResult,
  era: 'legacy' | 'modern',
  serverInfo: Implementation,
): JSONRPCResultResponse {
  if (era === 'legacy') return { result, jsonrpc: '2.0', id };
  // As stampResultType and stampServerInfoMeta do: what the result already says is kept.
  const meta = result._meta;
  const encoded = {
    ...result,
    resultType: (result as { resultType?: unknown }).resultType ?? 'complete',
    _meta:
      meta === undefined
        ? { [SERVER_INFO_META_KEY]: serverInfo }
        : isRecord(meta) && meta[SERVER_INFO_META_KEY] === undefined
          ? { ...meta, [SERVER_INFO_META_KEY]: serverInfo }
          : meta,
  };
  return { result: encoded, jsonrpc: '2.0', id };
}
