/** Authentication at the edge of every route that declares `config.auth`. */
import type { FastifyRequest } from 'fastify';
import { looksLikeSession } from '../domain/auth.ts';
import type { Caller, CredentialKind } from '../domain/caller.ts';
import type { Channel } from '../domain/pricing.ts';
import { AppError } from '../errors.ts';

export type AuthMode = 'none' | 'optional' | 'required';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** Credential kinds that may call the route; others get 403 forbidden. */
    allow?: readonly CredentialKind[];
    /** The face a metered call on this route comes through (default rest). */
    channel?: Channel;
  }
}

export const SESSION_COOKIE = 'tmd_session';
export const WWW_AUTHENTICATE = 'Bearer realm="token-metered-data"';

/** The cookie's value; null when its percent-escapes are broken (a bad credential, not a fault of ours). */
function cookieValue(header: string | undefined, name: string): string | null | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return null;
      }
    }
  }
  return undefined;
}

/** Set on a refusal of the session cookie: the browser drops a cookie that can no longer work. */
export const CLEAR_SESSION_COOKIE = `${SESSION_COOKIE}=; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=0`;

/**
 * The presented credential, from `Authorization: Bearer`, `X-API-Key` or the session cookie, and
 * whether it is the cookie (token null: a cookie that cannot be decoded).
 */
export function presentedCredential(
  request: FastifyRequest,
): { token: string; fromCookie: false } | { token: string | null; fromCookie: true } | undefined {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
    if (!match) {
      throw new AppError(
        'invalid_key',
        'Send the key as "Authorization: Bearer <key>" or "X-API-Key: <key>".',
        {},
        { 'www-authenticate': WWW_AUTHENTICATE },
      );
    }
    return { token: match[1] as string, fromCookie: false };
  }
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.length > 0) {
    // X-API-Key carries keys only; a session goes in Authorization or the cookie.
    if (looksLikeSession(apiKey.trim())) {
      throw unauthenticated(
        new AppError(
          'invalid_key',
          'X-API-Key takes a key; send a session token as "Authorization: Bearer <token>".',
        ),
      );
    }
    return { token: apiKey.trim(), fromCookie: false };
  }
  const cookie = cookieValue(request.headers.cookie, SESSION_COOKIE);
  if (cookie === undefined) return undefined;
  // The cookie holds a session only: anything else in it (a key included) is a malformed cookie.
  return { token: cookie !== null && looksLikeSession(cookie) ? cookie : null, fromCookie: true };
}

export function unauthenticated(error: AppError): AppError {
  return new AppError(error.code, error.message, error.extras, {
    ...error.headers,
    'www-authenticate': WWW_AUTHENTICATE,
  });
}

export function missingCredentials(): AppError {
  return unauthenticated(
    new AppError(
      'missing_credentials',
      'This endpoint needs a key: send "Authorization: Bearer <key>" or "X-API-Key: <key>". POST /api/v1/auth/sandbox issues a free one.',
    ),
  );
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether an Origin header names this service: its request's Host, or BASE_URL's host. */
function ownOrigin(origin: string, request: FastifyRequest, publicHost: string | undefined): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed page, a file) or garbage: not one of ours
  }
  // An Origin is a serialized origin (scheme://host[:port]) and nothing more: a value with userinfo, a
  // path or any other part no browser sends (`http://evil.example@host`) is not one of ours.
  if (url.origin !== origin) return false;
  return url.host === request.headers.host || url.host === publicHost;
}

/**
 * Whether the route burns tokens: it declares the 402 refusals of a metered read (insufficient_tokens,
 * not_entitled, spending_cap_reached). Read from the route's own schema, so a metered route added
 * later is covered without a list to keep.
 */
export function routeBurnsTokens(request: FastifyRequest): boolean {
  const response = request.routeOptions.schema?.response as Record<string, unknown> | undefined;
  return response !== undefined && (402 in response || '402' in response);
}

/**
 * Whether a request that would use the session cookie may not, for where it comes from. A browser sends
 * the cookie (SameSite=Strict) with a form, fetch or image from any page of the same site, subdomains
 * included, and a POST with an empty text/plain body needs no CORS preflight.
 * - An unsafe method whose Origin is neither this request's Host nor BASE_URL's host is refused (403),
 *   before the cookie is read. Requests without an Origin (curl, the CLI, servers) are no forgeries.
 * - A read that burns tokens changes the wallet even as a GET: it is served only to the service's own
 *   pages, shown by an Origin of ours or by Fetch Metadata (`Sec-Fetch-Site: same-origin`, which
 *   browsers send on every request and pages cannot forge). A same-site page's <img> or link gets
 *   neither, so it cannot spend the user's tokens. Keys and Bearer sessions in headers are unaffected.
 */
function crossOriginCookieUse(request: FastifyRequest, publicHost: string | undefined): boolean {
  const origin = request.headers.origin;
  if (routeBurnsTokens(request)) {
    if (origin !== undefined) return !ownOrigin(origin, request, publicHost);
    return request.headers['sec-fetch-site'] !== 'same-origin';
  }
  if (origin === undefined || SAFE_METHODS.has(request.method)) return false;
  return !ownOrigin(origin, request, publicHost);
}

export async function resolveCaller(
  request: FastifyRequest,
  authenticate: (token: string, channel: Channel) => Promise<Caller>,
  mode: AuthMode,
  channel: Channel,
  publicHost?: string,
): Promise<Caller | null> {
  const presented = presentedCredential(request);
  if (presented === undefined) {
    if (mode === 'required') throw missingCredentials();
    return null;
  }
  // The MCP route checks every request's Origin itself (DNS rebinding), with a JSON-RPC refusal.
  if (presented.fromCookie && channel !== 'mcp' && crossOriginCookieUse(request, publicHost)) {
    if (mode === 'optional') return null;
    throw new AppError(
      'forbidden',
      routeBurnsTokens(request)
        ? 'A read that burns tokens takes the session cookie only from this service\'s own pages (an Origin of ours or Sec-Fetch-Site: same-origin): send a key or the session token as "Authorization: Bearer <token>" instead.'
        : 'The session cookie is not accepted from another origin: send the session token as "Authorization: Bearer <token>" instead.',
      { origin: request.headers.origin },
    );
  }
  // A session cookie that no longer works (malformed, logged out, expired, another secret): on a route
  // that needs no credential the request goes on without it, so a browser is never locked out of
  // logging in again; where one is needed, the 401 also clears the cookie.
  const cookieRefused = (error: AppError) => {
    if (mode === 'optional') return null;
    throw unauthenticated(
      new AppError(error.code, error.message, error.extras, {
        ...error.headers,
        'set-cookie': CLEAR_SESSION_COOKIE,
      }),
    );
  };
  if (presented.token === null) {
    return cookieRefused(
      new AppError('invalid_session', 'The session cookie is malformed: log in again for a new one.'),
    );
  }
  try {
    return await authenticate(presented.token, channel);
  } catch (error) {
    if (!(error instanceof AppError && error.status === 401)) throw error;
    if (presented.fromCookie) return cookieRefused(error);
    throw unauthenticated(error);
  }
}

/**
 * 403 for a working credential of a kind the route does not take (a key on the session-only routes).
 * Checked after the caller's limits: the refusal counts against them like any other request.
 */
export function assertAllowed(caller: Caller | null, allow: readonly CredentialKind[] | undefined): void {
  if (!caller || !allow || allow.includes(caller.kind)) return;
  throw new AppError('forbidden', `A ${caller.kind.replace('_', '-')} credential cannot use this endpoint.`, {
    credential: caller.kind,
  });
}
