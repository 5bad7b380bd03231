/**
 * POST /mcp/jsonrpc: MCP over Streamable HTTP, stateless, on the same Fastify pipeline as REST. The app's
 * onRequest hook authenticates (401 problem+json before MCP runs) and applies the per-key limits, so REST
 * and MCP share one budget; each POST then gets its own server from the official SDK, on one of three
 * paths. The era is decided by the SDK's own classifier, and every answer is JSON (only a
 * subscriptions/listen streams), so a metered call's cost headers go on a response still unwritten.
 *
 * - createMcpHandler (modern-only): every 2026-07-28 request the two paths below do not take.
 * - Composed (serveComposed): a 2026-07-28 tools/call or tools/list whose headers agree with its body, on
 *   the SDK's PerRequestHTTPServerTransport with the result handed out as a message. Kept because
 *   skipping the web Request and Response measurably cuts a modern read's service CPU (docs/benchmarks.md).
 * - Legacy exchange (legacy.ts): 2025-era requests. Kept because the handler's own 2025 fallback answers
 *   over SSE, after the cost headers could be set, and builds a web Request and Response for each call.
 *
 * A plain tools/call of either era, once classified, takes the direct path (directToolCall) instead: the
 * route runs the tool itself and encodes its result as the SDK's codec of the era does. Building and
 * connecting an SDK server per call, and its schema checks of a request already classified and of our
 * own results, cost as much service CPU as the metered read itself (docs/benchmarks.md).
 */

import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { hostHeaderValidation, originValidation } from '@modelcontextprotocol/fastify';
import {
  type AuthInfo,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  createMcpHandler,
  type Implementation,
  type InboundClassificationOutcome,
  isJSONRPCRequest,
  isJsonContentType,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  LOG_LEVEL_META_KEY,
  localhostAllowedHostnames,
  PerRequestHTTPServerTransport,
  type PerRequestHTTPServerTransportOptions,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  type Server,
  SUPPORTED_PROTOCOL_VERSIONS,
  type TransportSendOptions,
  validateOriginHeader,
} from '@modelcontextprotocol/server';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Env } from '../config.ts';
import type { Caller } from '../domain/caller.ts';
import type { Idempotency } from '../domain/idempotency.ts';
import { admits } from '../edge/accept.ts';
import { sendProblem, toAppError } from '../edge/problem.ts';
import { AppError, type ErrorCode, errorCatalogue, jsonRpc } from '../errors.ts';
import type { Services } from '../services.ts';
import { costHeaders } from '../views/cost.ts';
import { serveLegacyExchange } from './legacy.ts';
import { createMcpFace, MODERN_REVISION, type ToolRun } from './server.ts';
import { type McpCall, spliceRaw } from './tool-kit.ts';

export { spliceRaw };

export const MCP_PATH = '/mcp/jsonrpc';

/** A JSON-RPC error outside any request (id null), with the catalogue's HTTP status and JSON-RPC code. */
function sendRpcError(reply: FastifyReply, code: ErrorCode, message: string): FastifyReply {
  const { status, rpc } = errorCatalogue[code];
  const data = { code, request_id: String(reply.request.id) };
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: rpc, message, data } }));
}

/**
 * Hostnames the Host and Origin headers may name (DNS-rebinding protection): the loopback names, plus
 * BASE_URL's host. Null when the service listens beyond loopback without a BASE_URL: the public name is
 * unknown, so only same-origin browser requests are admitted.
 */
export function allowedHostnames(env: Env): string[] | null {
  const names = localhostAllowedHostnames();
  if (env.BASE_URL) return [...names, new URL(env.BASE_URL).hostname];
  return ['127.0.0.1', 'localhost', '::1'].includes(env.HOST) ? names : null;
}

function hostnameOf(host: string | undefined): string | null {
  if (!host) return null;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
}

/** Headers the SDK reads; credentials and cookies stay at the edge. */
function forwardedHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (name === 'content-type' || name === 'last-event-id' || name.startsWith('mcp-')) {
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
  }
  // The route has refused an Accept that admits no JSON; the SDK's transport wants both listed.
  headers.set('accept', 'application/json, text/event-stream');
  return headers;
}

function callFrom(authInfo: AuthInfo | undefined): McpCall {
  const call = authInfo?.extra?.call;
  // The route passes the call with every request; a server without one would serve unmetered.
  if (!call) throw new Error('MCP request without an authenticated call');
  return call as McpCall;
}

function isToolCall(message: unknown): message is { id: string | number; method: 'tools/call' } {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return false;
  const { method, id } = message as { method?: unknown; id?: unknown };
  return method === 'tools/call' && (typeof id === 'string' || typeof id === 'number');
}

/**
 * The JSON-RPC message of a request refused before its body was parsed (the limits run in onRequest):
 * read it here, within the body limit, so a limited tools/call can still be answered as a tool result.
 */
async function messageOf(request: FastifyRequest, limitBytes: number): Promise<unknown> {
  if (request.body !== undefined) return request.body;
  const declared = request.headers['content-length'];
  const length = Number(declared);
  const raw = request.raw;
  // Without Content-Length (a chunked body) the limit is checked as the chunks come.
  if (declared !== undefined && (!Number.isInteger(length) || length <= 0 || length > limitBytes))
    return undefined;
  if (raw.readableDidRead || raw.readableEnded) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of raw) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * A fault of the body itself (its size, type or JSON, mapped as REST maps it), or a message nested
 * deeper than the SDK's schema checks can walk; null for anything else. The client speaks JSON-RPC, so
 * these are JSON-RPC errors here, not problem+json.
 */
function bodyFault(error: FastifyError, request: FastifyRequest): AppError | null {
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    // Thousands of levels in _meta or capabilities: the client's fault, and nothing ran.
    return new AppError('invalid_request', 'The message is nested too deeply.');
  }
  const parsing =
    error instanceof SyntaxError ||
    error.code?.startsWith('FST_ERR_CTP_') ||
    error.code === 'TMD_FORBIDDEN_JSON_KEY';
  return parsing ? toAppError(error, request) : null;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
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

/**
 * The SDK's per-request transport, handing the exchange's result out as the message itself: the route
 * encodes it once, with the stored rows spliced in (spliceRaw), so the web Response the SDK would build
 * around it, and the read of its bytes back, are skipped. A protocol error (with the HTTP status the SDK
 * gives it), and every message of an exchange that a notification has turned into an SSE stream, go
 * through the SDK's own send unchanged.
 */
class ResultTransport extends PerRequestHTTPServerTransport {
  readonly #requestId: string | number;
  #resolve!: (message: JSONRPCResultResponse) => void;
  /** The result of the exchange, when it is one the route encodes; never settles otherwise. */
  readonly result = new Promise<JSONRPCResultResponse>((resolve) => {
    this.#resolve = resolve;
  });
  #answered = false;
  #delegated = false;

  constructor(
    classification: PerRequestHTTPServerTransportOptions['classification'],
    requestId: string | number,
  ) {
    super({ classification });
    this.#requestId = requestId;
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#answered) return;
    // The protocol layer sends one well-formed response per request: no schema check is needed here.
    if (!this.#delegated && 'result' in message && message.id === this.#requestId) {
      this.#answered = true;
      this.#resolve(message);
      // As the SDK's send does after a terminal answer: the exchange ends once its answer is out.
      queueMicrotask(() => void this.close());
      return;
    }
    this.#delegated = true;
    return super.send(message, options);
  }

  /**
   * Closing the exchange makes the SDK build SdkErrors that nobody reads once the answer is out: the
   * protocol layer's teardown signal, and the rejection of the web Response this transport did not
   * build. They are built without a stack trace, which cost more than the rest of the close (about
   * 20 µs a call); the setting is restored before close returns (close runs synchronously).
   */
  override close(): Promise<void> {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return super.close();
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}

/** What the composed path answers: a result for the route to encode, or the SDK's own response. */
export type ComposedAnswer = { message: JSONRPCResultResponse } | { response: Response };

/**
 * One modern exchange on the composed path: connecting the request's server to the SDK's per-request
 * transport binds it to the classified revision (the SDK's documented behaviour); the transport then
 * answers as createMcpHandler does. Null when the server did not bind, so the caller can hand the
 * request to createMcpHandler instead of serving it in the wrong era.
 */
export async function serveComposed(
  server: Server,
  outcome: InboundClassificationOutcome & { kind: 'modern'; message: JSONRPCRequest },
  authInfo: AuthInfo,
): Promise<ComposedAnswer | null> {
  const transport = new ResultTransport(outcome.classification, outcome.message.id);
  await server.connect(transport);
  if (server.getNegotiatedProtocolVersion() !== MODERN_REVISION) {
    await server.close();
    return null;
  }
  // Once the result is out, the transport's close rejects the Response promise; the race has settled.
  return Promise.race([
    transport.result.then((message) => ({ message })),
    transport.handleMessage(outcome.message, { authInfo }).then((response) => ({ response })),
  ]);
}

/**
 * The answer with the call's stored parts put back (spliceRaw), the call letting go of them as it is
 * encoded. A read's page text (tens of KB) must not stay reachable from the call: the SDK's objects of
 * an exchange, which hold the call, are often still referenced from V8's old generation when a minor
 * GC runs (by objects that are dead but not yet collected), so whatever they reach is copied and
 * promoted on the way to the next full GC, the page text of almost every read included.
 */
function answerBytes(serialized: string, call: McpCall): Buffer | string {
  const raw = call.raw;
  call.raw = null;
  return raw ? spliceRaw(serialized, raw) : serialized;
}

/** The call of one authenticated POST: what its tools meter against and report through. */
function newCall(
  request: FastifyRequest,
  caller: Caller,
  body: unknown,
  idempotency: Idempotency,
  refusal?: AppError,
): McpCall {
  // The call keeps the request's logger, not the request: like the page text (answerBytes), whatever
  // the call reaches is promoted with it when the SDK's objects of the exchange are (a tenth fewer bytes
  // surviving each minor GC).
  const log = request.log;
  // A tools/call may carry `_meta.idempotency_key`: its metered tool then answers a retry from it.
  const params = isToolCall(body) ? (body as { params?: unknown }).params : undefined;
  const meta = isRecord(params) && isRecord(params._meta) ? params._meta : undefined;
  const key = meta?.idempotency_key;
  return {
    caller,
    requestId: request.id,
    cost: null,
    raw: null,
    ...(typeof key === 'string' && { idempotent: { key, service: idempotency } }),
    ...(refusal && { refusal }),
    logError: (error) => log.error({ err: error }, 'MCP tool failed'),
  };
}

/**
 * A tools/call whose `arguments` is there but not a JSON object: the SDK's request schema would refuse
 * it as a JSON-RPC error before any tool runs. Answered instead as every other bad argument is, a refused
 * tool call (invalid_request), with the arguments set aside so the message passes the SDK's checks.
 */
function withArgumentsChecked(body: unknown): { body: unknown; refusal?: AppError } {
  if (!isToolCall(body)) return { body };
  const params = (body as { params?: unknown }).params;
  if (!isRecord(params) || params.arguments === undefined || isRecord(params.arguments)) return { body };
  const tool = typeof params.name === 'string' ? params.name : 'the tool';
  const kind = Array.isArray(params.arguments)
    ? 'an array'
    : params.arguments === null
      ? 'null'
      : typeof params.arguments;
  return {
    body: { ...body, params: { ...params, arguments: {} } },
    refusal: new AppError(
      'invalid_request',
      `Invalid arguments for ${tool}: arguments must be a JSON object, not ${kind}.`,
      {
        errors: [{ path: '(arguments)', message: `expected an object, received ${kind}` }],
      },
    ),
  };
}

/**
 * A 401 of the MCP endpoint names where its OAuth metadata is (RFC 9728, MCP authorization), so a
 * hosted client can sign in; `error="invalid_token"` when a credential was sent and refused.
 */
function withOAuthChallenge(refused: AppError, deps: Services): AppError {
  if (!deps.oauth) return refused;
  const error = refused.code === 'missing_credentials' ? '' : ', error="invalid_token"';
  const challenge = `Bearer realm="token-metered-data", resource_metadata="${deps.oauth.resourceMetadataUrl}", scope="mcp"${error}`;
  return new AppError(refused.code, refused.message, refused.extras, {
    ...refused.headers,
    'www-authenticate': challenge,
  });
}

export function registerMcpRoutes(app: FastifyInstance, deps: Services): void {
  const face = createMcpFace(deps);
  const modern = createMcpHandler((ctx) => face.serverFor(callFrom(ctx.authInfo)), {
    legacy: 'reject',
    onerror: (error) => app.log.debug({ err: error }, 'MCP request rejected'),
  });
  const limitBytes = app.initialConfig.bodyLimit ?? 1024 * 1024;
  const hosts = allowedHostnames(deps.env);

  /**
   * Answers one JSON-RPC message of an authenticated POST: the route's own messages, and a tools/call
   * the edge refused (`call.refusal`), which goes the same way so that it is encoded for its era by the
   * SDK like any other tool result.
   */
  async function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
    call: McpCall,
  ): Promise<FastifyReply> {
    // The credential was verified at the edge; the SDK gets the call, never the secret.
    const authInfo: AuthInfo = {
      token: '',
      clientId: call.caller.key?.id ?? call.caller.account?.id ?? call.caller.wallet.id,
      scopes: [],
      extra: { call },
    };
    /** A JSON-RPC answer encoded here: the cost headers of a metered call, the stored parts put back. */
    const sendMessage = (target: FastifyReply, message: object) => {
      if (call.cost) target.headers(costHeaders(call.cost));
      else if (call.replayed) target.headers(call.replayed);
      return target.type('application/json').send(answerBytes(JSON.stringify(message), call));
    };
    const header = (name: string) => {
      const value = request.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    };
    const headers: StandardHeaders = {
      protocolVersion: header('mcp-protocol-version'),
      method: header('mcp-method'),
      name: header('mcp-name'),
    };
    const version = headers.protocolVersion;
    // A claim of the modern era is classified in full; a plain 2025-era call needs no classification.
    const outcome =
      claimsModernEra(body) || !isPlainLegacyRequest(body, version)
        ? classifyInboundRequest({
            httpMethod: 'POST',
            protocolVersionHeader: version,
            mcpMethodHeader: headers.method,
            mcpNameHeader: headers.name,
            body,
          })
        : null;
    const direct = async ({ id, run, args }: DirectCall, era: 'legacy' | 'modern') => {
      let result: CallToolResult;
      try {
        result = await run(args, call);
      } catch (error) {
        // Tools answer their own faults as refused results. Anything else: an internal error with the
        // request's id, as the SDK answers a handler that throws (without its message).
        call.logError(error);
        const internal = { code: jsonRpc.internalError, message: 'Internal error' };
        return sendMessage(reply.code(200), { jsonrpc: '2.0', id, error: internal });
      }
      return sendMessage(reply.code(200), directAnswer(id, result, era, face.serverInfo));
    };
    if (outcome === null) {
      const legacyCall = directToolCall(body, 'legacy', face.toolCall);
      if (legacyCall) return direct(legacyCall, 'legacy');
    }
    if (outcome === null || outcome.kind === 'legacy') {
      const exchange = await serveLegacyExchange(
        face.serverFor(call),
        body,
        { protocolVersion: version },
        authInfo,
      );
      if (exchange.status === 202) return reply.code(202).send();
      return sendMessage(reply.code(exchange.status), exchange.message);
    }
    const composable =
      isJsonContentType(request.headers['content-type']) && isComposableModernRequest(outcome, headers);
    const modernCall = composable ? directToolCall(outcome.message, 'modern', face.toolCall) : null;
    if (modernCall) return direct(modernCall, 'modern');
    const composed = composable
      ? await serveComposed(face.serverFor(call, 'modern'), outcome, authInfo)
      : null;
    if (composed && 'message' in composed) return sendMessage(reply.code(200), composed.message);
    // The SDK reads only the headers and the parsed body: the host part of this URL is never used.
    const response =
      composed?.response ??
      (await modern.fetch(
        new Request(`http://localhost${request.url}`, {
          method: 'POST',
          headers: forwardedHeaders(request),
        }),
        { parsedBody: body, authInfo },
      ));
    reply.code(response.status);
    response.headers.forEach((value, name) => {
      if (name !== 'content-length') reply.header(name, value);
    });
    if (response.body && response.headers.get('content-type')?.startsWith('text/event-stream')) {
      // Only a 2026-07-28 subscriptions/listen streams here; with no list that changes, the SDK
      // acknowledges it and ends the stream at once. Passed through, never buffered.
      return reply.send(Readable.fromWeb(response.body as WebReadableStream));
    }
    if (call.cost) reply.headers(costHeaders(call.cost));
    if (call.raw) return reply.send(answerBytes(await response.text(), call));
    // Nothing to put back: the bytes as the SDK encoded them.
    const payload = Buffer.from(await response.arrayBuffer());
    return payload.length > 0 ? reply.send(payload) : reply.send();
  }

  // A child context: its error handler and hooks apply to the MCP routes only.
  app.register(async (scope) => {
    scope.addHook('onClose', () => modern.close());
    if (hosts) {
      scope.addHook('onRequest', hostHeaderValidation(hosts));
      scope.addHook('onRequest', originValidation(hosts));
    } else {
      scope.addHook('onRequest', async (request, reply) => {
        const own = hostnameOf(request.headers.host);
        const result = validateOriginHeader(request.headers.origin, own ? [own] : []);
        if (!result.ok) {
          return sendRpcError(reply, 'forbidden', result.message);
        }
      });
    }

    scope.setErrorHandler(async (error: FastifyError, request, reply) => {
      const fault = bodyFault(error, request);
      if (fault)
        return sendRpcError(reply, fault.code, `${errorCatalogue[fault.code].title}: ${fault.message}`);
      const refused = toAppError(error, request);
      if (refused.code === 'internal_error') return sendRpcError(reply, 'internal_error', 'Internal error.');
      // A limit or entitlement refusal of a tool call reads, to the model, like any refused tool call.
      if (refused.status !== 401 && refused.status !== 403) {
        const message = await messageOf(request, limitBytes);
        if (isToolCall(message) && request.caller) {
          // Answered the way a served call is (the era's encoding included); the refusal runs nothing.
          for (const [name, value] of Object.entries(refused.headers)) reply.header(name, value);
          const checked = withArgumentsChecked(message);
          return answer(
            request,
            reply,
            checked.body,
            newCall(request, request.caller, checked.body, deps.idempotency, refused),
          );
        }
      }
      return sendProblem(reply, refused.status === 401 ? withOAuthChallenge(refused, deps) : refused);
    });

    scope.post(MCP_PATH, { config: { auth: 'required', channel: 'mcp' } }, async (request, reply) => {
      const caller = request.caller;
      if (!caller) throw new AppError('missing_credentials', 'This endpoint needs a key.');
      if (!admits(request.headers.accept, 'application/json')) {
        // Every answer here is JSON (an SSE stream only acknowledges subscriptions/listen).
        return sendRpcError(
          reply,
          'not_acceptable',
          'Not Acceptable: answers are application/json; send Accept: application/json (text/event-stream may be listed too).',
        );
      }
      const body = request.body;
      if (Array.isArray(body)) {
        // One message per POST keeps "one HTTP request, one call" exact for the per-key limits.
        return sendRpcError(
          reply,
          'invalid_request',
          'Invalid Request: JSON-RPC batches are not supported; send one message per POST.',
        );
      }
      const checked = withArgumentsChecked(body);
      return answer(
        request,
        reply,
        checked.body,
        newCall(request, caller, checked.body, deps.idempotency, checked.refusal),
      );
    });

    scope.route({
      method: ['GET', 'DELETE', 'PUT', 'PATCH', 'HEAD', 'OPTIONS'],
      url: MCP_PATH,
      config: { auth: 'none' },
      handler: (_request, reply) =>
        sendRpcError(
          reply.header('allow', 'POST'),
          'method_not_allowed',
          'Method not allowed: the endpoint is stateless; POST one JSON-RPC message per request.',
        ),
    });
  });
}
