/** Credential issuance and login: sandbox keys, public-test registration, sessions. */
import { z } from 'zod';
import { kindsWhere } from '../../domain/credential-kinds.ts';
import { formatMicros } from '../../domain/money.ts';
import { publicTestEndsAt } from '../../domain/public-test.ts';
import { CLEAR_SESSION_COOKIE, SESSION_COOKIE } from '../../edge/auth.ts';
import type { TypedApp } from '../../edge/server.ts';
import { AppError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { iso, tokens } from '../../views/common.ts';
import { issuedKeyOut, presentKey } from '../../views/keys.ts';
import { bodyCodes, edge, problems } from '../schemas.ts';
import { baseUrlOf } from './meta.ts';

const passwordRule = z
  .string()
  .min(10, 'must be at least 10 characters')
  .max(200)
  .describe('10 to 200 characters.');

const credentialsBody = z.strictObject({
  email: z.email().max(254).describe('Your email; it is the login of the account.'),
  password: passwordRule,
});

const publicTestOut = issuedKeyOut.extend({
  account_id: z.string(),
  window_ends_at: z
    .string()
    .describe(
      "When the account's public-test window closes: free reads of the P0 datasets end then. The key itself stops at expires_at (30 days at most, within the window); a new one can be had until the window closes.",
    ),
  grant_credited: z.boolean(),
  rotated: z
    .boolean()
    .describe('A public-test key of the account that still worked was revoked by this one.'),
  balance: tokens,
});

export function registerAuthRoutes(app: TypedApp, deps: Services): void {
  sandboxRoute(app, deps);
  publicTestRoute(app, deps);
  loginRoute(app, deps);
  passwordResetRoute(app, deps);
  passwordResetConfirmRoute(app, deps);
  sessionRoute(app);
  logoutRoute(app, deps);
}

/** POST /auth/sandbox: a free sandbox key in its own wallet. */
function sandboxRoute(app: TypedApp, deps: Services): void {
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
}

/** POST /auth/public-test: the public-test account, its signup grant and a 30-day key. */
function publicTestRoute(app: TypedApp, deps: Services): void {
  app.post(
    '/api/v1/auth/public-test',
    {
      // No credential is read here: a stale key or cookie never stands between a client and a new one.
      config: { auth: 'none' },
      schema: {
        operationId: 'registerPublicTest',
        tags: ['auth'],
        summary:
          'Register for the free public test: creates the login account, credits the 10000-token signup grant once, issues a 30-day key',
        description:
          'An email that already has an account is refused with 409 account_exists (its password is not checked), unless the request sets rotate_key: then, with the right password, the account gets a new public-test key and the one it had stops working.',
        body: credentialsBody.extend({
          rotate_key: z
            .boolean()
            .default(false)
            .describe(
              'For an email that has an account: check the password and issue a new public-test key, revoking the one the account has. Without it such a registration is refused (409 account_exists).',
            ),
        }),
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
            'account_exists',
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
        request.body.rotate_key,
      );
      reply.code(result.created ? 201 : 200).header('cache-control', 'no-store');
      return {
        ...presentKey(result.record, deps.now(), publicTestEndsAt(deps.config)),
        key: result.secret,
        account_id: result.account.id,
        window_ends_at: iso(deps.credentials.publicTestWindowEnd(result.account)) as string,
        grant_credited: result.grantCredited,
        rotated: result.rotated,
        balance: formatMicros(result.balanceMicros),
      };
    },
  );
}

/** POST /auth/login: a session JWT, also set as the session cookie. */
function loginRoute(app: TypedApp, deps: Services): void {
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
}

/** POST /auth/password-reset: a reset link mailed to the account, if there is one. */
function passwordResetRoute(app: TypedApp, deps: Services): void {
  app.post(
    '/api/v1/auth/password-reset',
    {
      // No credential is read here: a forgotten password is asked about signed out.
      config: { auth: 'none' },
      schema: {
        operationId: 'requestPasswordReset',
        tags: ['auth'],
        summary: 'Ask for a password-reset link by email: 202 whether or not the email has an account',
        description:
          'When the email has an account, a link to /terminal/reset-password?token=… is mailed to it; it works once, for 30 minutes (password_reset.link_ttl_minutes). The answer is the same for an email with no account. 3 requests per email and 10 per client IP an hour (429 password_reset_limited); 503 password_reset_unavailable when the operator configured no SMTP server.',
        body: z.strictObject({ email: z.email().max(254).describe('The email of the account.') }),
        response: {
          202: z.object({
            detail: z.string(),
            link_ttl_minutes: z.int().describe('How long a mailed link works.'),
          }),
          ...problems(
            ...edge.none,
            ...bodyCodes,
            'password_reset_limited',
            'password_reset_unavailable',
            'service_unavailable',
          ),
        },
      },
    },
    async (request, reply) => {
      await deps.passwordResets.request(
        request.body.email,
        request.ip,
        baseUrlOf(deps, request.host, request.protocol),
      );
      reply.code(202).header('cache-control', 'no-store');
      const minutes = deps.config.password_reset.link_ttl_minutes;
      return {
        detail: `If an account has this email, a link to reset its password is on its way there. It works once, for ${minutes} minutes.`,
        link_ttl_minutes: minutes,
      };
    },
  );
}

/** POST /auth/password-reset/confirm: a new password; every session of the account ends. */
function passwordResetConfirmRoute(app: TypedApp, deps: Services): void {
  app.post(
    '/api/v1/auth/password-reset/confirm',
    {
      config: { auth: 'none' },
      schema: {
        operationId: 'confirmPasswordReset',
        tags: ['auth'],
        summary: "Set a new password with a reset link's token; every session of the account ends",
        description:
          "The token is the link's `token` parameter. It works once: a used, expired or unknown token is 400 invalid_reset_token. The account's API keys keep working.",
        body: z.strictObject({
          token: z.string().min(1).max(200).describe("The reset link's token."),
          password: passwordRule,
        }),
        response: {
          200: z.object({
            password_changed: z.literal(true),
            sessions_ended: z.int().describe('Sessions of the account that were open and have ended.'),
          }),
          ...problems(...edge.none, ...bodyCodes, 'invalid_reset_token', 'service_unavailable'),
        },
      },
    },
    async (request, reply) => {
      const { sessionsEnded } = await deps.passwordResets.confirm(request.body.token, request.body.password);
      reply.header('cache-control', 'no-store').header('set-cookie', CLEAR_SESSION_COOKIE);
      return { password_changed: true as const, sessions_ended: sessionsEnded };
    },
  );
}

/** GET /auth/session: who is there, 200 for a signed-out visitor too. */
function sessionRoute(app: TypedApp): void {
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
}

/** POST /auth/logout: ends the current session. */
function logoutRoute(app: TypedApp, deps: Services): void {
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
