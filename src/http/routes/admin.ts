/**
 * The operator API under /api/v1/admin, guarded by ADMIN_TOKEN (admin-guard.ts). Every change is
 * written to the log as an audit line, and credits carry the actor in their ledger memo.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { TypedApp } from '../../edge/server.ts';
import type { Services } from '../../services.ts';
import { edge } from '../schemas.ts';
import { registerAdminAccountRoutes } from './admin-accounts.ts';
import { registerAdminBillingRoutes } from './admin-billing.ts';
import { registerAdminCollectorRoutes } from './admin-collectors.ts';
import { registerAdminCreditRoutes } from './admin-credits.ts';
import { type AdminRoutes, authorizeAdmin } from './admin-guard.ts';
import { registerAdminKeyRoutes } from './admin-keys.ts';

export function registerAdminRoutes(app: TypedApp, deps: Services): void {
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

  const admin: AdminRoutes = {
    app,
    deps,
    config,
    onRequest,
    security,
    adminRefusals,
    tags,
    accountParams,
    audit,
  };
  registerAdminAccountRoutes(admin);
  registerAdminCreditRoutes(admin);
  registerAdminKeyRoutes(admin);
  registerAdminCollectorRoutes(admin);
  registerAdminBillingRoutes(admin);
}
