/**
 * The one error type of the service and its closed catalogue of codes. Transports render it:
 * REST as RFC 9457 problem+json, MCP as a tool result with isError or, for a fault of the message
 * itself, a JSON-RPC error. The domain never builds responses.
 */

/** JSON-RPC 2.0's error codes, and -32000 (its server-error range) for the rest, as the MCP SDK uses them. */
export const jsonRpc = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  serverError: -32000,
} as const;

/** Each code's HTTP status, and its JSON-RPC error code where MCP answers it as a JSON-RPC error. */
export const errorCatalogue = {
  invalid_request: { status: 400, rpc: jsonRpc.invalidRequest, title: 'Invalid request' },
  invalid_cursor: { status: 400, rpc: jsonRpc.serverError, title: 'Invalid cursor' },
  invalid_signature: { status: 400, rpc: jsonRpc.serverError, title: 'Invalid webhook signature' },
  malformed_json: { status: 400, rpc: jsonRpc.parseError, title: 'Malformed JSON body' },
  invalid_reset_token: { status: 400, rpc: jsonRpc.serverError, title: 'Invalid password-reset link' },
  missing_credentials: { status: 401, rpc: jsonRpc.serverError, title: 'Missing credentials' },
  invalid_key: { status: 401, rpc: jsonRpc.serverError, title: 'Invalid key' },
  key_expired: { status: 401, rpc: jsonRpc.serverError, title: 'Key expired' },
  key_revoked: { status: 401, rpc: jsonRpc.serverError, title: 'Key revoked' },
  invalid_session: { status: 401, rpc: jsonRpc.serverError, title: 'Invalid or expired session' },
  invalid_token: { status: 401, rpc: jsonRpc.serverError, title: 'Invalid access token' },
  invalid_login: { status: 401, rpc: jsonRpc.serverError, title: 'Wrong email or password' },
  invalid_admin_token: { status: 401, rpc: jsonRpc.serverError, title: 'Invalid admin token' },
  invalid_metrics_token: { status: 401, rpc: jsonRpc.serverError, title: 'Invalid metrics token' },
  not_entitled: { status: 402, rpc: jsonRpc.serverError, title: 'Not entitled to this read' },
  insufficient_tokens: { status: 402, rpc: jsonRpc.serverError, title: 'Insufficient tokens' },
  spending_cap_reached: { status: 402, rpc: jsonRpc.serverError, title: 'Spending cap reached' },
  forbidden: { status: 403, rpc: jsonRpc.serverError, title: 'Forbidden' },
  public_test_window_closed: { status: 403, rpc: jsonRpc.serverError, title: 'Public-test window closed' },
  analysis_not_entitled: {
    status: 403,
    rpc: jsonRpc.serverError,
    title: 'Not entitled to the Workbench analysis features',
  },
  not_found: { status: 404, rpc: jsonRpc.serverError, title: 'Not found' },
  dataset_not_found: { status: 404, rpc: jsonRpc.serverError, title: 'Dataset not found' },
  recipe_not_found: { status: 404, rpc: jsonRpc.serverError, title: 'Recipe not found' },
  method_not_allowed: { status: 405, rpc: jsonRpc.serverError, title: 'Method not allowed' },
  not_acceptable: { status: 406, rpc: jsonRpc.serverError, title: 'Not acceptable' },
  request_timeout: { status: 408, rpc: jsonRpc.serverError, title: 'Request timeout' },
  conflict: { status: 409, rpc: jsonRpc.serverError, title: 'Conflict' },
  account_exists: { status: 409, rpc: jsonRpc.serverError, title: 'An account with this email exists' },
  payload_too_large: { status: 413, rpc: jsonRpc.serverError, title: 'Payload too large' },
  idempotency_key_reused: {
    status: 422,
    rpc: jsonRpc.serverError,
    title: 'Idempotency key used for another request',
  },
  unsupported_media_type: { status: 415, rpc: jsonRpc.serverError, title: 'Unsupported media type' },
  headers_too_large: { status: 431, rpc: jsonRpc.serverError, title: 'Request headers too large' },
  rate_limited: { status: 429, rpc: jsonRpc.serverError, title: 'Rate limit exceeded' },
  daily_limit: { status: 429, rpc: jsonRpc.serverError, title: 'Daily request limit reached' },
  concurrency_limit: { status: 429, rpc: jsonRpc.serverError, title: 'Too many concurrent requests' },
  ip_fence: { status: 429, rpc: jsonRpc.serverError, title: 'Too many requests from this IP address' },
  issuance_limited: { status: 429, rpc: jsonRpc.serverError, title: 'Key issuance limit reached' },
  login_throttled: { status: 429, rpc: jsonRpc.serverError, title: 'Too many failed logins' },
  password_reset_limited: {
    status: 429,
    rpc: jsonRpc.serverError,
    title: 'Too many password-reset requests',
  },
  fair_use_limit: { status: 429, rpc: jsonRpc.serverError, title: 'Workbench fair-use limit reached' },
  internal_error: { status: 500, rpc: jsonRpc.internalError, title: 'Internal error' },
  not_live: { status: 501, rpc: jsonRpc.serverError, title: 'Not live' },
  service_unavailable: { status: 503, rpc: jsonRpc.serverError, title: 'Service unavailable' },
  dataset_unavailable: { status: 503, rpc: jsonRpc.serverError, title: 'Dataset unavailable' },
  password_reset_unavailable: {
    status: 503,
    rpc: jsonRpc.serverError,
    title: 'Password reset by email is not set up',
  },
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

/** Extra problem members that help a client act: all optional, all JSON-safe. */
export interface ProblemExtras {
  retry_after?: number;
  required_tokens?: string;
  balance?: string;
  reset_at?: string;
  suggestions?: string[];
  errors?: { path: string; message: string }[];
  [key: string]: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extras: ProblemExtras;
  /** Response headers the transport should add (Retry-After, WWW-Authenticate). */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    detail: string,
    extras: ProblemExtras = {},
    headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'AppError';
    this.code = code;
    this.status = errorCatalogue[code].status;
    this.extras = extras;
    this.headers = headers;
  }
}

/** This node cannot serve now (its store unreachable or held by another writer, or the node shutting down): 503, retry in a second. */
export function serviceUnavailable(detail: string): AppError {
  return new AppError('service_unavailable', detail, { retry_after: 1 }, { 'retry-after': '1' });
}

/**
 * A problem's `type` is a relative reference (RFC 9457 section 3.1.1), resolved against the response's
 * URL: the anchor of its code on the errors page this service serves (docs/errors.md).
 */
export const problemTypeBase = '/manual/errors#';

export interface Problem extends ProblemExtras {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  request_id: string;
}

export function toProblem(error: AppError, requestId: string): Problem {
  return {
    ...error.extras,
    type: `${problemTypeBase}${error.code}`,
    title: errorCatalogue[error.code].title,
    status: error.status,
    detail: error.message,
    code: error.code,
    request_id: requestId,
  };
}
