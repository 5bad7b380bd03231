/** Self-service: who am I, what do I hold, what did I spend. */
import { z } from 'zod';
import type { Caller } from '../../domain/caller.ts';
import { capAmount } from '../../domain/operator.ts';
import type { TypedApp } from '../../edge/server.ts';
import type { Services } from '../../services.ts';
import { accountOut, presentAccount } from '../../views/accounts.ts';
import { tokens } from '../../views/common.ts';
import { presentUsage } from '../../views/ledger.ts';
import { bodyCodes, edge, problems, queryInt } from '../schemas.ts';

export function registerMeRoutes(app: TypedApp, deps: Services): void {
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
    async (request) => presentAccount(await deps.accounts.snapshot(request.caller as Caller)),
  );

  app.put(
    '/api/v1/me/low-balance',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'setLowBalance',
        tags: ['account'],
        summary:
          'Set (or clear, with null) the low-balance threshold: a read that takes the balance below it is notified once',
        security: [{ bearer: [] }, { apiKey: [] }],
        body: z.strictObject({
          tokens: capAmount.describe('Tokens (an integer or a decimal string), or null for no notice.'),
        }),
        response: { 200: accountOut, ...problems(...edge.required, ...bodyCodes, 'forbidden') },
      },
    },
    async (request) => {
      const caller = request.caller as Caller;
      await deps.accounts.setLowBalance(caller, request.body.tokens);
      return presentAccount(await deps.accounts.snapshot(caller));
    },
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
      const { events, nextCursor } = await deps.accounts.usage(
        request.caller as Caller,
        request.query.cursor,
        request.query.limit,
      );
      return { data: events.map(presentUsage), meta: { count: events.length, next_cursor: nextCursor } };
    },
  );
}
