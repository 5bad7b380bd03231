/**
 * The Terminal: the service's own web app, built by Vite into web/dist and served at /terminal/ with a
 * strict Content-Security-Policy; `/` redirects there. Deep links get the app's index.html (it routes in
 * the browser). It is a client of the public API (src/http/rest.ts), nothing more.
 */
import { existsSync } from 'node:fs';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { chooseType } from '../edge/accept.ts';
import { sendProblem } from '../edge/problem.ts';
import type { TypedApp } from '../edge/server.ts';
import { AppError } from '../errors.ts';
import { packagePath } from '../package-files.ts';

export const TERMINAL_PATH = '/terminal/';
const DIST = `${packagePath('web', 'dist')}/`;

/**
 * No inline script or style attribute, nothing from another origin, never framed. Styles set through
 * the CSSOM (Preact's style props, uPlot's sizing) are not style attributes and need no exception.
 */
export const TERMINAL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(reply: FastifyReply): void {
  reply
    .header('content-security-policy', TERMINAL_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin');
}

/** The app's files cost nothing and need no credential: no key is read, no limit counted. */
const staticConfig = { auth: 'none', limits: false } as const;

export function registerTerminal(app: TypedApp): void {
  app.get('/', { config: staticConfig, schema: { hide: true } }, async (_request, reply) =>
    reply.redirect(TERMINAL_PATH, 302),
  );

  app.register(
    async (scope) => {
      scope.addHook('onRoute', (route: RouteOptions) => {
        route.config = { ...(route.config as object), ...staticConfig };
        route.schema = { ...route.schema, hide: true };
      });
      scope.addHook('onRequest', async (_request, reply) => securityHeaders(reply));
      if (!existsSync(`${DIST}index.html`)) {
        const notBuilt = async (_request: FastifyRequest, reply: FastifyReply) =>
          sendProblem(
            reply,
            new AppError(
              'service_unavailable',
              'The Terminal is not built: run `npm install` (or `npm run build:web`) and restart.',
            ),
          );
        scope.get('/', notBuilt);
        scope.get('/*', notBuilt);
        return;
      }
      await scope.register(fastifyStatic, {
        root: DIST,
        prefix: '/',
        index: ['index.html'],
        redirect: false,
        // Hashed asset names change with their content; index.html is revalidated on every load.
        setHeaders(res, path) {
          res.header(
            'cache-control',
            path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
          );
        },
      });
      // A deep link (/terminal/dataset/fred/series) is a page of the app, routed in the browser.
      scope.setNotFoundHandler(async (request, reply) => {
        const wantsPage =
          (request.method === 'GET' || request.method === 'HEAD') &&
          !request.url.startsWith(`${TERMINAL_PATH}assets/`) &&
          chooseType(request.headers.accept, ['text/html', 'application/json']) === 'text/html';
        if (!wantsPage) {
          return sendProblem(reply, new AppError('not_found', `No route ${request.method} ${request.url}.`));
        }
        reply.header('cache-control', 'no-cache');
        return reply.sendFile('index.html');
      });
    },
    { prefix: '/terminal' },
  );
}
