/** Free, unauthenticated descriptions of the service: pricing, sandbox, public test, health, OpenAPI. */
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors.ts';
import type { TypedApp } from '../app.ts';
import { problems } from '../schemas.ts';

export function baseUrlOf(deps: Deps, host: string | undefined, protocol: string): string {
  return deps.env.BASE_URL ?? `${protocol}://${host ?? `localhost:${deps.env.PORT}`}`;
}

export function registerMetaRoutes(app: TypedApp, deps: Deps): void {
  app.get(
    '/api/v1/pricing',
    {
      schema: {
        operationId: 'getPricing',
        tags: ['pricing'],
        summary: 'Pricing configuration (spec 2.2): costs per dataset, packages, loyalty tiers, how you pay',
        response: {
          200: z.looseObject({ eur_per_token: z.number(), endpoint_costs: z.record(z.string(), z.int()) }),
        },
      },
    },
    async () => deps.config.pricing,
  );

  app.get(
    '/api/v1/auth/sandbox',
    {
      schema: {
        operationId: 'describeSandbox',
        tags: ['auth'],
        summary: 'Sandbox key configuration (spec 2.1)',
        response: { 200: z.looseObject({ enabled: z.boolean(), ttl_hours: z.int(), token_grant: z.int() }) },
      },
    },
    async (request) => {
      const base = baseUrlOf(deps, request.host, request.protocol);
      return { ...deps.config.sandbox, mcp_url: deps.config.sandbox.mcp_url.replace('{base_url}', base) };
    },
  );

  app.get(
    '/api/v1/auth/public-test',
    {
      schema: {
        operationId: 'describePublicTest',
        tags: ['auth'],
        summary: 'The free public test (spec 2.6)',
        response: { 200: z.looseObject({ id: z.string(), window_days: z.int(), key_ttl_days: z.int() }) },
      },
    },
    async () => deps.config.pricing.free_public_test,
  );

  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'healthz',
        tags: ['operations'],
        summary: 'Process liveness',
        response: { 200: z.object({ status: z.literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'readyz',
        tags: ['operations'],
        summary: 'Readiness: the store answers',
        response: { 200: z.object({ status: z.literal('ready'), store: z.literal('ok') }), ...problems(503) },
      },
    },
    async () => {
      await deps.store.ping().catch(() => {
        throw new AppError('service_unavailable', 'The store cannot be reached.');
      });
      return { status: 'ready' as const, store: 'ok' as const };
    },
  );

  app.get(
    '/api/v1/openapi.json',
    {
      schema: {
        operationId: 'openapi',
        tags: ['operations'],
        summary: 'This OpenAPI 3.1 document',
        hide: true,
      },
    },
    async () => app.swagger(),
  );
}
