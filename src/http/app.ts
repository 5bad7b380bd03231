/** buildApp(deps): the REST application, without listening. No I/O happens at import. */
import { STATUS_CODES } from 'node:http';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  errorCodes,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import { jsonSchemaTransform, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../deps.ts';
import { newRequestId } from '../domain/ids.ts';
import { sendProblem, toAppError } from '../edge/problem.ts';
import { AppError, serviceUnavailable, toProblem } from '../errors.ts';
import { registerMcpRoutes } from '../mcp/route.ts';
import { assertAllowed, resolveCaller } from './auth-hook.ts';
import { applyLimits } from './limits-hook.ts';
import { OpenExports } from './open-exports.ts';
import { transformObject } from './openapi.ts';
import { registerAdminRoutes } from './routes/admin.ts';
import { registerAuthRoutes } from './routes/auth.ts';
import { registerBillingRoutes } from './routes/billing.ts';
import { registerCatalogRoutes } from './routes/catalog.ts';
import { registerDataRoutes } from './routes/data.ts';
import { registerExportRoutes } from './routes/export.ts';
import { registerKeyRoutes } from './routes/keys.ts';
import { registerManualRoutes } from './routes/manual.ts';
import { registerMeRoutes } from './routes/me.ts';
import { registerMetaRoutes } from './routes/meta.ts';
import { registerRecipeRoutes } from './routes/recipes.ts';

export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

const requestIdPattern = /^[A-Za-z0-9._-]{1,64}$/;
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Whether the query string has a %-escape that is malformed or not UTF-8. The query parser decodes such
 * an escape leniently (as the literal text, or U+FFFD), which would read, and charge, for a filter value
 * the client never meant; the router already refuses the same in the path.
 */
function brokenQueryEscape(url: string): boolean {
  const start = url.indexOf('?');
  if (start < 0 || url.indexOf('%', start) < 0) return false;
  try {
    decodeURIComponent(url.slice(start + 1));
    return false;
  } catch {
    return true;
  }
}

/**
 * Whether the path holds an escaped control character (%00-%1F, %7F): no key, account, dataset or
 * recipe is named so, and PostgreSQL refuses a NUL in text outright (a 500 had been the answer).
 */
function controlInPath(url: string): boolean {
  const end = url.indexOf('?');
  const path = end < 0 ? url : url.slice(0, end);
  if (path.indexOf('%') < 0) return false;
  try {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
    return /[\u0000-\u001f\u007f]/.test(decodeURIComponent(path));
  } catch {
    return false; // a broken escape: the router refuses it
  }
}

/**
 * A JSON body with a key that would reach an object's prototype (`__proto__`, or `constructor` holding
 * `prototype`): refused, as Fastify's own parser refuses it, but said as such rather than "not JSON".
 */
export class ForbiddenJsonKey extends Error {
  readonly code = 'TMD_FORBIDDEN_JSON_KEY';
  readonly statusCode = 400;
}

/** Walks a parsed body (without recursion: bodies may nest thousands deep) for a forbidden key. */
function refuseForbiddenKeys(root: unknown): void {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    for (const key of Object.keys(node)) {
      const child = (node as Record<string, unknown>)[key];
      const prototypeHolder =
        key === 'constructor' &&
        child !== null &&
        typeof child === 'object' &&
        Object.hasOwn(child, 'prototype');
      if (key === '__proto__' || prototypeHolder) {
        throw new ForbiddenJsonKey('the body holds a __proto__ or constructor.prototype key');
      }
      stack.push(child);
    }
  }
}

/**
 * JSON bodies, as Fastify's own parser takes them; only a body whose text could name a forbidden key
 * (literally, or behind a \u escape) is walked for one.
 */
function parseJsonBody(text: string): unknown {
  // A leading byte order mark is not part of the JSON (Fastify's own parser drops it too).
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body === '') throw new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY();
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  }
  if (body.includes('"__proto__"') || body.includes('"constructor"') || body.includes('\\u')) {
    refuseForbiddenKeys(value);
  }
  return value;
}

const maskShapes = (text: string) =>
  text
    .replace(/tmd_(sbx|fpt|live)_[A-Za-z0-9_-]*/g, 'tmd_$1_[redacted]')
    .replace(/eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g, '[redacted-jwt]');

/**
 * A URL with anything shaped like a key or a session JWT replaced, for the logs. The query parser
 * decodes %-escapes, so a key sent as `tmd_live%5F…` is still that key: the URL is searched with its
 * ASCII escapes decoded too, and when that form hides a credential it is the one logged, masked.
 */
export function maskCredentials(url: string): string {
  const masked = maskShapes(url);
  const decoded = url.replace(/%[0-7][0-9A-Fa-f]/g, (hex) =>
    String.fromCharCode(Number.parseInt(hex.slice(1), 16)),
  );
  if (decoded === url) return masked;
  const maskedDecoded = maskShapes(decoded);
  return maskedDecoded === decoded ? masked : maskedDecoded;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The exports streaming now, for a shutdown that has to cut them (refunded). */
    openExports: OpenExports;
  }
}

/** What the request log says of a request. */
const requestLine = (request: FastifyRequest, reply: FastifyReply) => ({
  req: request,
  res: { statusCode: reply.statusCode },
  responseTime: reply.elapsedTime,
  // Which key (its id, never its secret), when the request presented one that resolved.
  keyId: request.caller?.key?.id,
});

/**
 * The request log: one line per request, written when it ends, with what an operator looks for in one
 * place (method, masked URL, client, status, time, key id), instead of Fastify's two lines (the second
 * without the URL).
 */
class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) reply.log.error({ ...requestLine(request, reply), err: error }, 'request errored');
    else reply.log.info(requestLine(request, reply), 'request completed');
  }

  /**
   * A streamed response (an export) that ended before it was whole: the client hung up, or the stream
   * broke (a store failure, a shutdown). Its one line, as no `request completed` follows.
   */
  override streamError(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    if ((error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') {
      reply.log.info(requestLine(request, reply), 'request ended before its response was complete');
    } else {
      reply.log.warn({ ...requestLine(request, reply), err: error }, 'response broken off');
    }
  }
}

export interface AppOptions {
  /** `false`: no request log; `stream`: where the lines go (standard output by default). */
  logger?: boolean | { level: string; stream?: NodeJS.WritableStream };
}

export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<FastifyInstance> {
  const trustProxy = deps.env.TRUST_PROXY ? deps.env.TRUST_PROXY.split(',').map((s) => s.trim()) : false;
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : {
            level: typeof options.logger === 'object' ? options.logger.level : deps.env.LOG_LEVEL,
            ...(typeof options.logger === 'object' && options.logger.stream
              ? { stream: options.logger.stream }
              : {}),
            // Requests are logged by method, URL and client; headers are not logged at all. A credential
            // a client put in the URL (where it does not belong) is masked.
            serializers: {
              req: (request: { method: string; url: string; ip?: string }) => ({
                method: request.method,
                url: maskCredentials(request.url),
                remoteAddress: request.ip,
              }),
            },
          },
    bodyLimit: BODY_LIMIT_BYTES,
    // A request must arrive whole (headers and body) within REQUEST_TIMEOUT_MS, or its connection is
    // closed (408): otherwise a body that never ends holds a socket for good, and a few thousand such
    // requests, each one admission of the IP fence, exhaust the process's file descriptors. Responses
    // (a long export to a slow reader) are not timed. Checked every second.
    requestTimeout: deps.env.REQUEST_TIMEOUT_MS,
    http: {
      headersTimeout: Math.min(60_000, deps.env.REQUEST_TIMEOUT_MS),
      connectionsCheckingInterval: 1000,
    },
    logController: new RequestLog(),
    // A HEAD of a metered GET would burn tokens and return no data: not routed.
    exposeHeadRoutes: false,
    // Requests that arrive while the node shuts down get a problem+json 503 from the onRequest hook
    // below, not Fastify's own JSON one.
    return503OnClosing: false,
    trustProxy,
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && requestIdPattern.test(given) ? given : newRequestId();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // A URL the router cannot take apart (a broken %-escape, a path segment over maxParamLength) is
    // answered before any hook runs: as problem+json too, with its request id.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      return sendProblem(reply, toAppError(error, request));
    },
    // A request Node's parser gives up on (it never arrived whole, headers too large, not HTTP) has no
    // route or reply: answered here on the socket, as problem+json like every other refusal, and closed.
    clientErrorHandler(error, socket) {
      if ((error as NodeJS.ErrnoException).code === 'ECONNRESET' || socket.destroyed) return;
      const code = (error as NodeJS.ErrnoException).code;
      const refusal =
        code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new AppError(
              'request_timeout',
              `The request (headers and body) did not arrive whole within ${deps.env.REQUEST_TIMEOUT_MS} ms.`,
            )
          : code === 'HPE_HEADER_OVERFLOW'
            ? new AppError('headers_too_large', 'The request headers are larger than this service takes.')
            : new AppError('invalid_request', 'The request is not well-formed HTTP/1.1.');
      const requestId = newRequestId();
      const body = JSON.stringify(toProblem(refusal, requestId));
      if (socket.writable) {
        socket.write(
          `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy(error);
    },
  });

  // Bodies are JSON only. Fastify's default text/plain parser would hand a string to the schema (a 400
  // about the body's shape) where the media type is the fault: 415. An empty text/plain body (what a
  // browser's fetch sends with body '') is no body, as on the routes whose body is optional.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') done(null, undefined);
    else done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE('text/plain'), undefined);
  });
  app.setValidatorCompiler(validatorCompiler);
  // Responses are built by the handlers from typed values; the zod response schemas document them.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.decorateRequest('caller', null);
  app.decorateRequest('limitSlot', null);
  app.decorate('openExports', new OpenExports());
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  const publicHost = deps.env.BASE_URL ? new URL(deps.env.BASE_URL).host : undefined;
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (closing) {
      // Fastify has already set Connection: close; a load balancer retries on another node.
      throw serviceUnavailable('This node is shutting down; retry, and another node will answer.');
    }
    if (brokenQueryEscape(request.url)) {
      throw new AppError(
        'invalid_request',
        'The query string holds a broken %-escape (a % not followed by two hex digits, or bytes that are not UTF-8).',
      );
    }
    if (controlInPath(request.url)) {
      throw new AppError('invalid_request', 'The path holds a control character (%00 to %1F, or %7F).');
    }
    // Routes without a declared mode still identify a presented credential, so a keyed caller is
    // limited as itself (and skips the IP fence where DECISIONS says so) on free routes too.
    // No route (404, 405): nothing to authorise, so no credential is read (an admin token sent to a
    // path the admin API does not have is not a bad key).
    const mode =
      request.routeOptions.url === undefined ? 'none' : (request.routeOptions.config.auth ?? 'optional');
    if (mode !== 'none') {
      try {
        request.caller = await resolveCaller(
          request,
          (token, channel) => deps.auth.authenticate(token, channel),
          mode,
          request.routeOptions.config.channel ?? 'rest',
          publicHost,
        );
      } catch (error) {
        // A refused credential is an anonymous request to the limits: it counts against its IP's
        // fence (and is refused with 429 once that is full), so guessing keys is no way around it.
        // So does a session cookie refused for its origin (403).
        if (error instanceof AppError && (error.status === 401 || error.status === 403)) {
          await applyLimits(deps, request, reply);
        }
        throw error;
      }
    }
    await applyLimits(deps, request, reply);
    assertAllowed(request.caller, request.routeOptions.config.allow);
  });

  app.setErrorHandler((error, request, reply) => sendProblem(reply, toAppError(error, request)));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] as string;
    // A path that exists for other methods: 405 naming them, not 404.
    const allowed = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter(
      (method) => app.findRoute({ method: method as 'GET', url: path }) !== null,
    );
    if (allowed.length > 0) {
      return sendProblem(
        reply.header('allow', allowed.join(', ')),
        new AppError(
          'method_not_allowed',
          `${request.method} is not supported on ${path}; use ${allowed.join(' or ')}.`,
        ),
      );
    }
    return sendProblem(reply, new AppError('not_found', `No route ${request.method} ${path}.`));
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Token-metered data service',
        version: '1.0.0',
        description:
          'Financial, economic, regulatory and open datasets sold by the read. Every read burns tokens from a prepaid wallet; cost headers report each charge.',
      },
      servers: deps.env.BASE_URL ? [{ url: deps.env.BASE_URL }] : [],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A key (tmd_sbx_, tmd_fpt_, tmd_live_) or a session JWT.',
          },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN, for /api/v1/admin only.' },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  const typed = app.withTypeProvider<ZodTypeProvider>();
  registerMetaRoutes(typed, deps);
  registerAuthRoutes(typed, deps);
  registerCatalogRoutes(typed, deps);
  registerDataRoutes(typed, deps);
  registerRecipeRoutes(typed, deps);
  registerMeRoutes(typed, deps);
  registerKeyRoutes(typed, deps);
  registerExportRoutes(typed, deps, app.openExports);
  registerBillingRoutes(typed, deps);
  registerManualRoutes(typed);
  registerAdminRoutes(typed, deps);
  registerMcpRoutes(app, deps);
  return app;
}
