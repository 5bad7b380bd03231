/**
 * The operator API under /api/v1/admin, guarded by ADMIN_TOKEN (`Authorization: Bearer` or
 * `X-Admin-Token`). Keys and sessions never open it. Every change is written to the log as an audit line,
 * and credits carry the actor in their ledger memo.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { formatMicros } from '../../domain/money.ts';
import {
  type AccountView,
  adminTokenMatches,
  capAmount,
  creditKinds,
  newAccountInput,
  tokenAmount,
} from '../../domain/operator.ts';
import { SESSION_COOKIE } from '../../edge/auth.ts';
import type { TypedApp } from '../../edge/server.ts';
import { AppError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { presentAccountView } from '../../views/accounts.ts';
import { keyExpiry, label, tokens } from '../../views/common.ts';
import { issuedKeyOut, keyOut, presentKey } from '../../views/keys.ts';
import { presentLedgerEntry } from '../../views/ledger.ts';
import { bodyCodes, edge, problems } from '../schemas.ts';

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

const accountOut = z.object({
  id: z.string(),
  email: z.string().nullable(),
  plan: z.enum(['standard', 'early_bird']),
  early_bird_eligible: z.boolean().describe('Created before early_bird.cohort_cutoff.'),
  package: z.string().nullable(),
  entitlements: z.object({
    bulk_export: z.boolean(),
    analysis_assistant: z.boolean(),
    mcp_included: z.boolean(),
    spending_caps: z.boolean(),
  }),
  created_at: z.string(),
  public_test_started_at: z.string().nullable(),
  wallet: z.object({ id: z.string(), balance: tokens }),
  keys: z.array(keyOut),
});

const entryOut = z.object({
  id: z.string(),
  kind: z.string(),
  amount: tokens,
  balance_after: tokens,
  created_at: z.string(),
  idempotency_key: z.string().nullable(),
  memo: z.string().nullable(),
  request_id: z.string().nullable(),
});

export function registerAdminRoutes(app: TypedApp, deps: Services): void {
  const { operator } = deps;
  // auth 'none': the admin token is not a key, so the key authenticator must not see it.
  const config = { auth: 'none' as const };
  const onRequest = async (request: FastifyRequest) => authorizeAdmin(deps.env.ADMIN_TOKEN, request);
  const security = [{ adminToken: [] }];
  /** authorizeAdmin's refusals, after the IP fence; every admin call then works on the ledger. */
  const adminRefusals = [
    ...edge.none,
    'missing_credentials',
    'invalid_admin_token',
    'forbidden',
    'service_unavailable',
  ] as const;
  const tags = ['admin'];
  const accountParams = z.object({ id: z.string().min(1).max(254).describe('Account id (acc_…) or email.') });
  const audit = (request: FastifyRequest, action: string, details: Record<string, unknown>) =>
    request.log.info({ audit: { actor: 'admin-api', action, ...details } }, `operator: ${action}`);

  const present = (view: AccountView) => presentAccountView(deps.config, view, deps.now());

  app.post(
    '/api/v1/admin/accounts',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminCreateAccount',
        tags,
        summary: 'Create a login account (no signup grant; credit it explicitly)',
        security,
        body: newAccountInput,
        response: { 201: accountOut, ...problems(...adminRefusals, ...bodyCodes, 'conflict') },
      },
    },
    async (request, reply) => {
      const account = await operator.createAccount(request.body);
      audit(request, 'create_account', { account: account.id });
      reply.code(201);
      return present(await operator.view(account));
    },
  );

  app.get(
    '/api/v1/admin/accounts/:id',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminGetAccount',
        tags,
        summary: 'An account: plan, package, entitlements, balance and keys',
        security,
        params: accountParams,
        response: { 200: accountOut, ...problems(...adminRefusals, 'invalid_request', 'not_found') },
      },
    },
    async (request) => present(await operator.view(await operator.findAccount(request.params.id))),
  );

  app.put(
    '/api/v1/admin/accounts/:id/package',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminAssignPackage',
        tags,
        summary: "Assign a package (credits this month's monthly_credits once) or clear it with null",
        security,
        params: accountParams,
        body: z.strictObject({ package: z.string().max(64).nullable() }),
        response: {
          200: z.object({
            account: accountOut,
            monthly_credit: entryOut.extend({ duplicate: z.boolean() }).nullable(),
          }),
          ...problems(...adminRefusals, ...bodyCodes, 'not_found'),
        },
      },
    },
    async (request) => {
      const { account, monthlyCredit } = await operator.assignPackage(
        request.params.id,
        request.body.package,
      );
      audit(request, 'assign_package', {
        account: account.id,
        package: account.packageId,
        monthly_credit_entry: monthlyCredit?.entry.id ?? null,
      });
      return {
        account: present(await operator.view(account)),
        monthly_credit: monthlyCredit
          ? { ...presentLedgerEntry(monthlyCredit.entry), duplicate: monthlyCredit.duplicate }
          : null,
      };
    },
  );

  app.put(
    '/api/v1/admin/accounts/:id/early-bird',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminSetEarlyBird',
        tags,
        summary: 'Set or clear the early_bird plan (only for accounts created before the cohort cutoff)',
        security,
        params: accountParams,
        body: z.strictObject({ early_bird: z.boolean() }),
        response: { 200: accountOut, ...problems(...adminRefusals, ...bodyCodes, 'not_found', 'conflict') },
      },
    },
    async (request) => {
      const account = await operator.setEarlyBird(request.params.id, request.body.early_bird);
      audit(request, 'set_early_bird', { account: account.id, plan: account.plan });
      return present(await operator.view(account));
    },
  );

  app.post(
    '/api/v1/admin/accounts/:id/credits',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminCreditTokens',
        tags,
        summary:
          'Credit tokens to the account wallet (Idempotency-Key required; a repeat returns the same entry)',
        description:
          'The first request answers 201; a repeat with the same Idempotency-Key answers 200 with the same entry and Idempotent-Replayed: true. The same key with another amount or kind is 409 conflict.',
        security,
        params: accountParams,
        body: z.strictObject({
          tokens: tokenAmount.describe(
            'Tokens to credit: an integer or a decimal string (at most 6 decimals).',
          ),
          kind: z.enum(creditKinds).default('topup'),
          memo: label(200).optional(),
        }),
        response: {
          201: z.object({ entry: entryOut, balance: tokens }),
          200: z.object({ entry: entryOut, balance: tokens }).describe('A repeat: the first entry.'),
          ...problems(...adminRefusals, ...bodyCodes, 'not_found', 'conflict'),
        },
      },
    },
    async (request, reply) => {
      const idempotencyKey = request.headers['idempotency-key'];
      if (typeof idempotencyKey !== 'string' || idempotencyKey.length === 0) {
        throw new AppError(
          'invalid_request',
          'Send an Idempotency-Key header: a credit is applied once per key.',
          {
            errors: [{ path: 'headers.idempotency-key', message: 'is required' }],
          },
        );
      }
      const outcome = await operator.creditTokens(request.params.id, {
        amountMicros: request.body.tokens,
        idempotencyKey,
        kind: request.body.kind,
        ...(request.body.memo === undefined ? {} : { memo: request.body.memo }),
        actor: 'admin-api',
        requestId: request.id,
      });
      audit(request, 'credit', {
        account: request.params.id,
        entry: outcome.entry.id,
        tokens: formatMicros(outcome.entry.amountMicros),
        replayed: outcome.duplicate,
      });
      if (outcome.duplicate) reply.header('idempotent-replayed', 'true');
      reply.code(outcome.duplicate ? 200 : 201);
      return { entry: presentLedgerEntry(outcome.entry), balance: formatMicros(outcome.balanceMicros) };
    },
  );

  app.post(
    '/api/v1/admin/accounts/:id/keys',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminCreateKey',
        tags,
        summary: 'Create a live key for the account (shown once)',
        security,
        params: accountParams,
        body: z
          .strictObject({
            name: label(100).min(1).optional(),
            expires_at: keyExpiry,
          })
          .nullish(),
        response: { 201: issuedKeyOut, ...problems(...adminRefusals, ...bodyCodes, 'not_found') },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const expiresAt = body.expires_at ? Date.parse(body.expires_at) : null;
      const issued = await operator.createKey(request.params.id, body.name ?? null, expiresAt);
      audit(request, 'create_key', { account: issued.record.accountId, key: issued.record.id });
      reply.code(201).header('cache-control', 'no-store');
      return { ...presentKey(issued.record, deps.now()), key: issued.secret };
    },
  );

  app.put(
    '/api/v1/admin/keys/:id/spending-caps',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminSetKeySpendingCaps',
        tags,
        summary: 'Set or clear the spending caps of a live key (tokens per UTC day and month)',
        security,
        params: z.object({ id: z.string().max(64) }),
        body: z.strictObject({
          daily_tokens: capAmount.describe('Tokens per UTC day, or null for no cap.'),
          monthly_tokens: capAmount.describe('Tokens per UTC month, or null for no cap.'),
        }),
        response: { 200: keyOut, ...problems(...adminRefusals, ...bodyCodes, 'not_found', 'conflict') },
      },
    },
    async (request) => {
      const key = await operator.setKeyCaps(request.params.id, {
        dailyCapMicros: request.body.daily_tokens,
        monthlyCapMicros: request.body.monthly_tokens,
      });
      audit(request, 'set_spending_caps', {
        key: key.id,
        daily: key.dailyCapMicros === null ? null : formatMicros(key.dailyCapMicros),
        monthly: key.monthlyCapMicros === null ? null : formatMicros(key.monthlyCapMicros),
      });
      return presentKey(key, deps.now());
    },
  );

  app.post(
    '/api/v1/admin/monthly-credits',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminRunMonthlyCredits',
        tags,
        summary:
          "Run the monthly credit job now (idempotent: each account's package is credited once a month)",
        security,
        response: {
          200: z.object({
            month: z.string(),
            credited: z.array(
              z.object({
                account_id: z.string(),
                package: z.string(),
                tokens,
                entry_id: z.string(),
              }),
            ),
            already_credited: z.int(),
          }),
          ...problems(...adminRefusals, ...bodyCodes),
        },
      },
    },
    async (request) => {
      const run = await operator.runMonthlyCredits();
      audit(request, 'monthly_credits', { month: run.month, credited: run.credited.length });
      return {
        month: run.month,
        credited: run.credited.map((c) => ({
          account_id: c.accountId,
          package: c.packageId,
          tokens: c.tokens,
          entry_id: c.entryId,
        })),
        already_credited: run.alreadyCredited,
      };
    },
  );
}
