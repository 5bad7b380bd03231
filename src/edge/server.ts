/**
 * The HTTP server every face is mounted on: Fastify with the request log, timeouts, JSON bodies only,
 * and problem+json for what the HTTP parser or the router refuses before any hook runs.
 */
import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, {
  errorCodes,
  type FastifyBaseLogger,
  type FastifyInstance,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import pino from 'pino';
import type { Env } from '../config.ts';
import { newRequestId } from '../domain/ids.ts';
import { AppError, toProblem } from '../errors.ts';
import { parseJsonBody } from './json-body.ts';
import { OpenExports } from './open-exports.ts';
import { sendProblem, toAppError } from './problem.ts';
import { maskCredentials, RequestLog } from './request-log.ts';

export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

const requestIdPattern = /^[A-Za-z0-9._-]{1,64}$/;
export const BODY_LIMIT_BYTES = 64 * 1024;

declare module 'fastify' {
  interface FastifyInstance {
    /** The exports streaming now, for a shutdown that has to cut them (refunded). */
    openExports: OpenExports;
  }
}

export interface ServerOptions {
  /** `false`: no request log; `stream`: where the lines go (standard output by default). */
  logger?: boolean | { level: string; stream?: NodeJS.WritableStream };
}

/** Node's own record of the response being written on a connection (pipelined ones queue behind it). */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

/** Runs `then` once no response is being written on the socket (at once if none is). */
function afterResponsesInFlight(socket: Socket, then: () => void): void {
  const inFlight = (socket as HttpSocket)._httpMessage;
  // A request not received whole is the one refused (its body never came): nothing to wait for.
  if (!inFlight || socket.destroyed || !inFlight.req.complete) {
    then();
    return;
  }
  let done = false;
  const next = () => {
    if (done) return;
    done = true;
    // Node hands the socket to the next queued response as this one finishes: look again after that.
    setImmediate(() => afterResponsesInFlight(socket, then));
  };
  inFlight.once('finish', next);
  inFlight.once('close', next);
}

/** How long a request log line may wait in the buffer before it is written. */
const LOG_FLUSH_MS = 1000;

/**
 * Standard output for the request log, written 4 KB at a time (and at least every second, and at once
 * as the process exits): a write per line was a system call per request.
 */
function bufferedStdout(): { stream: pino.DestinationStream; close: () => void } {
  // A standard output that stops reading drops lines past 16 MB rather than growing without end.
  const destination = pino.destination({
    dest: 1,
    minLength: 4096,
    maxLength: 16 * 1024 * 1024,
    sync: false,
  });
  const timer = setInterval(() => destination.flush(), LOG_FLUSH_MS).unref();
  const flushNow = () => {
    try {
      destination.flushSync();
    } catch {
      // Never opened, or already closed: nothing left to write.
    }
  };
  process.once('exit', flushNow);
  return {
    stream: destination,
    close: () => {
      clearInterval(timer);
      process.removeListener('exit', flushNow);
      flushNow();
    },
  };
}

export function createServer(env: Env, options: ServerOptions = {}): FastifyInstance {
  const trustProxy = env.TRUST_PROXY ? env.TRUST_PROXY.split(',').map((s) => s.trim()) : false;
  const operatorSecrets = [env.ADMIN_TOKEN, env.METRICS_TOKEN, env.JWT_SECRET].filter(
    (secret): secret is string => typeof secret === 'string' && secret.length > 0,
  );
  const given = typeof options.logger === 'object' ? options.logger.stream : undefined;
  const level = typeof options.logger === 'object' ? options.logger.level : env.LOG_LEVEL;
  const stdout = options.logger === false || given || level === 'silent' ? null : bufferedStdout();
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : {
            level,
            ...(given ? { stream: given } : stdout ? { stream: stdout.stream } : {}),
            // Requests are logged by method, URL and client; headers are not logged at all. A credential
            // a client put in the URL (where it does not belong) is masked.
            serializers: {
              req: (request: { method: string; url: string; ip?: string }) => ({
                method: request.method,
                url: maskCredentials(request.url, operatorSecrets),
                remoteAddress: request.ip,
              }),
            },
          },
    bodyLimit: BODY_LIMIT_BYTES,
    // A request must arrive whole (headers and body) within REQUEST_TIMEOUT_MS, or its connection is
    // closed (408): otherwise a body that never ends holds a socket for good, and a few thousand such
    // requests, each one admission of the IP fence, exhaust the process's file descriptors. Responses
    // (a long export to a slow reader) are not timed. Checked every second.
    requestTimeout: env.REQUEST_TIMEOUT_MS,
    http: {
      headersTimeout: Math.min(60_000, env.REQUEST_TIMEOUT_MS),
      connectionsCheckingInterval: 1000,
      // Node answers a missing Host with a bare 400 of its own; the edge hooks refuse it (and a repeated
      // Host) as problem+json with a request id instead.
      requireHostHeader: false,
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
    // A valid request pipelined before the bad one is answered first: the refusal waits for the
    // responses in flight on the socket, so they are neither cut off nor left unanswered.
    clientErrorHandler(error, socket) {
      if ((error as NodeJS.ErrnoException).code === 'ECONNRESET' || socket.destroyed) return;
      afterResponsesInFlight(socket, () => refuseOnSocket(error, socket));
    },
  });

  function refuseOnSocket(error: Error, socket: Socket): void {
    if (socket.destroyed) return;
    const code = (error as NodeJS.ErrnoException).code;
    const refusal =
      code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError(
            'request_timeout',
            `The request (headers and body) did not arrive whole within ${env.REQUEST_TIMEOUT_MS} ms.`,
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
  }

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
  if (stdout) app.addHook('onClose', async () => stdout.close());
  return app;
}
