import { z } from 'zod';
import { type AccountView, newAccountInput } from '../../domain/operator.ts';
import { operatorAccountOut as accountOut, presentAccountView } from '../../views/accounts.ts';
import { ledgerEntryOut as entryOut, presentLedgerEntry } from '../../views/ledger.ts';
import { bodyCodes, problems } from '../schemas.ts';
import type { AdminRoutes } from './admin-guard.ts';

export function registerAdminAccountRoutes(admin: AdminRoutes): void {
  const { app, deps, config, onRequest, security, adminRefusals, tags, accountParams, audit } = admin;
  const { operator } = deps;
  const present = (view: AccountView) => presentAccountView(deps.config, view, deps.now());
  app.post(
    '/api/v1/admin/accounts',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminCreateAccount',
        tags,
        summary: 'Create a login account (no signup grant; credit it explicitly)',
        security,
        body: newAccountInput,
        response: { 201: accountOut, ...problems(...adminRefusals, ...bodyCodes, 'conflict') },
      },
    },
    async (request, reply) => {
      const account = await operator.createAccount(request.body);
      audit(request, 'create_account', { account: account.id });
      reply.code(201);
      return present(await operator.view(account));
    },
  );

  app.get(
    '/api/v1/admin/accounts/:id',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminGetAccount',
        tags,
        summary: 'An account: plan, package, entitlements, balance and keys',
        security,
        params: accountParams,
        response: { 200: accountOut, ...problems(...adminRefusals, 'invalid_request', 'not_found') },
      },
    },
    async (request) => present(await operator.view(await operator.findAccount(request.params.id))),
  );

  app.put(
    '/api/v1/admin/accounts/:id/package',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminAssignPackage',
        tags,
        summary: "Assign a package (credits this month's monthly_credits once) or clear it with null",
        security,
        params: accountParams,
        body: z.strictObject({ package: z.string().max(64).nullable() }),
        response: {
          200: z.object({
            account: accountOut,
            monthly_credit: entryOut.extend({ duplicate: z.boolean() }).nullable(),
          }),
          ...problems(...adminRefusals, ...bodyCodes, 'not_found'),
        },
      },
    },
    async (request) => {
      const { account, monthlyCredit } = await operator.assignPackage(
        request.params.id,
        request.body.package,
      );
      audit(request, 'assign_package', {
        account: account.id,
        package: account.packageId,
        monthly_credit_entry: monthlyCredit?.entry.id ?? null,
      });
      return {
        account: present(await operator.view(account)),
        monthly_credit: monthlyCredit
          ? { ...presentLedgerEntry(monthlyCredit.entry), duplicate: monthlyCredit.duplicate }
          : null,
      };
    },
  );

  app.put(
    '/api/v1/admin/accounts/:id/early-bird',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminSetEarlyBird',
        tags,
        summary: 'Set or clear the early_bird plan (only for accounts created before the cohort cutoff)',
        security,
        params: accountParams,
        body: z.strictObject({ early_bird: z.boolean() }),
        response: { 200: accountOut, ...problems(...adminRefusals, ...bodyCodes, 'not_found', 'conflict') },
      },
    },
    async (request) => {
      const account = await operator.setEarlyBird(request.params.id, request.body.early_bird);
      audit(request, 'set_early_bird', { account: account.id, plan: account.plan });
      return present(await operator.view(account));
    },
  );
}
