/**
 * The HTTP conventions clients expect of a data API, on every face: compression, revalidation of the
 * free metadata (ETag, 304, HEAD), no caching of anything tied to a credential, and CORS.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:zlib';
import type { FastifyCompressOptions } from '@fastify/compress';
import type { FastifyCorsOptions } from '@fastify/cors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Env } from '../config.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'public': the same answer for every caller (catalog, pricing, OpenAPI): ETag and revalidation. */
    cache?: 'public';
  }
}

/**
 * Route options of a free GET whose answer is the same for everyone: it answers HEAD, and its 200s
 * carry an ETag and `Cache-Control: public, no-cache` (kept, revalidated each time, 304 when unchanged).
 */
export const publicMetadata = { exposeHeadRoute: true, config: { cache: 'public' } } as const;

/** Answers worth compressing: JSON (problem+json included), NDJSON, CSV, text, HTML, scripts, SVG. */
const compressibleType =
  /^(?:text\/(?!event-stream)[\w.+-]+|application\/(?:[\w.-]+\+)?(?:json|x-ndjson|javascript|xml)|image\/svg\+xml)\s*(?:;|$)/i;

/**
 * gzip and br above 1 KB. A stream (an export) is compressed as it flows, never buffered whole, and
 * flushed at each chunk (a page of rows): the client gets each page as it is read, and the status line
 * goes out with the first page, as it does uncompressed.
 */
export const compressOptions: FastifyCompressOptions = {
  global: true,
  threshold: 1024,
  encodings: ['br', 'gzip'],
  customTypes: compressibleType,
  zlibOptions: { flush: constants.Z_SYNC_FLUSH },
  brotliOptions: {
    flush: constants.BROTLI_OPERATION_FLUSH,
    params: { [constants.BROTLI_PARAM_QUALITY]: 4 },
  },
};

const exposedHeaders = [
  'x-request-id',
  'x-token-cost',
  'x-request-tokens',
  'x-request-cost-eur',
  'x-credits-remaining',
  'x-next-cursor',
  'x-data-sample',
  'x-export-rows',
  'idempotent-replayed',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
  'content-disposition',
  'etag',
  'www-authenticate',
];

/**
 * CORS. A key or a Bearer session is sent by the page on purpose (it is not ambient like a cookie),
 * so any origin may call the API with one, and read the free routes: the answer is `*`, which no
 * browser honours for a request with cookies. Only the origins in CORS_ORIGINS get credentialed CORS;
 * the cookie's own Origin rules (src/edge/auth.ts) still apply to them. A request with no Origin is no
 * browser's cross-origin call (browsers send one on every CORS request): it gets no CORS headers, only
 * `Vary: Origin`, so a shared cache keeps the two answers apart.
 */
export function corsOptions(env: Env): FastifyCorsOptions {
  const base: FastifyCorsOptions = {
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: [
      'authorization',
      'x-api-key',
      'content-type',
      'accept',
      'idempotency-key',
      'if-none-match',
      'x-request-id',
    ],
    // Joined once: the plugin would join a list on every request.
    exposedHeaders: exposedHeaders.join(', '),
    maxAge: 600,
  };
  // Built once: the delegator runs on every request.
  const credentialed = new Map(
    env.CORS_ORIGINS.map((origin) => [origin, { ...base, origin, credentials: true }]),
  );
  const anyOrigin: FastifyCorsOptions = { ...base, origin: '*' };
  const noCors: FastifyCorsOptions = { origin: false };
  return {
    hook: 'onRequest',
    // A callback rather than a promise: no promise and no extra turn for every request.
    delegator: (request: FastifyRequest, callback) => {
      const origin = request.headers.origin;
      if (origin === undefined) return callback(null, noCors);
      // An OPTIONS that is no preflight goes on to the routes (405 naming the methods a path takes).
      if (request.method === 'OPTIONS' && !request.headers['access-control-request-method']) {
        return callback(null, noCors);
      }
      callback(null, credentialed.get(origin) ?? anyOrigin);
    },
  };
}

const etagOf = (payload: string | Buffer) =>
  `W/"${createHash('sha256').update(payload).digest('base64url').slice(0, 27)}"`;

/** RFC 9110 §13.1.2: If-None-Match matches on a weak comparison, or `*`. */
function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = etag.slice(2);
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || (trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed) === opaque;
  });
}

/**
 * onSend: the caching headers. Free metadata gets an ETag and is revalidated; everything else
 * (reads, accounts, keys, logins, refusals) is `private, no-store`, unless the route set its own
 * (the Terminal's and the docs' static files). A callback hook: an async one costs every answer a
 * promise.
 */
export function cachingHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: Error | null, payload?: unknown) => void,
): void {
  done(null, cachedPayload(request, reply, payload));
}

function cachedPayload(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  if (reply.hasHeader('cache-control')) return payload;
  const ok = reply.statusCode === 200;
  if (!(ok && request.routeOptions.config.cache === 'public')) {
    reply.header('cache-control', 'private, no-store');
    return payload;
  }
  reply.header('cache-control', 'public, no-cache');
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
  const etag = etagOf(payload);
  reply.header('etag', etag);
  if (noneMatch(request.headers['if-none-match'], etag)) {
    reply.code(304);
    return '';
  }
  return payload;
}
