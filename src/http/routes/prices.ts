/** GET /api/v1/me/prices: every dataset priced for the caller, from the Terminal and by API key. */
import { z } from 'zod';
import type { Caller } from '../../domain/caller.ts';
import { formatMicros } from '../../domain/money.ts';
import type { TypedApp } from '../../edge/server.ts';
import type { Services } from '../../services.ts';
import { tokens } from '../../views/common.ts';
import { edge, problems } from '../schemas.ts';

export function registerPriceRoutes(app: TypedApp, deps: Services): void {
  app.get(
    '/api/v1/me/prices',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'getMyPrices',
        tags: ['account'],
        summary:
          'Every dataset priced for you now: from the Terminal and by API key, and whether you may read it',
        description:
          'Free. The tier discount is the one your burn this month earns; the Terminal price adds the 35% surcharge after it. A read costs exactly these figures (GET /api/v1/estimate gives one read with your balance and any refusal).',
        security: [{ bearer: [] }, { apiKey: [] }],
        response: {
          200: z.object({
            data: z.array(
              z.object({
                key: z.string(),
                list_cost: z.int().describe('Tokens per read before the tier discount.'),
                p0: z.boolean(),
                fields: z.array(z.string()).describe("The dataset's field names, to search by."),
                terminal_cost: tokens.describe('Per read from the Terminal: discounted, then ×1.35.'),
                api_key_cost: tokens.describe('Per read with a wallet key (REST or MCP): discounted.'),
                entitled: z
                  .boolean()
                  .describe('false: this credential gets 402 not_entitled (a free key reads P0 only).'),
                data_source: z
                  .enum(['sample', 'imported', 'external', 'none_yet'])
                  .describe(
                    "sample: generated rows; external: read from the operator's own database; none_yet: sample rows are generated on the first read.",
                  ),
              }),
            ),
            meta: z.object({
              count: z.int(),
              tier: z.object({ level: z.int(), name: z.string(), discount_pct: z.number() }),
            }),
          }),
          ...problems(...edge.required),
        },
      },
    },
    async (request) => {
      const caller = request.caller as Caller;
      const { tier, lines } = await deps.reads.priceList(caller);
      return {
        data: lines.map((line) => ({
          key: line.entry.key,
          list_cost: line.entry.listCost,
          p0: line.entry.p0,
          fields: line.entry.dataset.fields.map((f) => f.name),
          terminal_cost: formatMicros(line.terminalMicros),
          api_key_cost: formatMicros(line.apiKeyMicros),
          entitled: line.entitled,
          data_source:
            line.source === 'import'
              ? ('imported' as const)
              : line.source === 'external'
                ? ('external' as const)
                : line.source === 'sample'
                  ? ('sample' as const)
                  : ('none_yet' as const),
        })),
        meta: {
          count: lines.length,
          tier: { level: tier.level, name: tier.name, discount_pct: tier.discount_pct },
        },
      };
    },
  );
}
