/** Self-service: who am I, what do I hold, what did I spend. */
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import type { Caller } from '../../domain/caller.ts';
import { limitsFor } from '../../domain/limits-policy.ts';
import { burnedThisMonth, tierOf } from '../../domain/metering.ts';
import { formatMicros, MICROS_PER_TOKEN } from '../../domain/money.ts';
import { entitlementsOf } from '../../domain/packages.ts';
import { nextTier } from '../../domain/pricing.ts';
import { AppError } from '../../errors.ts';
import type { TypedApp } from '../app.ts';
import { iso } from '../present.ts';
import { edge, problems, queryInt, tokens } from '../schemas.ts';

/** Who is calling and what they hold: REST's GET /api/v1/me and the MCP get_account tool. */
export const accountOut = z.object({
  credential: z.object({
    kind: z.enum(['sandbox', 'public_test', 'live', 'session']),
    key_id: z.string().nullable(),
    expires_at: z.string().nullable(),
  }),
  account: z
    .object({
      id: z.string(),
      email: z.string().nullable(),
      plan: z.string(),
      package: z.string().nullable(),
      entitlements: z
        .object({
          bulk_export: z.boolean(),
          analysis_assistant: z.boolean(),
          mcp_included: z.boolean(),
          spending_caps: z.boolean(),
        })
        .describe(
          "What the account's package brings beyond reads (analysis_assistant is a Terminal feature).",
        ),
      created_at: z.string(),
    })
    .nullable(),
  wallet: z.object({ id: z.string(), balance: tokens }),
  burned_this_month: tokens,
  tier: z.looseObject({ level: z.int(), name: z.string(), discount_pct: z.number() }),
  next_tier: z.looseObject({ level: z.int(), tokens_needed: tokens }).nullable(),
  limits: z.object({
    per_minute: z.int(),
    per_day: z.int().nullable(),
    concurrent: z.int(),
    ip_fence: z.boolean(),
  }),
});

export async function presentAccount(deps: Deps, caller: Caller): Promise<z.infer<typeof accountOut>> {
  const now = deps.now();
  const wallet = (await deps.store.getWallet(caller.wallet.id)) ?? caller.wallet;
  const fresh = { ...caller, wallet };
  const tier = tierOf(deps.reads.meterDeps, fresh, now);
  const burned = burnedThisMonth(fresh, now);
  const next = caller.kind === 'sandbox' ? null : nextTier(deps.pricing, tier);
  return {
    credential: { kind: caller.kind, key_id: caller.key?.id ?? null, expires_at: iso(caller.expiresAt) },
    account: caller.account
      ? {
          id: caller.account.id,
          email: caller.account.email,
          plan: caller.account.plan,
          package: caller.account.packageId,
          entitlements: entitlementsOf(deps.config, caller.account),
          created_at: iso(caller.account.createdAt) as string,
        }
      : null,
    wallet: { id: wallet.id, balance: formatMicros(wallet.balanceMicros) },
    burned_this_month: formatMicros(burned),
    tier,
    next_tier: next
      ? { ...next, tokens_needed: formatMicros(BigInt(next.min_tokens) * MICROS_PER_TOKEN - burned) }
      : null,
    limits: limitsFor(deps.config, deps.reads.meterDeps, fresh, now),
  };
}

export function registerMeRoutes(app: TypedApp, deps: Deps): void {
  app.get(
    '/api/v1/me',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'getMe',
        tags: ['account'],
        summary: 'The calling credential: kind, account, expiry, balance, tier, burn this month, limits',
        security: [{ bearer: [] }, { apiKey: [] }],
        response: {
          200: accountOut,
          ...problems(...edge.required),
        },
      },
    },
    async (request) => presentAccount(deps, request.caller as Caller),
  );

  app.get(
    '/api/v1/me/usage',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'getMyUsage',
        tags: ['account'],
        summary: 'Usage events, newest first, with each cost (paged by cursor)',
        security: [{ bearer: [] }, { apiKey: [] }],
        querystring: z.strictObject({
          limit: queryInt(1, 500, 50).default(50).describe('Events per page, 1 to 500 (default 50).'),
          cursor: z.string().max(64).optional().describe('meta.next_cursor of the previous page.'),
        }),
        response: {
          200: z.object({
            data: z.array(
              z.object({
                id: z.string(),
                at: z.string(),
                request_id: z.string(),
                key_id: z.string().nullable(),
                dataset: z.string(),
                channel: z.string(),
                list_cost: tokens,
                token_cost: tokens,
                tokens_burned: tokens,
                outcome: z.string(),
                rows: z.int(),
              }),
            ),
            meta: z.object({ count: z.int(), next_cursor: z.string().nullable() }),
          }),
          ...problems(...edge.required, 'invalid_request', 'invalid_cursor'),
        },
      },
    },
    async (request) => {
      const caller = request.caller as Caller;
      // Accounts see every key's usage; an account-less sandbox key sees its own.
      const scope = caller.account
        ? { accountId: caller.account.id }
        : caller.key
          ? { keyId: caller.key.id }
          : null;
      if (!scope) throw new AppError('forbidden', 'No usage to show for this credential.');
      const cursor = request.query.cursor;
      if (cursor !== undefined && !/^[1-9]\d{0,17}$/.test(cursor)) {
        throw new AppError(
          'invalid_cursor',
          'The cursor is not one this endpoint gave: pass meta.next_cursor unchanged.',
        );
      }
      const events = await deps.store.listUsage(scope, cursor ?? null, request.query.limit + 1);
      const page = events.slice(0, request.query.limit);
      return {
        data: page.map((e) => ({
          id: e.id,
          at: iso(e.at) as string,
          request_id: e.requestId,
          key_id: e.keyId,
          dataset: e.dataset,
          channel: e.channel,
          list_cost: formatMicros(e.listCostMicros),
          token_cost: formatMicros(e.costMicros),
          tokens_burned: formatMicros(e.burnedMicros),
          outcome: e.outcome,
          rows: e.rows,
        })),
        meta: {
          count: page.length,
          next_cursor: events.length > page.length ? (page.at(-1)?.id ?? null) : null,
        },
      };
    },
  );
}
