/**
 * The chat-completions planner: an OpenAI-compatible endpoint (a hosted API, a llama.cpp server, Ollama,
 * vLLM) plans an analysis by tool calls over the catalog (search, describe), the price (estimate), metered
 * reads and a run of the analysis. The tools are bound to the asking account by the domain: the model
 * names datasets and arguments, never a key or an account. Built defensively: a turn is a tool turn when
 * it carries tool calls, whatever its finish_reason; malformed arguments are answered with an error the
 * model can correct; the loop is capped.
 */
import { z } from 'zod';
import type { Planner, PlannerTools, PlanOutcome, TranscriptEntry } from '../domain/analysis/planner.ts';
import { type AnalysisSpec, analysisName, analysisSpec } from '../domain/analysis/spec.ts';
import { AppError } from '../errors.ts';

export interface ChatPlannerOptions {
  /** The chat-completions URL, e.g. http://127.0.0.1:8080/v1/chat/completions. */
  url: string;
  model: string;
  apiKey?: string | undefined;
  timeoutMs: number;
  /** Model turns at most (each may call several tools). */
  maxRounds?: number;
  fetch?: typeof fetch;
}

const datasetArg = z.string().min(3).max(200);
const toolArgs = {
  search_datasets: z.strictObject({ query: z.string().max(200) }),
  describe_dataset: z.strictObject({ dataset: datasetArg }),
  estimate_cost: z.strictObject({ dataset: datasetArg }),
  read_dataset: z.strictObject({
    dataset: datasetArg,
    filters: z.record(z.string().max(64), z.union([z.string().max(200), z.number()])).optional(),
    from: z.string().max(20).optional(),
    to: z.string().max(20).optional(),
    limit: z.int().min(1).max(50).optional(),
  }),
  run_analysis: z.strictObject({ name: analysisName, spec: analysisSpec }),
  ask_user: z.strictObject({
    question: z.string().min(1).max(1000),
    candidates: z.array(z.string().max(200)).max(20).optional(),
  }),
} as const;

type ToolName = keyof typeof toolArgs;

const descriptions: Record<ToolName, string> = {
  search_datasets: 'Search the catalog by words; returns dataset keys, titles and list costs. Free.',
  describe_dataset:
    'A dataset: its time field, entity fields with their known values (symbols, tenors, series ids, market names), fields and types. Free.',
  estimate_cost: 'What one read of a dataset would cost the user now, and whether it would be refused. Free.',
  read_dataset:
    'Read up to 50 of the newest rows of a dataset, filtered by entity fields. Metered: burns the user’s tokens like any read.',
  run_analysis:
    'Run an analysis: series (dataset, entity, numeric field or net:<class> for COT, from, to), steps (pct_change, log_returns, difference, yoy, rebase, rolling_mean, rolling_std, rolling_zscore, resample, align, spread, ratio, correlation, beta, drawdown, percentile_rank, curve) and outputs (line, bar, table, stats). Metered: one read per series. Call it once you know the datasets and entity values.',
  ask_user:
    'Ask the user to clarify when the question is ambiguous (several symbols, series or markets match) or cannot be answered; give the candidates.',
};

const toolDefinitions = (Object.keys(toolArgs) as ToolName[]).map((name) => ({
  type: 'function' as const,
  function: {
    name,
    description: descriptions[name],
    parameters: z.toJSONSchema(toolArgs[name], { io: 'input', unrepresentable: 'any' }),
  },
}));

const systemPrompt = (today: string) =>
  `You plan data analyses for a user of a token-metered data service. Today is ${today} (UTC). Use the tools: find datasets, describe them to learn entity values and numeric fields, then call run_analysis once with a complete spec. Reads cost the user tokens: read only what you need. If the question is ambiguous, call ask_user with the candidates instead of guessing. After run_analysis, answer in two sentences: what was read and computed.`;

/** The OpenAI wire shape of a message we send back. */
interface WireMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

const replySchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.looseObject({
                id: z.string().optional(),
                function: z.looseObject({
                  name: z.string(),
                  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
                }),
              }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1),
});

function toolError(code: string, detail: string): string {
  return JSON.stringify({ error: { code, detail } });
}

export class ChatPlanner implements Planner {
  readonly name = 'chat';
  readonly #options: ChatPlannerOptions;

  constructor(options: ChatPlannerOptions) {
    this.#options = options;
  }

  async #complete(
    messages: WireMessage[],
  ): Promise<z.infer<typeof replySchema>['choices'][number]['message']> {
    const { url, model, apiKey, timeoutMs } = this.#options;
    const doFetch = this.#options.fetch ?? fetch;
    let response: Response;
    try {
      response = await doFetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(apiKey !== undefined && { authorization: `Bearer ${apiKey}` }),
        },
        body: JSON.stringify({ model, messages, tools: toolDefinitions, tool_choice: 'auto', stream: false }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new AppError(
        'service_unavailable',
        `The assistant's model did not answer (${(error as Error).name}); the built-in planner still works when no model is configured.`,
        { retry_after: 5 },
        { 'retry-after': '5' },
      );
    }
    const text = await response.text();
    const parsed = response.ok ? replySchema.safeParse(safeJson(text)) : null;
    if (!parsed?.success) {
      throw new AppError(
        'service_unavailable',
        `The assistant's model answered ${response.status} without a usable chat completion.`,
        { retry_after: 5 },
        { 'retry-after': '5' },
      );
    }
    return (parsed.data.choices[0] as z.infer<typeof replySchema>['choices'][number]).message;
  }

  async plan(question: string, tools: PlannerTools, today: string): Promise<PlanOutcome> {
    const messages: WireMessage[] = [
      { role: 'system', content: systemPrompt(today) },
      { role: 'user', content: question },
    ];
    const transcript: TranscriptEntry[] = [{ role: 'user', content: question }];
    let ran: { name: string; spec: AnalysisSpec } | null = null;
    const rounds = this.#options.maxRounds ?? 8;
    for (let round = 0; round < rounds; round++) {
      const reply = await this.#complete(messages);
      const calls = (reply.tool_calls ?? []).map((c, i) => ({
        id: c.id ?? `call_${round}_${i}`,
        name: c.function.name,
        arguments:
          typeof c.function.arguments === 'string'
            ? c.function.arguments
            : JSON.stringify(c.function.arguments ?? {}),
      }));
      const content = reply.content ?? null;
      messages.push({
        role: 'assistant',
        content,
        ...(calls.length > 0 && {
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: 'function' as const,
            function: { name: c.name, arguments: c.arguments },
          })),
        }),
      });
      transcript.push({ role: 'assistant', content, ...(calls.length > 0 && { tool_calls: calls }) });
      if (calls.length === 0) {
        if (ran) return { kind: 'analysis', ...ran, explanation: content ?? `Ran ${ran.name}.`, transcript };
        return {
          kind: 'clarify',
          message: content ?? 'The assistant gave no answer: rephrase the question.',
          candidates: [],
          transcript,
        };
      }
      for (const call of calls) {
        const outcome = await this.#call(call.name, call.arguments, tools);
        if (outcome.ran) ran = outcome.ran;
        messages.push({ role: 'tool', tool_call_id: call.id, content: outcome.content });
        transcript.push({ role: 'tool', tool_call_id: call.id, content: outcome.content });
        if (outcome.ask) {
          return {
            kind: 'clarify',
            message: outcome.ask.question,
            candidates: (outcome.ask.candidates ?? []).map((c) => ({ label: c, value: c })),
            transcript,
          };
        }
      }
    }
    if (ran) return { kind: 'analysis', ...ran, explanation: `Ran ${ran.name}.`, transcript };
    return {
      kind: 'clarify',
      message: `The assistant did not settle on an analysis in ${rounds} turns: rephrase or narrow the question.`,
      candidates: [],
      transcript,
    };
  }

  async #call(
    name: string,
    rawArguments: string,
    tools: PlannerTools,
  ): Promise<{
    content: string;
    ran?: { name: string; spec: AnalysisSpec };
    ask?: { question: string; candidates?: string[] | undefined };
  }> {
    if (!(name in toolArgs)) {
      return {
        content: toolError(
          'unknown_tool',
          `No tool ${name}; the tools are ${Object.keys(toolArgs).join(', ')}.`,
        ),
      };
    }
    const json = safeJson(rawArguments);
    if (json === undefined) {
      return {
        content: toolError(
          'invalid_arguments',
          `The arguments of ${name} are not valid JSON; send one JSON object.`,
        ),
      };
    }
    const parsed = toolArgs[name as ToolName].safeParse(json);
    if (!parsed.success) {
      const problems = parsed.error.issues
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
        .join('; ');
      return {
        content: toolError(
          'invalid_arguments',
          `The arguments of ${name} do not fit its schema: ${problems}.`,
        ),
      };
    }
    try {
      switch (name as ToolName) {
        case 'search_datasets':
          return { content: JSON.stringify(tools.search((parsed.data as { query: string }).query)) };
        case 'describe_dataset':
          return { content: JSON.stringify(tools.describe((parsed.data as { dataset: string }).dataset)) };
        case 'estimate_cost':
          return {
            content: JSON.stringify(await tools.estimate((parsed.data as { dataset: string }).dataset)),
          };
        case 'read_dataset': {
          const { dataset, ...params } = parsed.data as z.infer<(typeof toolArgs)['read_dataset']>;
          return { content: JSON.stringify(await tools.read(dataset, stripUndefined(params))) };
        }
        case 'run_analysis': {
          const args = parsed.data as z.infer<(typeof toolArgs)['run_analysis']>;
          const summary = await tools.runAnalysis(args.spec);
          return { content: JSON.stringify(summary), ran: { name: args.name, spec: args.spec } };
        }
        case 'ask_user': {
          const args = parsed.data as z.infer<(typeof toolArgs)['ask_user']>;
          return { content: JSON.stringify({ asked: true }), ask: args };
        }
      }
    } catch (error) {
      // A refusal (not found, not readable, not affordable, fair use) goes back to the model as data.
      if (error instanceof AppError && error.status < 500)
        return { content: toolError(error.code, error.message) };
      throw error;
    }
    return { content: toolError('unknown_tool', name) };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function stripUndefined<T extends Record<string, unknown>>(
  value: T,
): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}
