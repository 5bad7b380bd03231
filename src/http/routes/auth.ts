/** Credential issuance and login: sandbox keys, public-test registration, sessions. */
import { z } from 'zod';
import { kindsWhere } from '../../domain/credential-kinds.ts';
import { formatMicros } from '../../domain/money.ts';
import { CLEAR_SESSION_COOKIE, SESSION_COOKIE } from '../../edge/auth.ts';
import type { TypedApp } from '../../edge/server.ts';
import { AppError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { iso, tokens } from '../../views/common.ts';
import { issuedKeyOut, presentKey } from '../../views/keys.ts';
import { bodyCodes, edge, problems } from '../schemas.ts';
import { baseUrlOf } from './meta.ts';

const credentialsBody = z.strictObject({
  email: z.email().max(254).describe('Your email; it is the login of the account.'),
  password: z.string().min(10, 'must be at least 10 characters').max(200).describe('10 to 200 characters.'),
});

const publicTestOut = issuedKeyOut.extend({
  account_id: z.string(),
  window_ends_at: z.string(),
  grant_credited: z.boolean(),
  rotated: z
    .boolean()
    .describe('A public-test key of the account that still worked was revoked by this one.'),
  balance: tokens,
});

export function registerAuthRoutes(app: TypedApp, deps: Services): void {
  app.post(
    '/api/v1/auth/sandbox',
    {
      // No credential is read here: a stale key or cookie never stands between a client and a new one.
      config: { auth: 'none' },
      schema: {
        operationId: 'issueSandboxKey',
        tags: ['auth'],
        summary:
          'Issue a free sandbox key: 72 hours, 2500 tokens in its own wallet, Starter limits, P0 reads only',
        response: {
          201: issuedKeyOut.extend({
            balance: tokens,
            limits: z.object({ per_minute: z.int(), per_day: z.int().nullable(), concurrent: z.int() }),
            recipes: z.array(z.string()),
            mcp_url: z.string(),
            notes: z.array(z.string()),
          }),
          ...problems(...edge.none, ...bodyCodes, 'forbidden', 'issuance_limited', 'service_unavailable'),
        },
      },
    },
    async (request, reply) => {
      const issued = await deps.credentials.issueSandbox(request.ip);
      const limits = deps.config.limits.sandbox;
      const base = baseUrlOf(deps, request.host, request.protocol);
      reply.code(201).header('cache-control', 'no-store');
      return {
        ...presentKey(issued.record, deps.now()),
        key: issued.secret,
        balance: formatMicros(issued.grantMicros),
        limits: { per_minute: limits.per_minute, per_day: limits.per_day, concurrent: limits.concurrent },
        recipes: deps.config.sandbox.recipes,
        mcp_url: deps.config.sandbox.mcp_url.replace('{base_url}', base),
        notes: deps.config.sandbox.notes,
      };
    },
  );

  app.post(
    '/api/v1/auth/public-test',
    {
      // No credential is read here: a stale key or cookie never stands between a client and a new one.
      config: { auth: 'none' },
      schema: {
        operationId: 'registerPublicTest',
        tags: ['auth'],
        summary:
          'Register for the free public test: creates the login account, credits the 10000-token signup grant once, issues a 30-day key. Registering again with the same password rotates the key.',
        body: credentialsBody,
        response: {
          201: publicTestOut,
          200: publicTestOut.describe(
            'An existing account: a new key (same fields as 201); rotated says whether a key that still worked was revoked.',
          ),
          ...problems(
            ...edge.none,
            ...bodyCodes,
            'invalid_login',
            'forbidden',
            'public_test_window_closed',
            'conflict',
            'issuance_limited',
            'login_throttled',
            'service_unavailable',
          ),
        },
      },
    },
    async (request, reply) => {
      const result = await deps.credentials.registerPublicTest(
        request.body.email,
        request.body.password,
        request.ip,
      );
      reply.code(result.created ? 201 : 200).header('cache-control', 'no-store');
      return {
        ...presentKey(result.record, deps.now()),
        key: result.secret,
        account_id: result.account.id,
        window_ends_at: iso(deps.credentials.publicTestWindowEnd(result.account)) as string,
        grant_credited: result.grantCredited,
        rotated: result.rotated,
        balance: formatMicros(result.balanceMicros),
      };
    },
  );

  app.post(
    '/api/v1/auth/login',
    {
      // No credential is read here: a stale key or cookie never stands between a client and a new one.
      config: { auth: 'none' },
      schema: {
        operationId: 'login',
        tags: ['auth'],
        summary: 'Log in to an account: returns a 12-hour session JWT (also set as the tmd_session cookie)',
        body: credentialsBody.extend({
          client: z
            .enum(['api', 'terminal'])
            .default('api')
            .describe('terminal: reads carry the 35% Terminal surcharge.'),
        }),
        response: {
          200: z.object({
            token: z.string(),
            token_type: z.literal('Bearer'),
            expires_at: z.string(),
            account_id: z.string(),
          }),
          ...problems(...edge.none, ...bodyCodes, 'invalid_login', 'login_throttled', 'service_unavailable'),
        },
      },
    },
    async (request, reply) => {
      const { token, session, account } = await deps.credentials.login(
        request.body.email,
        request.body.password,
        request.body.client === 'terminal' ? 'terminal' : 'rest',
        request.ip,
      );
      const maxAge = Math.floor((session.expiresAt - deps.now()) / 1000);
      reply
        .header('cache-control', 'no-store')
        .header(
          'set-cookie',
          `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=${maxAge}`,
        );
      return {
        token,
        token_type: 'Bearer' as const,
        expires_at: iso(session.expiresAt) as string,
        account_id: account.id,
      };
    },
  );

  app.get(
    '/api/v1/auth/session',
    {
      config: { auth: 'optional' },
      schema: {
        operationId: 'getSession',
        tags: ['auth'],
        summary: 'Whether the request carries a credential (a session cookie or a key): 200 either way',
        description:
          'For a page that wants to know who is there without a 401 for a signed-out visitor (GET /api/v1/me answers 401 then).',
        response: {
          200: z.object({
            signed_in: z.boolean(),
            kind: z.string().nullable().describe('The credential kind: session, live, sandbox, public_test.'),
          }),
          ...problems(...edge.optional),
        },
      },
    },
    async (request) => ({ signed_in: request.caller !== null, kind: request.caller?.kind ?? null }),
  );

  app.post(
    '/api/v1/auth/logout',
    {
      config: { auth: 'required', allow: kindsWhere('managesAccount') },
      schema: {
        operationId: 'logout',
        tags: ['auth'],
        summary: 'End the current session',
        security: [{ bearer: [] }],
        response: {
          204: z.null().describe('Session ended.'),
          ...problems(...edge.required, ...bodyCodes, 'forbidden'),
        },
      },
    },
    async (request, reply) => {
      const sessionId = request.caller?.sessionId;
      if (!sessionId) throw new AppError('forbidden', 'Only a session can log out.');
      await deps.credentials.logout(sessionId);
      reply.header('set-cookie', CLEAR_SESSION_COOKIE);
      return reply.code(204).send(null);
    },
  );
}
