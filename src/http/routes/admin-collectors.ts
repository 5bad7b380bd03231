import { z } from 'zod';
import {
  collectionRunOut,
  collectorStatusOut,
  presentCollectionRun,
  presentCollectorStatus,
} from '../../views/collectors.ts';
import { bodyCodes, problems } from '../schemas.ts';
import type { AdminRoutes } from './admin-guard.ts';

/** Collectors as the operator watches them (docs/collectors.md): each source's state, and a run now. */
export function registerAdminCollectorRoutes(admin: AdminRoutes): void {
  const { app, deps, config, onRequest, security, adminRefusals, tags, audit } = admin;
  app.get(
    '/api/v1/admin/collectors',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminListCollectors',
        tags,
        summary: 'Every collector source: last success, next run, lag, failures, last error, cursor',
        security,
        response: { 200: z.object({ data: z.array(collectorStatusOut) }), ...problems(...adminRefusals) },
      },
    },
    async () => {
      const now = deps.now();
      return { data: (await deps.collections.status()).map((s) => presentCollectorStatus(s, now)) };
    },
  );

  app.post(
    '/api/v1/admin/collectors/:source/runs',
    {
      config,
      onRequest,
      schema: {
        operationId: 'adminRunCollector',
        tags,
        summary: 'Run a collector source now and answer with its run (a failed run is 200 with its error)',
        security,
        params: z.object({ source: z.string().max(64) }),
        body: z
          .strictObject({
            since: z.iso.date().optional().describe('Ask from this date (a backfill window).'),
            backfill: z
              .boolean()
              .optional()
              .describe("From the source's earliest date when it has no cursor."),
          })
          .nullish(),
        response: { 200: collectionRunOut, ...problems(...adminRefusals, ...bodyCodes, 'not_found') },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      const run = await deps.collections.run(request.params.source, {
        ...(body.since === undefined ? {} : { since: body.since }),
        backfill: body.backfill ?? false,
      });
      audit(request, 'run_collector', { source: run.source, outcome: run.outcome });
      return presentCollectionRun(run);
    },
  );
}
