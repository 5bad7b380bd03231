import { entitySuggestions } from '../../catalog/entity-suggestions.ts';
import { AppError } from '../../errors.ts';
import type { Caller } from '../caller.ts';
import { formatMicros } from '../money.ts';
import { projectRow } from '../reads.ts';
import { chargeOf, refundAll } from '../refunds.ts';
import { checkSpec } from './check.ts';
import type { RenderedOutput } from './engine.ts';
import { type FairUse, readsPerRunRefusal, workbenchEntitlement } from './fair-use.ts';
import { type Analysis, type AnalysisLibrary, inputsHash, parseAnalysis } from './library.ts';
import type { Planner, PlannerTools, PlanOutcome } from './planner.ts';
import type { RunResult } from './results.ts';
import { storeResult } from './results.ts';
import {
  type AnalysisRuns,
  newBudget,
  type RunBudget,
  type RunEstimate,
  type WorkbenchDeps,
  withRefunds,
} from './runs.ts';
import { type DeclineReason, declineOf } from './scope.ts';
import type { AnalysisSpec } from './spec.ts';

/** Why a question was asked back: to name it better, not a question answered here, or a forecast. */
export type ClarifyReason = 'ask_back' | DeclineReason;

export type AskResult =
  | {
      kind: 'analysis';
      planner: string;
      name: string;
      spec: AnalysisSpec;
      /** The saved analysis when the question asked to save it, else null (saved only on request). */
      analysis: Analysis | null;
      result: RunResult;
      explanation: string;
      /** Everything the question burned: the planner's own reads and the analysis's. */
      burnedMicros: bigint;
      reads: number;
    }
  | Clarified;

type Clarified = {
  kind: 'clarify';
  planner: string;
  reason: ClarifyReason;
  message: string;
  candidates: { label: string; value: string }[];
  burnedMicros: bigint;
  reads: number;
};

/** What a question would cost if asked now, planned without reading or counting anything. */
export type QuestionEstimate =
  | {
      kind: 'estimate';
      planner: string;
      name: string;
      spec: AnalysisSpec;
      explanation: string;
      estimate: RunEstimate;
    }
  | Clarified
  | { kind: 'unavailable'; planner: string; message: string };

export interface AssistantDeps extends WorkbenchDeps {
  library: AnalysisLibrary;
  runs: AnalysisRuns;
  builtInPlanner: Planner;
  /** The chat-completions planner, when the operator configured one; else the built-in answers. */
  chatPlanner?: Planner | null;
}

type Planned = Extract<PlanOutcome, { kind: 'analysis' }>;

/** One question in flight: its run, the reads it made and what they burned, and an analysis it ran. */
interface Question {
  caller: Caller;
  requestId: string;
  runId: string;
  accountId: string;
  fairUse: FairUse;
  budget: RunBudget;
  burnedMicros: bigint;
  ran: { spec: AnalysisSpec; result: RunResult } | null;
}

export class Assistant {
  readonly #deps: AssistantDeps;

  constructor(deps: AssistantDeps) {
    this.#deps = deps;
  }

  get #planner(): Planner {
    return this.#deps.chatPlanner ?? this.#deps.builtInPlanner;
  }

  /** Which planner answers questions: the chat model when configured, else the built-in planner. */
  get plannerName(): string {
    return this.#planner.name;
  }

  #declined(question: string): Clarified | null {
    const declined = declineOf(question);
    if (!declined) return null;
    return {
      kind: 'clarify',
      planner: this.plannerName,
      candidates: [],
      burnedMicros: 0n,
      reads: 0,
      ...declined,
    };
  }

  /**
   * A question to the assistant: the planner answers with an analysis (run and explained; saved only
   * with `save`) or asks back with candidates. An answered question counts as one run of the day; every
   * read it makes, the planner's own and the analysis's, counts against reads_per_run and is metered
   * like any other. A question not answered (asked back or declined) charges nothing and does not
   * count: its reads, if the planner made any, are refunded and its run released.
   */
  async ask(
    caller: Caller,
    requestId: string,
    question: string,
    options: { save?: boolean } = {},
  ): Promise<AskResult> {
    const { accountId, fairUse } = workbenchEntitlement(this.#deps.config, caller);
    const declined = this.#declined(question);
    if (declined) return declined;
    const runId = await this.#deps.runs.begin(caller, accountId, fairUse, null, 'ask', null);
    const q: Question = {
      caller,
      requestId,
      runId,
      accountId,
      fairUse,
      budget: newBudget(),
      burnedMicros: 0n,
      ran: null,
    };
    const today = new Date(this.#deps.now()).toISOString().slice(0, 10);
    try {
      const planned = await this.#planner.plan(question, this.#tools(q), today);
      // A planner's analysis is checked like one sent to POST /analyses before anything reads it: one
      // that cannot run is a question back, never an error (a planner is not the caller's input).
      const outcome = planned.kind === 'clarify' ? planned : this.#checkPlanned(planned);
      if (outcome.kind === 'clarify') return await this.#askedBack(q, outcome);
      return await this.#answer(q, outcome, options);
    } catch (error) {
      // Nothing was answered: every read the question was charged for is given back.
      const refunded = await refundAll(
        this.#deps.meter,
        caller,
        q.budget.charged,
        `question ${runId} failed`,
      );
      q.budget.refunded.reads += refunded.reads;
      q.budget.refunded.micros += refunded.micros;
      q.burnedMicros -= refunded.micros;
      await this.#deps.store.finishAnalysisRun(runId, {
        status: 'failed',
        reads: q.budget.used,
        burnedMicros: q.burnedMicros,
        result: null,
      });
      throw withRefunds(error, 'question', q.budget.refunded);
    }
  }

  /** Not answered: nothing charged (its reads refunded), and not a run of the day. */
  async #askedBack(
    q: Question,
    outcome: { message: string; candidates: Clarified['candidates']; unsupported?: boolean },
  ): Promise<Clarified> {
    const refunded = await refundAll(
      this.#deps.meter,
      q.caller,
      q.budget.charged,
      `question ${q.runId} was asked back`,
    );
    await this.#deps.store.releaseAnalysisRun(q.accountId, q.runId);
    const n = refunded.reads;
    return {
      kind: 'clarify',
      planner: this.plannerName,
      reason: outcome.unsupported ? 'unsupported' : 'ask_back',
      message:
        n === 0
          ? outcome.message
          : `${outcome.message} (The ${n} read${n === 1 ? '' : 's'} made while planning ${n === 1 ? 'was' : 'were'} refunded.)`,
      candidates: outcome.candidates,
      burnedMicros: q.burnedMicros - refunded.micros,
      reads: q.budget.used,
    };
  }

  /** Answered: the analysis run (unless the planner ran it already), saved on request, and recorded. */
  async #answer(q: Question, outcome: Planned, options: { save?: boolean }): Promise<AskResult> {
    const earlier = q.ran;
    const result =
      earlier && JSON.stringify(earlier.spec) === JSON.stringify(outcome.spec)
        ? earlier.result
        : await this.#deps.runs.execute(q.caller, {
            requestId: `${q.requestId}.a`,
            runId: q.runId,
            analysisId: null,
            spec: outcome.spec,
            fairUse: q.fairUse,
            budget: q.budget,
            finish: false,
          });
    if (result !== earlier?.result) q.burnedMicros += result.burnedMicros;
    const analysis = options.save
      ? await this.#deps.library.create(q.caller, {
          name: outcome.name,
          spec: outcome.spec,
          planner: this.plannerName,
          transcript: outcome.transcript,
        })
      : null;
    const answered: RunResult = { ...result, analysisId: analysis?.id ?? null };
    // Recorded with its inputs (and its analysis, when saved): a rerun of the same analysis, saved now
    // or later, reuses it, and its CSV exports.
    await this.#deps.store.finishAnalysisRun(q.runId, {
      status: 'done',
      reads: q.budget.used,
      burnedMicros: q.burnedMicros,
      result: storeResult(answered),
      ...(analysis && { analysisId: analysis.id }),
      inputsHash: inputsHash(outcome.spec),
    });
    const explanation = [
      outcome.explanation,
      ...answered.notes,
      describeCost(answered, q.burnedMicros, q.budget.used),
    ].join(' ');
    return {
      kind: 'analysis',
      planner: this.plannerName,
      name: outcome.name,
      spec: outcome.spec,
      analysis,
      result: answered,
      explanation,
      burnedMicros: q.burnedMicros,
      reads: q.budget.used,
    };
  }

  /**
   * What a question would read and cost if asked now, at the caller's price, and what would refuse it:
   * planned by the built-in planner without reading, charging or counting anything. A chat model plans
   * as it reads, so with one configured the cost is known only once it answers.
   */
  async estimateQuestion(caller: Caller, question: string): Promise<QuestionEstimate> {
    workbenchEntitlement(this.#deps.config, caller);
    const declined = this.#declined(question);
    if (declined) return declined;
    if (this.#deps.chatPlanner) {
      return {
        kind: 'unavailable',
        planner: this.plannerName,
        message:
          'The chat model plans as it reads, so what a question costs is known only once it answers: each read at your price, within reads_per_run.',
      };
    }
    const today = new Date(this.#deps.now()).toISOString().slice(0, 10);
    const planned = await this.#planner.plan(question, estimateTools(), today);
    const outcome = planned.kind === 'clarify' ? planned : this.#checkPlanned(planned);
    if (outcome.kind === 'clarify') {
      return {
        kind: 'clarify',
        planner: this.plannerName,
        reason: 'unsupported' in outcome && outcome.unsupported ? 'unsupported' : 'ask_back',
        message: outcome.message,
        candidates: outcome.candidates,
        burnedMicros: 0n,
        reads: 0,
      };
    }
    // A question always reads afresh (it never reuses a paid result), so it is estimated as a fresh run.
    const estimate = await this.#deps.runs.estimate(caller, { spec: outcome.spec }, { reading: true });
    return {
      kind: 'estimate',
      planner: this.plannerName,
      name: outcome.name,
      spec: outcome.spec,
      explanation: outcome.explanation,
      estimate,
    };
  }

  /** A planned analysis with its name and spec as parsed, or the question back saying why it cannot run. */
  #checkPlanned(planned: Planned): Planned | { kind: 'clarify'; message: string; candidates: [] } {
    try {
      const { name, spec } = parseAnalysis(planned) as { name: string; spec: AnalysisSpec };
      checkSpec(spec, this.#deps.catalog);
      return { ...planned, name, spec };
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      return {
        kind: 'clarify',
        message: `That question gave an analysis that cannot run (${error.message}) Ask it again another way.`,
        candidates: [],
      };
    }
  }

  /** The planner's tools, bound to this caller: nothing in them can name another account or a key. */
  #tools(q: Question): PlannerTools {
    const { catalog, reads } = this.#deps;
    const { caller, budget, fairUse } = q;
    let n = 0;
    return {
      search: (query) =>
        catalog
          .search({ q: query })
          .slice(0, 20)
          .map((e) => ({ dataset: e.key, title: e.dataset.title, list_cost: e.listCost })),
      describe: (dataset) => {
        const entry = reads.resolve(dataset);
        return {
          dataset: entry.key,
          title: entry.dataset.title,
          time_field: entry.dataset.time_field,
          entity_fields: entry.dataset.entity_fields,
          fields: entry.dataset.fields.map((f) => ({ name: f.name, type: f.type, unit: f.unit ?? null })),
          entity_values: entitySuggestions(entry),
          list_cost: entry.listCost,
        };
      },
      estimate: async (dataset) => {
        const e = await reads.estimate(caller, dataset);
        return {
          dataset: e.target,
          token_cost: formatMicros(e.costMicros),
          would_refuse: e.refusal?.code ?? null,
        };
      },
      read: async (dataset, params) => {
        if (budget.used + 1 > fairUse.reads_per_run) {
          throw readsPerRunRefusal(`One question may make ${fairUse.reads_per_run} reads.`, fairUse);
        }
        const readId = `${q.requestId}.t${++n}`;
        const metered = await reads.read(caller, readId, dataset, {
          filters: Object.fromEntries(Object.entries(params.filters ?? {}).map(([k, v]) => [k, [v]])),
          from: params.from,
          to: params.to,
          limit: Math.min(params.limit ?? 20, 50),
          sort: 'desc',
        });
        // A read counts once served: a refused one (not found, not affordable) read nothing.
        budget.used++;
        q.burnedMicros += metered.cost.burnedMicros;
        const { entry } = metered.value;
        if (metered.cost.burnedMicros > 0n) {
          budget.charged.push(chargeOf(readId, entry.key, entry.listCost, metered.cost, this.#deps.now()));
        }
        return {
          rows: (metered.value.rows ?? []).map((r) => projectRow(r, metered.value.fields)),
          nextCursor: metered.value.nextCursor,
          tokenCost: formatMicros(metered.cost.costMicros),
          tokensBurned: formatMicros(metered.cost.burnedMicros),
        };
      },
      runAnalysis: async (spec) => {
        const result = await this.#deps.runs.execute(caller, {
          requestId: `${q.requestId}.r${++n}`,
          runId: q.runId,
          analysisId: null,
          spec,
          fairUse,
          budget,
          finish: false,
        });
        q.burnedMicros += result.burnedMicros;
        q.ran = { spec, result };
        return {
          reads: result.reads.map((r) => ({ series: r.series, dataset: r.dataset, rows: r.rows })),
          tokens_burned: formatMicros(result.burnedMicros),
          outputs: result.outputs.map((o) => summarizeOutput(o)),
          problems: result.problems,
        };
      },
    };
  }
}

/** Tools for planning an estimate: the built-in planner uses none; a metered one is refused. */
function estimateTools(): PlannerTools {
  const refuse = (): never => {
    throw new AppError('invalid_request', 'An estimate reads nothing.');
  };
  return {
    search: () => [],
    describe: refuse,
    estimate: async () => refuse(),
    read: async () => refuse(),
    runAnalysis: async () => refuse(),
  };
}

function summarizeOutput(o: RenderedOutput): Record<string, unknown> {
  if (o.kind === 'stats') return { kind: o.kind, title: o.title, rows: o.rows };
  if (o.kind === 'table') return { kind: o.kind, title: o.title, columns: o.columns, rows: o.rows.slice(-5) };
  return {
    kind: o.kind,
    title: o.title,
    series: o.series.map((s) => ({ name: s.name, points: s.x.length, last: s.y.at(-1) ?? null })),
  };
}

function describeCost(result: RunResult, burnedMicros: bigint, reads: number): string {
  const rows = result.reads.reduce((sum, r) => sum + r.rows, 0);
  return `It made ${reads} metered read${reads === 1 ? '' : 's'} (${rows} observations) and burned ${formatMicros(burnedMicros)} tokens.`;
}
