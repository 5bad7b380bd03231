/**
 * The Workbench assistant (docs/analyze.md): a question in plain English, answered with a saved and run
 * analysis or a question back. Every read it makes is metered; the question counts as one run of the day.
 */
import { z } from 'zod';
import type { Caller } from '../../domain/caller.ts';
import type { TypedApp } from '../../edge/server.ts';
import type { Services } from '../../services.ts';
import { askOut, presentAsk } from '../../views/analyses.ts';
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
          'Ask the analysis assistant a question: it answers with an analysis (saved and run) or asks back',
        description:
          'The built-in planner answers unless the operator configured a chat-completions model (ASSISTANT_URL); `planner` says which answered. The reads it makes are ordinary metered reads at your price.',
        security: [{ bearer: [] }, { apiKey: [] }],
        body: z.strictObject({ question: z.string().max(1000) }),
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
      const answer = await deps.analyses.ask(request.caller as Caller, request.id, request.body.question);
      return presentAsk(deps.pricing, answer);
    },
  );
}
