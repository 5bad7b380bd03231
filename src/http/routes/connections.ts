/**
 * MCP sign-in (OAuth) for the account holder: the Terminal shows a pending sign-in, approves it with
 * spending caps or declines it, and lists the account's connections. Revoking one is revoking its key.
 */
import { z } from 'zod';
import type { Caller } from '../../domain/caller.ts';
import { kindsWhere } from '../../domain/credential-kinds.ts';
import { capAmount } from '../../domain/operator.ts';
import type { TypedApp } from '../../edge/server.ts';
import type { Services } from '../../services.ts';
import {
  connectionOut,
  pendingConsentOut,
  presentConnection,
  presentPendingConsent,
} from '../../views/connections.ts';
import { bodyCodes, edge, problems } from '../schemas.ts';

const uidParams = z.object({ uid: z.string().min(1).max(128) });
const redirectOut = z.object({
  redirect_to: z.string().describe('Where the browser goes next: the OAuth server, then the client.'),
});

export function registerConnectionRoutes(app: TypedApp, deps: Services): void {
  const sessionOnly = { auth: 'required' as const, allow: kindsWhere('managesAccount') };
  const refusals = [...edge.required, 'forbidden', 'not_found'] as const;
  const security = [{ bearer: [] }];
  const { connections } = deps;

  app.get(
    '/api/v1/connect/:uid',
    {
      config: sessionOnly,
      schema: {
        operationId: 'getPendingConnection',
        tags: ['connections'],
        summary: 'A pending MCP sign-in: the client asking, where it returns to',
        security,
        params: uidParams,
        response: { 200: pendingConsentOut, ...problems(...refusals) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return presentPendingConsent(await connections.pending(request.params.uid));
    },
  );

  app.post(
    '/api/v1/connect/:uid/approve',
    {
      config: sessionOnly,
      schema: {
        operationId: 'approveConnection',
        tags: ['connections'],
        summary: 'Approve a pending MCP sign-in with its spending caps',
        description:
          'Creates the connection: the client reads as a key of this account (API prices, the account tier, package and limits) within the caps given here. Revoke it on the Keys page (DELETE /api/v1/keys/{id}).',
        security,
        params: uidParams,
        body: z.strictObject({
          daily_tokens: capAmount.optional().describe('Tokens per UTC day, or null (or absent) for no cap.'),
          monthly_tokens: capAmount
            .optional()
            .describe('Tokens per UTC month, or null (or absent) for no cap.'),
        }),
        response: {
          200: redirectOut.extend({ connection: connectionOut }),
          ...problems(...refusals, ...bodyCodes),
        },
      },
    },
    async (request, reply) => {
      const { redirectTo, view } = await connections.approve(request.caller as Caller, request.params.uid, {
        dailyCapMicros: request.body.daily_tokens ?? null,
        monthlyCapMicros: request.body.monthly_tokens ?? null,
      });
      reply.header('cache-control', 'no-store');
      return { redirect_to: redirectTo, connection: presentConnection(view, deps.now()) };
    },
  );

  app.post(
    '/api/v1/connect/:uid/deny',
    {
      config: sessionOnly,
      schema: {
        operationId: 'denyConnection',
        tags: ['connections'],
        summary: 'Decline a pending MCP sign-in; the client is told access_denied',
        security,
        params: uidParams,
        response: { 200: redirectOut, ...problems(...refusals, ...bodyCodes) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return { redirect_to: await connections.deny(request.caller as Caller, request.params.uid) };
    },
  );

  app.get(
    '/api/v1/connections',
    {
      config: sessionOnly,
      schema: {
        operationId: 'listConnections',
        tags: ['connections'],
        summary: "The account's MCP connections (OAuth clients), newest first",
        security,
        response: {
          200: z.object({
            data: z.array(connectionOut),
            meta: z.object({ count: z.int(), enabled: z.boolean() }),
          }),
          ...problems(...edge.required, 'forbidden'),
        },
      },
    },
    async (request) => {
      const views = await connections.list(request.caller as Caller);
      const now = deps.now();
      return {
        data: views.map((v) => presentConnection(v, now)),
        meta: { count: views.length, enabled: connections.enabled },
      };
    },
  );
}
