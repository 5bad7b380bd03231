import { z } from 'zod';
import { formatMicros } from '../../domain/money.ts';
import { capAmount } from '../../domain/operator.ts';
import { keyExpiry, label } from '../../views/common.ts';
import { issuedKeyOut, keyOut, presentKey } from '../../views/keys.ts';
import { bodyCodes, problems } from '../schemas.ts';
import type { AdminRoutes } from './admin-guard.ts';

export function registerAdminKeyRoutes(admin: AdminRoutes): void {
  const { app, deps, config, onRequest, security, adminRefusals, tags, accountParams, audit } = admin;
  const { operator } = deps;
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
}
