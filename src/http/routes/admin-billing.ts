import { z } from 'zod';
import { presentTokenRequest, tokenRequestOut } from '../../views/billing.ts';
import { label } from '../../views/common.ts';
import { bodyCodes, problems } from '../schemas.ts';
import type { AdminRoutes } from './admin-guard.ts';

/** Token requests as an operator settles them (docs/billing.md). */
export function registerAdminBillingRoutes(admin: AdminRoutes): void {
  const { app, deps, config, onRequest, security, adminRefusals, tags, audit } = admin;
  app.get(
    '/api/v1/admin/token-requests',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminListTokenRequests',
        tags,
        summary: 'Open token requests, newest first',
        security,
        response: { 200: z.object({ data: z.array(tokenRequestOut) }), ...problems(...adminRefusals) },
      },
    },
    async () => ({ data: (await deps.billing.openRequests()).map(presentTokenRequest) }),
  );

  const params = z.object({ id: z.string().max(64) });
  app.post(
    '/api/v1/admin/token-requests/:id/credit',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminCreditTokenRequest',
        tags,
        summary:
          "Credit a token request's tokens (once: the request id is the ledger entry's idempotency key)",
        security,
        params,
        response: { 200: tokenRequestOut, ...problems(...adminRefusals, 'not_found', 'conflict') },
      },
    },
    async (request) => {
      const settled = await deps.billing.settle(request.params.id, { credit: true, actor: 'admin-api' });
      audit(request, 'credit_token_request', {
        request: settled.id,
        account: settled.accountId,
        tokens: settled.tokens,
      });
      return presentTokenRequest(settled);
    },
  );

  app.post(
    '/api/v1/admin/token-requests/:id/decline',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminDeclineTokenRequest',
        tags,
        summary: 'Decline a token request, with the reason the account will see',
        security,
        params,
        body: z.strictObject({ reason: label(500).min(1) }),
        response: {
          200: tokenRequestOut,
          ...problems(...adminRefusals, ...bodyCodes, 'not_found', 'conflict'),
        },
      },
    },
    async (request) => {
      const settled = await deps.billing.settle(request.params.id, {
        credit: false,
        reason: request.body.reason,
      });
      audit(request, 'decline_token_request', { request: settled.id, account: settled.accountId });
      return presentTokenRequest(settled);
    },
  );
}
