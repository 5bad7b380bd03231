/** Wallet-backed (live) keys of an account, managed by a logged-in session. */
import { z } from 'zod';
import type { Caller } from '../../domain/caller.ts';
import { kindsWhere } from '../../domain/credential-kinds.ts';
import { formatMicros } from '../../domain/money.ts';
import { capAmount } from '../../domain/operator.ts';
import { publicTestEndsAt } from '../../domain/public-test.ts';
import type { TypedApp } from '../../edge/server.ts';
import { AppError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { keyExpiry, label, tokens } from '../../views/common.ts';
import { issuedKeyOut, keyOut, presentKey } from '../../views/keys.ts';
import { bodyCodes, edge, problems } from '../schemas.ts';

function accountOf(caller: Caller | null) {
  if (!caller?.account) throw new AppError('forbidden', 'Keys are managed by a logged-in account session.');
  return caller.account;
}

export function registerKeyRoutes(app: TypedApp, deps: Services): void {
  const sessionOnly = { auth: 'required' as const, allow: kindsWhere('managesAccount') };
  /** A key or any credential but a session is refused with 403 (`allow`). */
  const sessionRefusals = [...edge.required, 'forbidden'] as const;
  const security = [{ bearer: [] }];

  app.post(
    '/api/v1/keys',
    {
      config: sessionOnly,
      schema: {
        operationId: 'createKey',
        tags: ['keys'],
        summary: 'Create a wallet-backed live key for the account (shown once)',
        security,
        body: z
          .strictObject({
            name: label(100).min(1).optional(),
            expires_at: keyExpiry,
          })
          .nullish(),
        response: { 201: issuedKeyOut, ...problems(...sessionRefusals, ...bodyCodes) },
      },
    },
    async (request, reply) => {
      const account = accountOf(request.caller);
      const body = request.body ?? {};
      const expiresAt = body.expires_at ? Date.parse(body.expires_at) : null;
      const issued = await deps.credentials.createLiveKey(account, body.name ?? null, expiresAt);
      reply.code(201).header('cache-control', 'no-store');
      return { ...presentKey(issued.record, deps.now()), key: issued.secret };
    },
  );

  app.get(
    '/api/v1/keys',
    {
      config: sessionOnly,
      schema: {
        operationId: 'listKeys',
        tags: ['keys'],
        summary: 'List the account keys (never the key strings)',
        security,
        response: {
          200: z.object({
            data: z.array(
              keyOut.extend({
                burned_this_month: tokens.describe('Tokens this key burned this UTC month.'),
              }),
            ),
            meta: z.object({ count: z.int() }),
          }),
          ...problems(...sessionRefusals),
        },
      },
    },
    async (request) => {
      const now = deps.now();
      accountOf(request.caller);
      const keys = await deps.accounts.keysWithUsage(request.caller as Caller);
      const publicTestEnd = publicTestEndsAt(deps.config);
      return {
        data: keys.map(({ key, burnedThisMonthMicros }) => ({
          ...presentKey(key, now, publicTestEnd),
          burned_this_month: formatMicros(burnedThisMonthMicros),
        })),
        meta: { count: keys.length },
      };
    },
  );

  const { operator } = deps;
  app.patch(
    '/api/v1/keys/:id',
    {
      config: sessionOnly,
      schema: {
        operationId: 'setKeySpendingCaps',
        tags: ['keys'],
        summary: 'Set or clear the spending caps of a live key (Partner package)',
        description:
          'Caps the tokens the key may burn per UTC day and per UTC month; null removes a cap, an absent field leaves it as it is. A read that would take the key past a cap is refused with 402 spending_cap_reached and reset_at.',
        security,
        params: z.object({ id: z.string().max(64) }),
        body: z.strictObject({
          daily_tokens: capAmount.optional().describe('Tokens per UTC day, or null for no cap.'),
          monthly_tokens: capAmount.optional().describe('Tokens per UTC month, or null for no cap.'),
        }),
        response: { 200: keyOut, ...problems(...sessionRefusals, ...bodyCodes, 'not_found', 'conflict') },
      },
    },
    async (request) => {
      const account = accountOf(request.caller);
      const { daily_tokens: daily, monthly_tokens: monthly } = request.body;
      // Only the caps sent change (an absent one is left to the store as it is).
      const updated = await operator.setOwnKeyCaps(account, request.params.id, {
        ...(daily !== undefined && { dailyCapMicros: daily }),
        ...(monthly !== undefined && { monthlyCapMicros: monthly }),
      });
      return presentKey(updated, deps.now());
    },
  );

  app.delete(
    '/api/v1/keys/:id',
    {
      config: sessionOnly,
      schema: {
        operationId: 'revokeKey',
        tags: ['keys'],
        summary: 'Revoke a key of the account; it stops working at once',
        security,
        params: z.object({ id: z.string().max(64) }),
        response: { 200: keyOut, ...problems(...sessionRefusals, ...bodyCodes, 'not_found') },
      },
    },
    async (request) =>
      presentKey(
        await deps.credentials.revokeKey(accountOf(request.caller), request.params.id),
        deps.now(),
        publicTestEndsAt(deps.config),
      ),
  );
}
