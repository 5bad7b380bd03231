/**
 * POST /mcp/jsonrpc: MCP over Streamable HTTP, stateless, on the same Fastify pipeline as REST. The app's
 * onRequest hook authenticates (401 problem+json before MCP runs) and applies the per-key limits, so REST
 * and MCP share one budget; each POST then gets the context of its call and is answered on one of the
 * paths of answer.ts. The era is decided by the SDK's own classifier, and every answer is JSON (only a
 * subscriptions/listen streams), so a metered call's cost headers go on a response still unwritten.
 */

import { hostHeaderValidation, originValidation } from '@modelcontextprotocol/fastify';
import { localhostAllowedHostnames, validateOriginHeader } from '@modelcontextprotocol/server';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Env } from '../config.ts';
import type { Caller } from '../domain/caller.ts';
import type { Idempotency } from '../domain/idempotency.ts';
import { admits } from '../edge/accept.ts';
import { sendProblem, toAppError } from '../edge/problem.ts';
import { AppError, type ErrorCode, errorCatalogue } from '../errors.ts';
import type { Services } from '../services.ts';
import { createAnswerer } from './answer.ts';
import { isRecord, isToolCall } from './eras.ts';
import { createMcpFace } from './server.ts';
import type { ToolContext } from './tool-kit.ts';

export const MCP_PATH = '/mcp/jsonrpc';

/** Accept values MCP clients send on every call, known to admit JSON: no need to parse them each time. */
const jsonAccepts = new Set([
  'application/json, text/event-stream',
  'application/json,text/event-stream',
  'text/event-stream, application/json',
  'application/json',
]);

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

/** The context of one authenticated POST's tools/call: what its tools meter against. Never written to. */
function contextOf(
  request: FastifyRequest,
  caller: Caller,
  body: unknown,
  idempotency: Idempotency,
  refusal?: AppError,
): ToolContext {
  // The context keeps the request's logger, not the request: whatever the SDK's objects of the exchange
  // reach is promoted with them (see answer.ts).
  const log = request.log;
  // A tools/call may carry `_meta.idempotency_key`: its metered tool then answers a retry from it.
  const params = isToolCall(body) ? (body as { params?: unknown }).params : undefined;
  const meta = isRecord(params) && isRecord(params._meta) ? params._meta : undefined;
  const key = meta?.idempotency_key;
  return {
    caller,
    requestId: request.id,
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
  const answerer = createAnswerer(createMcpFace(deps), app.log);
  const limitBytes = app.initialConfig.bodyLimit ?? 1024 * 1024;
  const hosts = allowedHostnames(deps.env);

  // A child context: its error handler and hooks apply to the MCP routes only.
  app.register(async (scope) => {
    scope.addHook('onClose', () => answerer.close());
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
          const context = contextOf(request, request.caller, checked.body, deps.idempotency, refused);
          return answerer.answer(request, reply, checked.body, context);
        }
      }
      return sendProblem(reply, refused.status === 401 ? withOAuthChallenge(refused, deps) : refused);
    });

    scope.post(MCP_PATH, { config: { auth: 'required', channel: 'mcp' } }, async (request, reply) => {
      const caller = request.caller;
      if (!caller) throw new AppError('missing_credentials', 'This endpoint needs a key.');
      const accept = request.headers.accept;
      if (!(accept !== undefined && jsonAccepts.has(accept)) && !admits(accept, 'application/json')) {
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
      const context = contextOf(request, caller, checked.body, deps.idempotency, checked.refusal);
      return answerer.answer(request, reply, checked.body, context);
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
