/**
 * The Workbench composer's analyses (docs/analyze.md): list, create, open, rename or edit, duplicate,
 * delete, estimate, run and export. For accounts whose package has analysis_assistant; everyone else
 * gets 403 analysis_not_entitled. A run's reads are ordinary metered reads at the caller's price.
 */
import { z } from 'zod';
import { analysisName, analysisSpec } from '../../domain/analysis/spec.ts';
import type { Caller } from '../../domain/caller.ts';
import type { TypedApp } from '../../edge/server.ts';
import type { Services } from '../../services.ts';
import {
  analysisOut,
  presentAnalysis,
  presentEstimate,
  presentRun,
  runEstimateOut,
  runResultOut,
} from '../../views/analyses.ts';
import { bodyCodes, edge, problems } from '../schemas.ts';

/** The refusals every Workbench route may answer besides the edge's. */
export const workbenchCodes = [...edge.required, 'analysis_not_entitled'] as const;
/** A run's: its reads' refusals, the catalog's, and fair use. */
const runCodes = [
  ...workbenchCodes,
  'not_found',
  'dataset_not_found',
  'insufficient_tokens',
  'spending_cap_reached',
  'fair_use_limit',
] as const;

const params = z.strictObject({ id: z.string().min(1).max(64) });
const security: Record<string, string[]>[] = [{ bearer: [] }, { apiKey: [] }];
const config = { auth: 'required' as const };

const caller = (request: { caller: Caller | null }) => request.caller as Caller;

/** One function per route, registered in the order the API document lists them. */
export function registerAnalysisRoutes(app: TypedApp, deps: Services): void {
  listAnalyses(app, deps);
  createAnalysis(app, deps);
  estimateAnalysisSpec(app, deps);
  getAnalysis(app, deps);
  updateAnalysis(app, deps);
  duplicateAnalysis(app, deps);
  deleteAnalysis(app, deps);
  estimateAnalysis(app, deps);
  runAnalysis(app, deps);
  exportAnalysisResult(app, deps);
}

function listAnalyses(app: TypedApp, deps: Services): void {
  const { library, assistant } = deps.analyses;
  app.get(
    '/api/v1/analyses',
    {
      config,
      schema: {
        operationId: 'listAnalyses',
        tags: ['analyses'],
        summary: "The account's saved analyses, the most recently changed first",
        security,
        response: {
          200: z.object({
            data: z.array(analysisOut),
            meta: z.object({
              count: z.int(),
              planner: z.string(),
              unreadable: z
                .array(z.object({ id: z.string(), name: z.string() }))
                .optional()
                .describe(
                  'Stored analyses left out because they no longer parse: replace their spec or delete them.',
                ),
            }),
          }),
          ...problems(...workbenchCodes),
        },
      },
    },
    async (request) => {
      const { analyses: list, unreadable } = await library.list(caller(request));
      return {
        data: list.map(presentAnalysis),
        meta: {
          count: list.length,
          planner: assistant.plannerName,
          ...(unreadable.length > 0 && { unreadable }),
        },
      };
    },
  );
}

function createAnalysis(app: TypedApp, deps: Services): void {
  const { library } = deps.analyses;
  app.post(
    '/api/v1/analyses',
    {
      config,
      schema: {
        operationId: 'createAnalysis',
        tags: ['analyses'],
        summary:
          'Save a new analysis: series, steps and outputs (checked against the catalog; nothing is read)',
        security,
        body: z.strictObject({ name: analysisName, spec: analysisSpec }),
        response: {
          201: analysisOut,
          ...problems(...workbenchCodes, ...bodyCodes, 'dataset_not_found'),
        },
      },
    },
    async (request, reply) => {
      const created = await library.create(caller(request), request.body);
      reply.code(201);
      return presentAnalysis(created);
    },
  );
}

function estimateAnalysisSpec(app: TypedApp, deps: Services): void {
  const { runs } = deps.analyses;
  app.post(
    '/api/v1/analyses/estimate',
    {
      config,
      schema: {
        operationId: 'estimateAnalysisSpec',
        tags: ['analyses'],
        summary: 'What running an unsaved analysis would read and cost now (free: nothing is read)',
        security,
        body: z.strictObject({ spec: analysisSpec }),
        response: { 200: runEstimateOut, ...problems(...workbenchCodes, ...bodyCodes, 'dataset_not_found') },
      },
    },
    async (request) =>
      presentEstimate(deps.pricing, await runs.estimate(caller(request), { spec: request.body.spec })),
  );
}

function getAnalysis(app: TypedApp, deps: Services): void {
  const { library } = deps.analyses;
  app.get(
    '/api/v1/analyses/:id',
    {
      config,
      schema: {
        operationId: 'getAnalysis',
        tags: ['analyses'],
        summary: 'One analysis',
        security,
        params,
        response: { 200: analysisOut, ...problems(...workbenchCodes, 'not_found', 'invalid_request') },
      },
    },
    async (request) => presentAnalysis(await library.get(caller(request), request.params.id)),
  );
}

function updateAnalysis(app: TypedApp, deps: Services): void {
  const { library } = deps.analyses;
  app.patch(
    '/api/v1/analyses/:id',
    {
      config,
      schema: {
        operationId: 'updateAnalysis',
        tags: ['analyses'],
        summary: 'Rename an analysis and/or replace its steps',
        security,
        params,
        body: z
          .strictObject({ name: analysisName.optional(), spec: analysisSpec.optional() })
          .refine((b) => b.name !== undefined || b.spec !== undefined, 'give name, spec or both'),
        response: {
          200: analysisOut,
          ...problems(...workbenchCodes, ...bodyCodes, 'not_found', 'dataset_not_found'),
        },
      },
    },
    async (request) => {
      const { name, spec } = request.body;
      return presentAnalysis(
        await library.update(caller(request), request.params.id, {
          ...(name !== undefined && { name }),
          ...(spec !== undefined && { spec }),
        }),
      );
    },
  );
}

function duplicateAnalysis(app: TypedApp, deps: Services): void {
  const { library } = deps.analyses;
  app.post(
    '/api/v1/analyses/:id/duplicate',
    {
      config,
      schema: {
        operationId: 'duplicateAnalysis',
        tags: ['analyses'],
        summary: 'Copy an analysis under a new name (default: "<name> (copy)")',
        security,
        params,
        body: z.strictObject({ name: analysisName.optional() }).nullish(),
        response: { 201: analysisOut, ...problems(...workbenchCodes, ...bodyCodes, 'not_found') },
      },
    },
    async (request, reply) => {
      const copy = await library.duplicate(caller(request), request.params.id, request.body?.name);
      reply.code(201);
      return presentAnalysis(copy);
    },
  );
}

function deleteAnalysis(app: TypedApp, deps: Services): void {
  const { library } = deps.analyses;
  app.delete(
    '/api/v1/analyses/:id',
    {
      config,
      schema: {
        operationId: 'deleteAnalysis',
        tags: ['analyses'],
        summary: 'Delete an analysis (its runs still count toward the day’s fair use)',
        security,
        params,
        response: { 204: z.null().describe('Deleted.'), ...problems(...workbenchCodes, 'not_found') },
      },
    },
    async (request, reply) => {
      await library.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}

function estimateAnalysis(app: TypedApp, deps: Services): void {
  const { runs } = deps.analyses;
  app.get(
    '/api/v1/analyses/:id/estimate',
    {
      config,
      schema: {
        operationId: 'estimateAnalysis',
        tags: ['analyses'],
        summary:
          'What a run would read and cost now, each read at your price, and what would refuse it (free)',
        security,
        params,
        response: { 200: runEstimateOut, ...problems(...workbenchCodes, 'not_found', 'dataset_not_found') },
      },
    },
    async (request) =>
      presentEstimate(deps.pricing, await runs.estimate(caller(request), { id: request.params.id })),
  );
}

function runAnalysis(app: TypedApp, deps: Services): void {
  const { runs } = deps.analyses;
  app.post(
    '/api/v1/analyses/:id/run',
    {
      config,
      schema: {
        operationId: 'runAnalysis',
        tags: ['analyses'],
        summary: 'Run an analysis: one metered read per series, then its steps and outputs',
        description:
          'Each series is one ordinary metered read (its ledger entry and usage event carry the request id shown per read). A rerun with unchanged inputs within the package’s reuse_minutes returns the result already paid for and says so in reused_from; send {"fresh": true} to read again.',
        security,
        params,
        body: z.strictObject({ fresh: z.boolean().optional() }).nullish(),
        response: { 200: runResultOut, ...problems(...runCodes, ...bodyCodes) },
      },
    },
    async (request) => {
      const result = await runs.run(caller(request), request.id, request.params.id, {
        fresh: request.body?.fresh === true,
      });
      return presentRun(deps.pricing, result);
    },
  );
}

function exportAnalysisResult(app: TypedApp, deps: Services): void {
  const { runs } = deps.analyses;
  app.get(
    '/api/v1/analyses/:id/result.csv',
    {
      config,
      schema: {
        operationId: 'exportAnalysisResult',
        tags: ['analyses'],
        summary: 'The latest result of an analysis as CSV (free: nothing is read)',
        security,
        params,
        response: {
          200: {
            description: 'The series joined on their dates, then each other table after an empty line.',
            content: { 'text/csv': { schema: z.string() } },
          },
          ...problems(...workbenchCodes, 'not_found'),
        },
      },
    },
    async (request, reply) => {
      const { name, csv } = await runs.resultCsv(caller(request), request.params.id);
      const file = `${
        name
          .replace(/[^A-Za-z0-9._-]+/g, '-')
          .replace(/^-+|-+$/g, '')
          .slice(0, 80) || 'analysis'
      }.csv`;
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${file}"`)
        .send(csv);
    },
  );
}
