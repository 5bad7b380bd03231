/**
 * Buying tokens (docs/billing.md): the packs, a Stripe Checkout session for one, Stripe's webhook,
 * the account's purchases, and token requests where card payments are not configured.
 */
import { z } from 'zod';
import type { Billing } from '../../domain/billing.ts';
import type { Caller } from '../../domain/caller.ts';
import type { TypedApp } from '../../edge/server.ts';
import type { Services } from '../../services.ts';
import {
  presentPack,
  presentPurchase,
  presentTokenRequest,
  purchaseOut,
  tokenPackOut,
  tokenRequestOut,
} from '../../views/billing.ts';
import { label } from '../../views/common.ts';
import { bodyCodes, edge, problems } from '../schemas.ts';
import { baseUrlOf } from './meta.ts';

const security: { [label: string]: string[] }[] = [{ bearer: [] }, { apiKey: [] }];
const tags = ['billing'];

export function registerBuyRoutes(app: TypedApp, deps: Services): void {
  packsRoute(app, deps.billing);
  checkoutRoute(app, deps);
  stripeWebhookRoute(app, deps.billing);
  purchasesRoute(app, deps.billing);
  requestTokensRoute(app, deps.billing);
  myTokenRequestsRoute(app, deps.billing);
}

/** GET /billing/token-packs: the packs, and whether cards are taken here. */
function packsRoute(app: TypedApp, billing: Billing): void {
  app.get(
    '/api/v1/billing/token-packs',
    {
      config: { auth: 'none' },
      schema: {
        operationId: 'listTokenPacks',
        tags,
        summary: 'Token packs for sale, and whether they are paid by card here (else requested)',
        response: {
          200: z.object({
            data: z.array(tokenPackOut),
            meta: z.object({
              card_payments: z
                .boolean()
                .describe(
                  'true: buy with POST …/checkout (Stripe); false: request with POST /api/v1/billing/token-requests.',
                ),
            }),
          }),
          ...problems(...edge.optional),
        },
      },
    },
    async () => ({ data: billing.packs().map(presentPack), meta: { card_payments: billing.live } }),
  );
}

/** POST /billing/token-packs/:id/checkout: a Stripe Checkout session for one pack. */
function checkoutRoute(app: TypedApp, deps: Services): void {
  const { billing } = deps;
  app.post(
    '/api/v1/billing/token-packs/:id/checkout',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'checkoutTokenPack',
        tags,
        summary:
          "A Stripe Checkout session for a pack: pay on Stripe's page; the tokens are credited when Stripe confirms",
        security,
        params: z.object({ id: z.string().max(64) }),
        response: {
          201: z.object({ id: z.string(), url: z.string().describe("Stripe's payment page.") }),
          ...problems(...edge.required, 'not_found', 'forbidden', 'not_live', 'service_unavailable'),
        },
      },
    },
    async (request, reply) => {
      const back = `${baseUrlOf(deps, request.host, request.protocol)}/terminal/wallet`;
      const session = await billing.checkout(request.caller as Caller, request.params.id, back);
      reply.code(201).header('cache-control', 'no-store');
      return session;
    },
  );
}

/** POST /billing/stripe/webhook: Stripe's signed events. */
function stripeWebhookRoute(app: TypedApp, billing: Billing): void {
  // Stripe signs the body as sent: this route reads it as text, not parsed JSON.
  app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    scope.post(
      '/api/v1/billing/stripe/webhook',
      {
        // Behind the IP fence like every route: a delivery it refuses (429) Stripe sends again later.
        config: { auth: 'none' },
        schema: {
          operationId: 'stripeWebhook',
          tags,
          summary:
            "Stripe's events (checkout.session.completed, charge.refunded), verified by their signature",
          body: z.string(),
          response: {
            200: z.object({ received: z.literal(true), applied: z.string() }),
            ...problems(...edge.none, ...bodyCodes, 'invalid_signature', 'not_found', 'conflict'),
          },
        },
      },
      async (request) => {
        const signature = request.headers['stripe-signature'];
        const outcome = await billing.webhook(
          request.body as string,
          typeof signature === 'string' ? signature : undefined,
        );
        request.log.info({ stripe: outcome.applied }, 'stripe webhook');
        return { received: true as const, applied: outcome.applied };
      },
    );
  });
}

/** GET /me/purchases: the account's purchases. */
function purchasesRoute(app: TypedApp, billing: Billing): void {
  app.get(
    '/api/v1/me/purchases',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'listMyPurchases',
        tags,
        summary: "The account's token purchases, newest first, with receipts",
        security,
        response: {
          200: z.object({ data: z.array(purchaseOut) }),
          ...problems(...edge.required, 'forbidden'),
        },
      },
    },
    async (request) => ({ data: (await billing.purchases(request.caller as Caller)).map(presentPurchase) }),
  );
}

/** POST /billing/token-requests: a pack asked for without a card. */
function requestTokensRoute(app: TypedApp, billing: Billing): void {
  app.post(
    '/api/v1/billing/token-requests',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'requestTokens',
        tags,
        summary: 'Ask for a token pack without a card: an operator credits or declines the request',
        security,
        body: z.strictObject({
          pack: z.string().max(64),
          note: label(500).optional().describe('For the operator: an invoice reference, a purchase order.'),
        }),
        response: {
          201: tokenRequestOut,
          ...problems(...edge.required, ...bodyCodes, 'not_found', 'forbidden', 'conflict'),
        },
      },
    },
    async (request, reply) => {
      const created = await billing.requestTokens(
        request.caller as Caller,
        request.body.pack,
        request.body.note ?? null,
      );
      reply.code(201);
      return presentTokenRequest(created);
    },
  );
}

/** GET /me/token-requests: the account's token requests. */
function myTokenRequestsRoute(app: TypedApp, billing: Billing): void {
  app.get(
    '/api/v1/me/token-requests',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'listMyTokenRequests',
        tags,
        summary: "The account's token requests and their state, newest first",
        security,
        response: {
          200: z.object({ data: z.array(tokenRequestOut) }),
          ...problems(...edge.required, 'forbidden'),
        },
      },
    },
    async (request) => ({
      data: (await billing.myRequests(request.caller as Caller)).map(presentTokenRequest),
    }),
  );
}
