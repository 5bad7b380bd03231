/** GET /api/v1/me/usage/summary: tokens per UTC day by channel, and the top datasets, for charts. */
import { z } from 'zod';
import type { Caller } from '../../domain/caller.ts';
import { formatMicros } from '../../domain/money.ts';
import type { TypedApp } from '../../edge/server.ts';
import type { Services } from '../../services.ts';
import { iso, tokens } from '../../views/common.ts';
import { edge, problems, queryInt } from '../schemas.ts';

const byChannel = <T extends z.ZodType>(value: T) => z.object({ rest: value, mcp: value, terminal: value });

export function registerUsageSummaryRoutes(app: TypedApp, deps: Services): void {
  app.get(
    '/api/v1/me/usage/summary',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'getMyUsageSummary',
        tags: ['account'],
        summary:
          'Usage of the last days: tokens burned and reads per UTC day by channel, and the top datasets',
        description:
          "Sums the account's usage events (GET /api/v1/me/usage) from the start of the UTC day `days - 1` days ago until now. Refunded reads are taken back out.",
        security: [{ bearer: [] }, { apiKey: [] }],
        querystring: z.strictObject({
          days: queryInt(1, 90, 30).default(30).describe('UTC days, today included: 1 to 90 (default 30).'),
        }),
        response: {
          200: z.object({
            since: z.string().describe('The start of the first day (ISO 8601, UTC).'),
            days: z.array(
              z.object({
                date: z.string().describe('YYYY-MM-DD (UTC).'),
                tokens_burned: byChannel(tokens),
                reads: byChannel(z.int()),
              }),
            ),
            top_datasets: z.array(z.object({ dataset: z.string(), tokens_burned: tokens, reads: z.int() })),
            partial: z.boolean().describe('true: too many events to sum; the oldest days are incomplete.'),
          }),
          ...problems(...edge.required, 'invalid_request', 'forbidden'),
        },
      },
    },
    async (request) => {
      const summary = await deps.accounts.usageSummary(request.caller as Caller, request.query.days);
      return {
        since: iso(summary.since) as string,
        days: summary.days.map((d) => ({
          date: d.date,
          tokens_burned: {
            rest: formatMicros(d.burnedMicros.rest),
            mcp: formatMicros(d.burnedMicros.mcp),
            terminal: formatMicros(d.burnedMicros.terminal),
          },
          reads: d.reads,
        })),
        top_datasets: summary.top.map((t) => ({
          dataset: t.dataset,
          tokens_burned: formatMicros(t.burnedMicros),
          reads: t.reads,
        })),
        partial: summary.partial,
      };
    },
  );
}
