import { z } from 'zod';
import { formatMicros } from '../../domain/money.ts';
import { creditKinds, tokenAmount } from '../../domain/operator.ts';
import { AppError } from '../../errors.ts';
import { label, tokens } from '../../views/common.ts';
import {
  ledgerEntryOut as entryOut,
  presentLedgerEntry,
  presentMonthlyCreditRun,
} from '../../views/ledger.ts';
import { bodyCodes, problems } from '../schemas.ts';
import type { AdminRoutes } from './admin-guard.ts';

export function registerAdminCreditRoutes(admin: AdminRoutes): void {
  const { app, deps, config, onRequest, security, adminRefusals, tags, accountParams, audit } = admin;
  const { operator } = deps;
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
      return presentMonthlyCreditRun(run);
    },
  );
}
