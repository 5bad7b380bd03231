/** GET /api/v1/me/ledger: the caller's wallet entries, newest first, each with the balance it left. */
import { z } from 'zod';
import type { Caller } from '../../domain/caller.ts';
import { formatMicros } from '../../domain/money.ts';
import type { TypedApp } from '../../edge/server.ts';
import { AppError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { tokens } from '../../views/common.ts';
import { entryKind, entryReadOut, presentEntryRead, presentLedgerEntry } from '../../views/ledger.ts';
import { edge, problems, queryInt } from '../schemas.ts';

const entryOut = z.object({
  id: z.string(),
  kind: entryKind,
  amount: tokens.describe('Signed: burns are negative.'),
  balance_after: tokens.describe('The running balance: the wallet right after this entry.'),
  created_at: z.string(),
  idempotency_key: z.string().nullable(),
  memo: z.string().nullable(),
  request_id: z.string().nullable().describe('The request that burned or credited it.'),
  read: entryReadOut,
});

export function registerLedgerRoutes(app: TypedApp, deps: Services): void {
  app.get(
    '/api/v1/me/ledger',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'getMyLedger',
        tags: ['account'],
        summary: "The wallet's ledger entries, newest first, with the running balance (paged by cursor)",
        description:
          'Every change of the balance is an append-only entry: grant, topup, monthly_credit, burn, refund, adjustment. The balance always equals the sum of the entries.',
        security: [{ bearer: [] }, { apiKey: [] }],
        querystring: z.strictObject({
          limit: queryInt(1, 500, 50).default(50).describe('Entries per page, 1 to 500 (default 50).'),
          cursor: z.string().max(64).optional().describe('meta.next_cursor of the previous page.'),
        }),
        response: {
          200: z.object({
            data: z.array(entryOut),
            meta: z.object({
              count: z.int(),
              next_cursor: z.string().nullable(),
              balance: tokens.describe('The wallet balance now.'),
            }),
          }),
          ...problems(...edge.required, 'invalid_request', 'invalid_cursor'),
        },
      },
    },
    async (request) => {
      const { cursor, limit } = request.query;
      if (cursor !== undefined && !/^[1-9]\d{0,17}$/.test(cursor)) {
        throw new AppError(
          'invalid_cursor',
          'The cursor is not one this endpoint gave: pass meta.next_cursor unchanged.',
        );
      }
      const caller = request.caller as Caller;
      // Entry ids grow with time; the cursor is the last id shown, compared as a number.
      const page = await deps.accounts.ledgerPage(caller, { beforeId: cursor ?? null, limit });
      return {
        data: page.entries.map((e) => ({
          ...presentLedgerEntry(e),
          read: presentEntryRead(e.requestId === null ? undefined : page.reads.get(e.requestId)),
        })),
        meta: {
          count: page.entries.length,
          next_cursor: page.more ? (page.entries.at(-1)?.id ?? null) : null,
          balance: formatMicros(page.balanceMicros),
        },
      };
    },
  );
}
