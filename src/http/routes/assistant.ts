/**
 * The Workbench assistant (docs/analyze.md): a question in plain English, answered with a run analysis
 * (saved on request) or a question back, and its estimate beforehand. Every read it makes is metered; an
 * answered question counts as one run of the day, one asked back or declined neither charges nor counts.
 */
import { z } from 'zod';
import type { Caller } from '../../domain/caller.ts';
import type { TypedApp } from '../../edge/server.ts';
import type { Services } from '../../services.ts';
import { askOut, presentAsk, presentQuestionEstimate, questionEstimateOut } from '../../views/analyses.ts';
import { bodyCodes, problems } from '../schemas.ts';
import { workbenchCodes } from './analyses.ts';

export function registerAssistantRoutes(app: TypedApp, deps: Services): void {
  app.post(
    '/api/v1/assistant/ask',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'askAssistant',
        tags: ['analyses'],
        summary:
          'Ask the analysis assistant a question: it answers with a run analysis (saved only with save: true) or asks back',
        description:
          'The built-in planner answers unless the operator configured a chat-completions model (ASSISTANT_URL); `planner` says which answered. The reads it makes are ordinary metered reads at your price. A question asked back or declined (a forecast, a ranking) charges nothing and does not count as a run of the day.',
        security: [{ bearer: [] }, { apiKey: [] }],
        body: z.strictObject({
          question: z.string().max(1000),
          save: z
            .boolean()
            .optional()
            .describe(
              'Save the answer as an analysis of the account (default false: saved only on request).',
            ),
        }),
        response: {
          200: askOut,
          ...problems(
            ...workbenchCodes,
            ...bodyCodes,
            'dataset_not_found',
            'insufficient_tokens',
            'spending_cap_reached',
            'fair_use_limit',
          ),
        },
      },
    },
    async (request) => {
      const answer = await deps.analyses.assistant.ask(
        request.caller as Caller,
        request.id,
        request.body.question,
        {
          save: request.body.save === true,
        },
      );
      return presentAsk(deps.pricing, answer);
    },
  );

  app.post(
    '/api/v1/assistant/estimate',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'estimateAssistantQuestion',
        tags: ['analyses'],
        summary: 'What asking a question would read and cost now, at your price (free: nothing is read)',
        description:
          'Plans the question as ask would and prices its reads like an analysis estimate, without reading, charging or counting a run. A question that would be asked back or declined is answered as ask would answer it; with a chat model configured the cost is known only once it answers (`unavailable`).',
        security: [{ bearer: [] }, { apiKey: [] }],
        body: z.strictObject({ question: z.string().max(1000) }),
        response: {
          200: questionEstimateOut,
          ...problems(...workbenchCodes, ...bodyCodes, 'dataset_not_found'),
        },
      },
    },
    async (request) =>
      presentQuestionEstimate(
        deps.pricing,
        await deps.analyses.assistant.estimateQuestion(request.caller as Caller, request.body.question),
      ),
  );
}
