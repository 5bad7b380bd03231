/**
 * Which path a message of an authenticated POST takes (route.ts): the era shortcuts that spare the
 * SDK's classification where it can only give one answer, and the modern requests the composed path
 * (composed.ts) may serve. test/mcp.routing.test.ts holds them to the SDK's own classification.
 */
import {
  type InboundClassificationOutcome,
  isJSONRPCRequest,
  type JSONRPCRequest,
  type MessageClassification,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { MODERN_REVISION } from './server.ts';

export function isToolCall(message: unknown): message is { id: string | number; method: 'tools/call' } {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return false;
  const { method, id } = message as { method?: unknown; id?: unknown };
  return method === 'tools/call' && (typeof id === 'string' || typeof id === 'number');
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Whether params carry the 2026-07-28 envelope claim (its protocol-version `_meta` key), valid or not. */
const carriesEnvelopeClaim = (params: unknown): boolean =>
  isRecord(params) && isRecord(params._meta) && PROTOCOL_VERSION_META_KEY in params._meta;

/**
 * A request that carries the 2026-07-28 envelope claim: the SDK's classification can only make it
 * modern or a rejection, and both are answered by the modern handler, which classifies it in full. The
 * shapes it would still call legacy (an initialize, a posted response, a notification) are left to
 * classifyInboundRequest, so the routing never differs from the SDK's; this only saves classifying twice.
 */
export function claimsModernEra(body: unknown): boolean {
  if (!isRecord(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string') return false;
  if (body.method === 'initialize' || 'result' in body || 'error' in body) return false;
  if (typeof body.id !== 'string' && typeof body.id !== 'number') return false;
  return carriesEnvelopeClaim(body.params);
}

/**
 * A 2025-era request that the SDK's classifier can only call legacy: a valid JSON-RPC request (the SDK's
 * own schema) that is not `initialize` or a posted response, carries no envelope claim, and names one of
 * the SDK's 2025-era revisions in MCP-Protocol-Version, exactly, or none. Anything else is classified in
 * full by classifyInboundRequest; this only saves its schema checks on the common 2025-era call.
 */
export function isPlainLegacyRequest(body: unknown, protocolVersion: string | undefined): boolean {
  if (!isRecord(body) || 'result' in body || 'error' in body || body.method === 'initialize') return false;
  if (protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) return false;
  return !carriesEnvelopeClaim(body.params) && isJSONRPCRequest(body);
}

/** The standard MCP headers of a request, as sent (several values joined by ", "). */
export interface StandardHeaders {
  protocolVersion: string | undefined;
  method: string | undefined;
  name: string | undefined;
}

/**
 * Whether a request the SDK classified modern may be served on the composed path: the SDK's
 * classifyInboundRequest and PerRequestHTTPServerTransport, the building blocks createMcpHandler
 * documents for transport-neutral routing, without the web Request its fetch face needs. That path
 * leaves out the handler's own checks after classification, so it takes only requests that pass them
 * by construction: a tools/call or tools/list request (not a notification) claiming 2026-07-28, the
 * revision this server is built for, with its MCP-Protocol-Version and Mcp-Method headers present (the
 * classifier has already matched both to the body) and, for tools/call, an Mcp-Name header that is
 * params.name exactly (not its Base64 form). Everything else, subscriptions/listen, other revisions and
 * any header the handler would reject included, goes to createMcpHandler.
 */
export function isComposableModernRequest(
  outcome: InboundClassificationOutcome,
  headers: StandardHeaders,
): outcome is InboundClassificationOutcome & { kind: 'modern'; message: JSONRPCRequest } {
  if (outcome.kind !== 'modern' || outcome.messageKind !== 'request') return false;
  if (outcome.classification.revision !== MODERN_REVISION) return false;
  if (headers.protocolVersion === undefined || headers.method === undefined) return false;
  const { method, params } = outcome.message;
  if (method === 'tools/list') return true;
  if (method !== 'tools/call' || !isRecord(params)) return false;
  return typeof params.name === 'string' && headers.name === params.name && !params.name.startsWith('=?');
}

/** What a modern request's classification rests on, or null for a request the SDK must classify afresh. */
function verdictKey(body: unknown, headers: StandardHeaders): string | null {
  if (!isRecord(body) || body.jsonrpc !== '2.0') return null;
  const { id, method, params } = body;
  if (typeof method !== 'string' || method === 'initialize' || !isRecord(params)) return null;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return null;
  for (const key in body) if (!REQUEST_KEYS.has(key)) return null;
  for (const key in params) if (!PARAMS_KEYS.has(key)) return null;
  if (!isRecord(params._meta) || (params.arguments !== undefined && !isRecord(params.arguments))) return null;
  const { protocolVersion, method: methodHeader, name } = headers;
  return JSON.stringify([
    protocolVersion,
    methodHeader,
    name,
    method,
    typeof id,
    typeof params.name,
    params._meta,
  ]);
}
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS = new Set(['name', 'arguments', '_meta']);

/**
 * The SDK's classification of 2026-07-28 requests, kept for the ones it made modern. Such a request is
 * a JSON-RPC request of exactly `jsonrpc`, `id`, `method` and `params` (of `name`, an `arguments`
 * object and `_meta`): what the SDK's checks read of it is its headers, its method, the types of its
 * id and name, and its `_meta` envelope (the loose params schema never looks into `arguments`). A
 * client sends the same envelope and headers on every call, so the next such call gets the same
 * verdict without the SDK's schema checks (about 10 µs, most of it the checks that it is no JSON-RPC
 * response). test/mcp.routing.test.ts holds the kept verdicts to the SDK's.
 */
export class ModernVerdicts {
  readonly #verdicts = new Map<string, MessageClassification>();
  readonly #classify: (body: unknown, headers: StandardHeaders) => InboundClassificationOutcome;

  constructor(classify: (body: unknown, headers: StandardHeaders) => InboundClassificationOutcome) {
    this.#classify = classify;
  }

  classify(body: unknown, headers: StandardHeaders): InboundClassificationOutcome {
    const key = verdictKey(body, headers);
    const known = key === null ? undefined : this.#verdicts.get(key);
    if (known)
      return {
        kind: 'modern',
        messageKind: 'request',
        message: body as JSONRPCRequest,
        classification: { ...known },
      };
    const outcome = this.#classify(body, headers);
    if (key !== null && outcome.kind === 'modern' && outcome.messageKind === 'request') {
      // A bound on what clients can make it keep: envelopes differ by client, not by call.
      if (this.#verdicts.size >= MAX_VERDICTS) this.#verdicts.clear();
      this.#verdicts.set(key, { ...outcome.classification });
    }
    return outcome;
  }
}
const MAX_VERDICTS = 256;
