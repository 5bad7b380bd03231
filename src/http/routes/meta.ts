/**
 * Free, unauthenticated descriptions of the service: pricing, sandbox, public test, health, OpenAPI; and
 * the process metrics, behind METRICS_TOKEN when the operator sets one.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { publicMetadata } from '../../edge/conventions.ts';
import type { TypedApp } from '../../edge/server.ts';
import { AppError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { presentPack } from '../../views/billing.ts';
import { edge, problems } from '../schemas.ts';
import { authorizeOperatorToken, type OperatorTokenCheck } from './admin-guard.ts';

const READY_TIMEOUT_MS = 2000;

const metricsCheck: OperatorTokenCheck = {
  challenge: 'Bearer realm="token-metered-data-metrics"',
  wrong: { code: 'invalid_metrics_token', detail: 'The metrics token is not valid.' },
  missing: 'GET /metrics needs the metrics token: "Authorization: Bearer <METRICS_TOKEN>".',
  notForCredentials: 'GET /metrics takes the metrics token (METRICS_TOKEN), not keys or sessions.',
};

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export function baseUrlOf(deps: Services, host: string | undefined, protocol: string): string {
  return deps.env.BASE_URL ?? `${protocol}://${host ?? `localhost:${deps.env.PORT}`}`;
}

export function registerMetaRoutes(app: TypedApp, deps: Services): void {
  registerDescriptions(app, deps);
  registerHealth(app, deps);
  registerMetrics(app, deps);
  app.get(
    '/api/v1/openapi.json',
    {
      ...publicMetadata,
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

/** What the service offers, for anyone: pricing, the sandbox and the public test. */
function registerDescriptions(app: TypedApp, deps: Services): void {
  app.get(
    '/api/v1/pricing',
    {
      ...publicMetadata,
      schema: {
        operationId: 'getPricing',
        tags: ['pricing'],
        summary: 'Pricing configuration (spec 2.2): costs per dataset, packages, loyalty tiers, how you pay',
        response: {
          200: z.looseObject({ eur_per_token: z.number(), endpoint_costs: z.record(z.string(), z.int()) }),
          ...problems(...edge.optional),
        },
      },
    },
    // Token packs with their price (tokens × eur_per_token), as GET /api/v1/billing/token-packs lists them.
    async () => ({ ...deps.config.pricing, token_packs: deps.billing.packs().map(presentPack) }),
  );

  app.get(
    '/api/v1/auth/sandbox',
    {
      ...publicMetadata,
      schema: {
        operationId: 'describeSandbox',
        tags: ['auth'],
        summary: 'Sandbox key configuration (spec 2.1)',
        response: {
          200: z.looseObject({ enabled: z.boolean(), ttl_hours: z.int(), token_grant: z.int() }),
          ...problems(...edge.optional),
        },
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
      ...publicMetadata,
      schema: {
        operationId: 'describePublicTest',
        tags: ['auth'],
        summary: 'The free public test (spec 2.6)',
        response: {
          200: z.looseObject({ id: z.string(), window_days: z.int(), key_ttl_days: z.int() }),
          ...problems(...edge.optional),
        },
      },
    },
    async () => deps.config.pricing.free_public_test,
  );
}

/** Liveness and readiness, for the orchestrator: never authenticated or limited. */
function registerHealth(app: TypedApp, deps: Services): void {
  app.get(
    '/healthz',
    {
      exposeHeadRoute: true,
      config: { auth: 'none', limits: false },
      schema: {
        operationId: 'healthz',
        tags: ['operations'],
        summary: 'Process liveness',
        response: { 200: z.object({ status: z.literal('ok') }), ...problems('invalid_request') },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      exposeHeadRoute: true,
      config: { auth: 'none', limits: false },
      schema: {
        operationId: 'readyz',
        tags: ['operations'],
        summary: 'Readiness: the store answers (503 if not); the limiter is reported',
        description:
          'The store (ledger) must answer: without it nothing can be served. The limiter is reported but does ' +
          'not make the node unready: with Redis unreachable each node keeps enforcing its share of every ' +
          'limit (`degraded`); `local` means in-process limits by configuration (no REDIS_URL).',
        response: {
          200: z.object({
            status: z.literal('ready'),
            store: z.literal('ok'),
            limiter: z.enum(['ok', 'degraded', 'local']),
          }),
          ...problems('invalid_request', 'service_unavailable'),
        },
      },
    },
    async () => {
      const [store, limiter] = await Promise.all([
        withTimeout(deps.health.store(), READY_TIMEOUT_MS).then(
          () => true,
          () => false,
        ),
        withTimeout(deps.health.limiter(), READY_TIMEOUT_MS).catch(() => 'degraded' as const),
      ]);
      if (!store) throw new AppError('service_unavailable', 'The store cannot be reached.', { limiter });
      return { status: 'ready' as const, store: 'ok' as const, limiter };
    },
  );
}

function registerMetrics(app: TypedApp, deps: Services): void {
  const metricsToken = deps.env.METRICS_TOKEN;
  app.get(
    '/metrics',
    {
      config: { auth: 'none', limits: false },
      // With METRICS_TOKEN set, only the scraper that holds it reads the metrics.
      ...(metricsToken !== undefined && {
        onRequest: async (request: FastifyRequest) =>
          authorizeOperatorToken(metricsToken, request, metricsCheck),
      }),
      schema: {
        operationId: 'metrics',
        tags: ['operations'],
        summary: 'Process metrics in the Prometheus text format (limiter fallback, among others)',
        hide: true,
      },
    },
    async (request, reply) => {
      const { contentType, body } = await deps.metrics.render(request.headers.accept);
      return reply.type(contentType).send(body);
    },
  );
}
