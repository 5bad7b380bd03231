/** What the Workbench's analyses, estimates, runs and assistant answers look like to clients. */
import { z } from 'zod';
import type { AskResult, QuestionEstimate } from '../domain/analysis/assistant.ts';
import type { Analysis } from '../domain/analysis/library.ts';
import type { RunResult } from '../domain/analysis/results.ts';
import type { RunEstimate } from '../domain/analysis/runs.ts';
import { analysisName, analysisSpec } from '../domain/analysis/spec.ts';
import { formatMicros } from '../domain/money.ts';
import { costEur, type Pricing } from '../domain/pricing.ts';
import { iso, tokens } from './common.ts';

const transcriptEntry = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string().nullable(),
  tool_calls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })).optional(),
  tool_call_id: z.string().optional(),
});

export const analysisOut = z.object({
  id: z.string(),
  name: z.string(),
  spec: analysisSpec,
  planner: z
    .string()
    .nullable()
    .describe('Which planner wrote it (built-in, chat), or null when composed by hand.'),
  transcript: z
    .array(transcriptEntry)
    .nullable()
    .describe("The assistant's messages and tool calls, when it planned this."),
  created_at: z.string(),
  updated_at: z.string(),
});

export function presentAnalysis(a: Analysis): z.infer<typeof analysisOut> {
  return {
    id: a.id,
    name: a.name,
    spec: a.spec,
    planner: a.planner,
    transcript: a.transcript,
    created_at: iso(a.createdAt) as string,
    updated_at: iso(a.updatedAt) as string,
  };
}

const fairUseOut = z.object({
  runs_per_day: z.int(),
  runs_today: z.int().describe('Runs and questions this account started today (UTC).'),
  reads_per_run: z.int(),
  reuse_minutes: z.int(),
  confirm_above_tokens: z.int(),
});

export const runEstimateOut = z.object({
  reads: z.array(
    z.object({
      series: z.string(),
      dataset: z.string(),
      entity: z.record(z.string(), z.union([z.string(), z.number()])),
      field: z.string(),
      token_cost: tokens.describe('This read at your price now (Terminal: ×1.35 after your discount).'),
      tokens_burned: tokens,
    }),
  ),
  token_cost: tokens,
  tokens_burned: tokens.describe('What the run would burn: the sum of its reads.'),
  cost_eur: z.string(),
  balance: tokens,
  balance_after: tokens,
  confirm_required: z.boolean().describe('Above confirm_above_tokens: ask the user before running.'),
  would_refuse: z
    .string()
    .nullable()
    .describe('insufficient_tokens, fair_use_limit, spending_cap_reached, or null.'),
  refusal_detail: z.string().nullable(),
  reuse: z
    .object({ run_id: z.string(), started_at: z.string() })
    .nullable()
    .describe('A paid result of the same inputs a run now would reuse (nothing read or burned).'),
  fair_use: fairUseOut,
});

export function presentEstimate(pricing: Pricing, e: RunEstimate): z.infer<typeof runEstimateOut> {
  return {
    reads: e.reads.map((r) => ({
      series: r.series,
      dataset: r.dataset,
      entity: r.entity,
      field: r.field,
      token_cost: formatMicros(r.costMicros),
      tokens_burned: formatMicros(r.burnMicros),
    })),
    token_cost: formatMicros(e.costMicros),
    tokens_burned: formatMicros(e.burnMicros),
    cost_eur: costEur(pricing, e.burnMicros),
    balance: formatMicros(e.balanceMicros),
    balance_after: formatMicros(e.balanceAfterMicros),
    confirm_required: e.confirmRequired,
    would_refuse: e.refusal?.code ?? null,
    refusal_detail: e.refusal?.message ?? null,
    reuse: e.reuse ? { run_id: e.reuse.runId, started_at: iso(e.reuse.startedAt) as string } : null,
    fair_use: e.fairUse,
  };
}

const cell = z.union([z.string(), z.number(), z.null()]);
const renderedOut = z.union([
  z.object({
    kind: z.enum(['line', 'bar']),
    title: z.string(),
    x: z.enum(['date', 'label']),
    series: z.array(
      z.object({ name: z.string(), x: z.array(z.string()), y: z.array(z.number().nullable()) }),
    ),
  }),
  z.object({
    kind: z.literal('table'),
    title: z.string(),
    columns: z.array(z.string()),
    rows: z.array(z.array(cell)),
  }),
  z.object({
    kind: z.literal('stats'),
    title: z.string(),
    rows: z.array(
      z.object({
        name: z.string(),
        count: z.int(),
        first_date: z.string().nullable(),
        last_date: z.string().nullable(),
        mean: z.number().nullable(),
        std: z.number().nullable(),
        min: z.number().nullable(),
        max: z.number().nullable(),
        last: z.number().nullable(),
      }),
    ),
  }),
]);

export const runResultOut = z.object({
  run_id: z.string(),
  analysis_id: z.string().nullable(),
  started_at: z.string(),
  reads: z.array(
    z.object({
      series: z.string(),
      dataset: z.string(),
      request_id: z.string().describe('The request id of the read on its ledger entry and usage event.'),
      rows: z.int(),
      truncated: z
        .boolean()
        .describe('More observations matched than one read returns (1000): the oldest were left out.'),
      first_date: z.string().nullable(),
      last_date: z.string().nullable(),
      token_cost: tokens,
      tokens_burned: tokens,
    }),
  ),
  tokens_burned: tokens.describe('What this request burned: the sum of its reads; 0 for a reused result.'),
  cost_eur: z.string(),
  outputs: z.array(renderedOut),
  problems: z.array(z.object({ path: z.string(), message: z.string() })),
  notes: z
    .array(z.string())
    .describe(
      'Where the data did not meet the dates asked for: a series that starts later than its from ("the data starts 2025-03-01; showing from then"), one cut to its newest 1000 observations, one with nothing in its range.',
    ),
  reused_from: z
    .object({ run_id: z.string(), started_at: z.string(), tokens_burned: tokens })
    .nullable()
    .describe('Set when an earlier paid result of the same inputs was reused: nothing was read now.'),
});

export function presentRun(pricing: Pricing, r: RunResult): z.infer<typeof runResultOut> {
  return {
    run_id: r.runId,
    analysis_id: r.analysisId,
    started_at: iso(r.startedAt) as string,
    reads: r.reads.map((x) => ({
      series: x.series,
      dataset: x.dataset,
      request_id: x.requestId,
      rows: x.rows,
      truncated: x.truncated,
      first_date: x.firstDate,
      last_date: x.lastDate,
      token_cost: formatMicros(x.costMicros),
      tokens_burned: formatMicros(x.burnedMicros),
    })),
    tokens_burned: formatMicros(r.burnedMicros),
    cost_eur: costEur(pricing, r.burnedMicros),
    outputs: r.outputs,
    problems: r.problems,
    notes: r.notes,
    reused_from: r.reusedFrom
      ? {
          run_id: r.reusedFrom.runId,
          started_at: iso(r.reusedFrom.startedAt) as string,
          tokens_burned: formatMicros(r.reusedFrom.burnedMicros),
        }
      : null,
  };
}

const clarifyOut = z.object({
  kind: z.literal('clarify'),
  planner: z.string(),
  reason: z
    .enum(['ask_back', 'unsupported', 'forecast'])
    .describe(
      'ask_back: name it better (see candidates); unsupported: not a question the assistant answers; forecast: the assistant works on past data only. None is charged or counted as a run.',
    ),
  message: z.string().describe('The question back to the user, or what the assistant can do instead.'),
  candidates: z.array(z.object({ label: z.string(), value: z.string() })),
  tokens_burned: tokens,
  reads: z.int(),
});

export const askOut = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('analysis'),
    planner: z.string().describe('Which planner answered: built-in or chat.'),
    explanation: z.string().describe('What was read and computed, any notes on the dates, and the cost.'),
    name: analysisName,
    spec: analysisSpec,
    analysis: analysisOut
      .nullable()
      .describe('The saved analysis when the question was sent with save: true; else null (save it later).'),
    result: runResultOut,
    tokens_burned: tokens.describe("Everything the question burned: the planner's reads and the analysis's."),
    reads: z.int(),
  }),
  clarifyOut,
]);

function presentClarify(a: Extract<AskResult, { kind: 'clarify' }>): z.infer<typeof clarifyOut> {
  return {
    kind: 'clarify',
    planner: a.planner,
    reason: a.reason,
    message: a.message,
    candidates: a.candidates,
    tokens_burned: formatMicros(a.burnedMicros),
    reads: a.reads,
  };
}

export function presentAsk(pricing: Pricing, a: AskResult): z.infer<typeof askOut> {
  if (a.kind === 'clarify') return presentClarify(a);
  return {
    kind: 'analysis',
    planner: a.planner,
    explanation: a.explanation,
    name: a.name,
    spec: a.spec,
    analysis: a.analysis ? presentAnalysis(a.analysis) : null,
    result: presentRun(pricing, a.result),
    tokens_burned: formatMicros(a.burnedMicros),
    reads: a.reads,
  };
}

export const questionEstimateOut = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('estimate'),
    planner: z.string(),
    name: analysisName,
    spec: analysisSpec,
    explanation: z.string().describe('What the question would read and compute.'),
    estimate: runEstimateOut,
  }),
  clarifyOut,
  z.object({
    kind: z.literal('unavailable'),
    planner: z.string(),
    message: z.string().describe('Why the cost is known only once the question is answered (a chat model).'),
  }),
]);

export function presentQuestionEstimate(
  pricing: Pricing,
  q: QuestionEstimate,
): z.infer<typeof questionEstimateOut> {
  if (q.kind === 'clarify') return presentClarify(q);
  if (q.kind === 'unavailable') return q;
  return {
    kind: 'estimate',
    planner: q.planner,
    name: q.name,
    spec: q.spec,
    explanation: q.explanation,
    estimate: presentEstimate(pricing, q.estimate),
  };
}
