/**
 * The guard of the operator API under /api/v1/admin, guarded by ADMIN_TOKEN (`Authorization: Bearer` or
 * `X-Admin-Token`). Keys and sessions never open it. Every change is written to the log as an audit line,
 * and credits carry the actor in their ledger memo.
 */
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { adminTokenMatches } from '../../domain/operator.ts';
import { SESSION_COOKIE } from '../../edge/auth.ts';
import type { TypedApp } from '../../edge/server.ts';
import type { ErrorCode } from '../../errors.ts';
import { AppError } from '../../errors.ts';
import type { Services } from '../../services.ts';

const ADMIN_CHALLENGE = 'Bearer realm="token-metered-data-admin"';
const credentialShape = /^tmd_|^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** How an operator token (ADMIN_TOKEN, METRICS_TOKEN) is asked for and refused. */
export interface OperatorTokenCheck {
  /** The header that may carry the token besides `Authorization: Bearer`. */
  header?: string;
  challenge: string;
  /** The code and detail of a wrong token. */
  wrong: { code: 'invalid_admin_token' | 'invalid_metrics_token'; detail: string };
  /** What a missing token's problem says. */
  missing: string;
  /** What a key or session presented instead says. */
  notForCredentials: string;
}

/**
 * 401 for a wrong or missing token, 403 for a key or session presented instead. The token is compared
 * in constant time.
 */
export function authorizeOperatorToken(
  expected: string,
  request: FastifyRequest,
  check: OperatorTokenCheck,
): void {
  const wrongToken = () =>
    new AppError(check.wrong.code, check.wrong.detail, {}, { 'www-authenticate': check.challenge });
  const forbidden = () => new AppError('forbidden', check.notForCredentials);
  const header = check.header === undefined ? undefined : request.headers[check.header];
  if (typeof header === 'string' && header.length > 0) {
    if (adminTokenMatches(expected, header.trim())) return;
    if (credentialShape.test(header.trim())) throw forbidden();
    throw wrongToken();
  }
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const bearer = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization)?.[1];
    if (bearer !== undefined && adminTokenMatches(expected, bearer)) return;
    if (bearer !== undefined && credentialShape.test(bearer)) throw forbidden();
    throw wrongToken();
  }
  const apiKey = request.headers['x-api-key'];
  const cookie = request.headers.cookie ?? '';
  if ((typeof apiKey === 'string' && apiKey.length > 0) || cookie.includes(`${SESSION_COOKIE}=`)) {
    throw forbidden();
  }
  throw new AppError('missing_credentials', check.missing, {}, { 'www-authenticate': check.challenge });
}

const adminCheck: OperatorTokenCheck = {
  header: 'x-admin-token',
  challenge: ADMIN_CHALLENGE,
  wrong: { code: 'invalid_admin_token', detail: 'The operator token is not valid.' },
  missing:
    'Admin endpoints need the operator token: "Authorization: Bearer <ADMIN_TOKEN>" or "X-Admin-Token: <ADMIN_TOKEN>".',
  notForCredentials: 'Admin endpoints take the operator token (ADMIN_TOKEN), not keys or sessions.',
};

/** 403 when the API is disabled (no ADMIN_TOKEN), else as authorizeOperatorToken. */
export function authorizeAdmin(adminToken: string | undefined, request: FastifyRequest): void {
  if (adminToken === undefined) {
    throw new AppError('forbidden', 'The admin API is disabled: the operator has not set ADMIN_TOKEN.');
  }
  authorizeOperatorToken(adminToken, request, adminCheck);
}

/** What every admin route shares: its guard, its refusals, its audit line. */
export interface AdminRoutes {
  app: TypedApp;
  deps: Services;
  config: { auth: 'none' };
  onRequest: (request: FastifyRequest) => Promise<void>;
  security: { adminToken: never[] }[];
  adminRefusals: readonly ErrorCode[];
  tags: string[];
  accountParams: z.ZodObject<{ id: z.ZodString }>;
  audit: (request: FastifyRequest, action: string, details: Record<string, unknown>) => void;
}
