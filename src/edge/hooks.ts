/**
 * What runs before every route of every face: the request id, refusals while the node stops, URL
 * checks, the credential, the limits and the route's allowed kinds; then problem+json for every error,
 * and 405 rather than 404 for a path served under other methods.
 */
import compress from '@fastify/compress';
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { AppError, serviceUnavailable } from '../errors.ts';
import type { EdgeServices } from '../services.ts';
import { assertAllowed, resolveCaller } from './auth.ts';
import { cachingHeaders, compressOptions, corsOptions } from './conventions.ts';
import { brokenQueryEscape, controlInPath, malformedRequestHead } from './guards.ts';
import { applyLimits } from './limits.ts';
import { problemCodeOf, sendProblem, toAppError } from './problem.ts';

export function installEdgeHooks(app: FastifyInstance, deps: EdgeServices): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  const publicHost = deps.env.BASE_URL ? new URL(deps.env.BASE_URL).host : undefined;
  // Hooks with nothing to await take a callback: an async hook costs every request a promise. Fastify
  // turns what they throw into the error, as for an async hook.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    const malformed = malformedRequestHead(request.raw);
    if (malformed) {
      reply.header('connection', 'close');
      throw new AppError('invalid_request', malformed);
    }
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
    done();
  });
  // CORS between the two: a preflight (which carries no credential) is answered here, and every
  // refusal below (401, 403, 429) carries the CORS headers, so a page can read its problem.
  void app.register(cors, corsOptions(deps.env));
  app.addHook('onRequest', async (request, reply) => {
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

  app.addHook('onSend', cachingHeaders);
  app.addHook('onResponse', (request, reply, done) => {
    deps.metrics.request(
      {
        route: request.routeOptions.url ?? 'unmatched',
        method: request.method,
        status_class: `${Math.floor(reply.statusCode / 100)}xx`,
      },
      reply.elapsedTime / 1000,
    );
    const code = problemCodeOf(reply);
    if (code !== undefined) deps.metrics.refused(code);
    done();
  });
  void app.register(compress, compressOptions);

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
}
