/** What the edge (src/edge/hooks.ts) can refuse before a route runs, by the route's auth mode. */
import type { ErrorCode } from '../errors.ts';
import type { AuthMode } from './auth.ts';

const limitCodes = ['rate_limited', 'daily_limit', 'concurrency_limit', 'ip_fence'] as const;
const credentialCodes = ['invalid_key', 'key_expired', 'key_revoked', 'invalid_session'] as const;

/**
 * What the app's onRequest hook can refuse before a handler runs, by the route's `config.auth` (a
 * broken %-escape in the query, then the credential, then the limits): each route lists the group of
 * its mode beside its own codes.
 */
export const edge = {
  /** No credential is read: the limits see an anonymous request, which only the IP fence limits. */
  none: ['invalid_request', 'ip_fence'],
  /** A presented credential is checked (a ledger lookup) and its caller limited as itself. */
  optional: ['invalid_request', ...credentialCodes, 'service_unavailable', ...limitCodes],
  /** As optional, and a request without a credential is a 401. */
  required: [
    'invalid_request',
    'missing_credentials',
    ...credentialCodes,
    'service_unavailable',
    ...limitCodes,
  ],
} as const satisfies Record<AuthMode, readonly ErrorCode[]>;

/** What reading a request body can refuse, on every route whose method takes one (all but GET). */
export const bodyCodes = [
  'invalid_request',
  'malformed_json',
  'payload_too_large',
  'unsupported_media_type',
] as const satisfies readonly ErrorCode[];
