import { AppError } from '../../errors.ts';
import type { AnalysisRunKind } from '../../store/port.ts';
import type { Caller } from '../caller.ts';
import { estimateReads, type MeterDeps } from '../metering.ts';
import { formatMicros } from '../money.ts';
import { type DataReads, projectRow } from '../reads.ts';
import { type ChargedRead, chargeOf, refundAll } from '../refunds.ts';
import { checkSpec, type SeriesPlan } from './check.ts';
import { type Computed, computeSteps, renderOutputs, resultCsv } from './engine.ts';
import {
  DAY_MS,
  type FairUse,
  fairUseRefusal,
  nextUtcDay,
  readsPerRunRefusal,
  workbenchEntitlement,
} from './fair-use.ts';
import { type AnalysisLibrary, inputsHash, type LibraryDeps, newId, toAnalysis } from './library.ts';
import {
  coverageNotes,
  loadResult,
  OBSERVATIONS_PER_SERIES,
  type RunResult,
  type SeriesRead,
  storeResult,
  toComputed,
} from './results.ts';
import { type AnalysisSpec, analysisSpec } from './spec.ts';

export interface ReadCost {
  series: string;
  dataset: string;
  entity: Record<string, string | number>;
  field: string;
  costMicros: bigint;
  burnMicros: bigint;
}

export interface RunEstimate {
  reads: ReadCost[];
  costMicros: bigint;
  burnMicros: bigint;
  balanceMicros: bigint;
  balanceAfterMicros: bigint;
  /** Above the package's confirm_above_tokens: the page asks the user to confirm. */
  confirmRequired: boolean;
  /** The refusal a run would get now (402 insufficient_tokens, 429 fair_use_limit), or null. */
  refusal: AppError | null;
  fairUse: FairUse & { runs_today: number };
  /** A paid result a run now would reuse instead of reading again, or null. */
  reuse: { runId: string; startedAt: number } | null;
}

/**
 * One run's or question's reads: how many count against reads_per_run, those charged (refunded if it
 * fails after them), and what was refunded already.
 */
export interface RunBudget {
  used: number;
  charged: ChargedRead[];
  refunded: { reads: number; micros: bigint };
}

export const newBudget = (): RunBudget => ({ used: 0, charged: [], refunded: { reads: 0, micros: 0n } });

/** The refusal (or failure) of a run, saying which of its reads were refunded. */
export function withRefunds(
  error: unknown,
  what: 'run' | 'question',
  refunded: RunBudget['refunded'],
): unknown {
  if (!(error instanceof AppError) || refunded.reads === 0) return error;
  const n = refunded.reads;
  return new AppError(
    error.code,
    `${error.message} The ${what}'s ${n} read${n === 1 ? '' : 's'} already charged (${formatMicros(refunded.micros)} tokens) ${n === 1 ? 'was' : 'were'} refunded.`,
    { ...error.extras, refunded_tokens: formatMicros(refunded.micros) },
    error.headers,
  );
}

/** What every Workbench capability past the library is given: it reads, and is metered. */
export interface WorkbenchDeps extends LibraryDeps {
  reads: DataReads;
  /** The metered path's ledger, prices and clock: forecasts of several reads, and refunds. */
  meter: MeterDeps;
}

export interface RunsDeps extends WorkbenchDeps {
  library: AnalysisLibrary;
}

/** How a run is executed: within a question (the question records it) or on its own. */
export interface ExecuteOptions {
  requestId: string;
  runId: string;
  analysisId: string | null;
  spec: AnalysisSpec;
  fairUse: FairUse;
  budget: RunBudget;
  /** A composer run, checked by begin() and recorded here; false for a question's analysis. */
  finish: boolean;
}

export class AnalysisRuns {
  readonly #deps: RunsDeps;

  constructor(deps: RunsDeps) {
    this.#deps = deps;
  }

  async #runsToday(accountId: string): Promise<number> {
    return this.#deps.store.countAnalysisRuns(accountId, nextUtcDay(this.#deps.now()) - DAY_MS);
  }

  async #reusable(accountId: string, spec: AnalysisSpec, fairUse: FairUse) {
    if (fairUse.reuse_minutes <= 0) return null;
    return this.#deps.store.findAnalysisRun(accountId, {
      inputsHash: inputsHash(spec),
      sinceMs: this.#deps.now() - fairUse.reuse_minutes * 60_000,
    });
  }

  /**
   * What a run would read and cost now, each read at the caller's price, and what would refuse it.
   * `reading`: for a run about to read (a fresh run), whose cost a result to reuse does not cover: the
   * balance is checked whatever there is to reuse.
   */
  async estimate(
    caller: Caller,
    target: { id: string } | { spec: AnalysisSpec },
    options: { reading?: boolean } = {},
  ): Promise<RunEstimate> {
    const { accountId, fairUse } = workbenchEntitlement(this.#deps.config, caller);
    const spec =
      'spec' in target ? target.spec : toAnalysis(await this.#deps.library.own(accountId, target.id)).spec;
    const plans = checkSpec(spec, this.#deps.catalog);
    const forecast = await estimateReads(
      this.#deps.meter,
      caller,
      plans.map((plan) => ({
        target: plan.entry.key,
        items: [{ label: plan.entry.key, listCost: plan.entry.listCost, p0: plan.entry.p0 }],
      })),
    );
    const reads = plans.map((plan, i): ReadCost => {
      const one = forecast.reads[i] as { costMicros: bigint; burnMicros: bigint };
      return {
        series: plan.spec.id,
        dataset: plan.entry.key,
        entity: plan.spec.entity,
        field: plan.spec.field,
        costMicros: one.costMicros,
        burnMicros: one.burnMicros,
      };
    });
    const { burnMicros, balanceMicros } = forecast;
    const runsToday = await this.#runsToday(accountId);
    const reuse = options.reading ? null : await this.#reusable(accountId, spec, fairUse);
    const refusal =
      this.#fairUseRefusal(reads.length, runsToday, reuse !== null, fairUse) ??
      (reuse ? null : forecast.refusal);
    return {
      reads,
      costMicros: forecast.costMicros,
      burnMicros,
      balanceMicros,
      balanceAfterMicros: refusal === null && !reuse ? balanceMicros - burnMicros : balanceMicros,
      confirmRequired: burnMicros > BigInt(fairUse.confirm_above_tokens) * 1_000_000n,
      refusal,
      fairUse: { ...fairUse, runs_today: runsToday },
      reuse: reuse ? { runId: reuse.id, startedAt: reuse.startedAt } : null,
    };
  }

  /** What the package's fair use refuses a run of `reads` reads now, or null. */
  #fairUseRefusal(reads: number, runsToday: number, reusing: boolean, fairUse: FairUse): AppError | null {
    if (reads > fairUse.reads_per_run) {
      return readsPerRunRefusal(
        `This analysis makes ${reads} reads; one run may make ${fairUse.reads_per_run}.`,
        fairUse,
      );
    }
    if (!reusing && runsToday >= fairUse.runs_per_day) {
      return fairUseRefusal(
        `This account has started its ${fairUse.runs_per_day} analysis runs for today (UTC).`,
        'runs_per_day',
        fairUse.runs_per_day,
        this.#deps.now(),
      );
    }
    return null;
  }

  /** Runs a saved analysis: reuses a paid result of the same inputs within reuse_minutes unless `fresh`. */
  async run(
    caller: Caller,
    requestId: string,
    id: string,
    options: { fresh?: boolean } = {},
  ): Promise<RunResult> {
    const { accountId, fairUse } = workbenchEntitlement(this.#deps.config, caller);
    const analysis = toAnalysis(await this.#deps.library.own(accountId, id));
    if (!options.fresh) {
      const reuse = await this.#reusable(accountId, analysis.spec, fairUse);
      if (reuse?.result) {
        const paid = loadResult(reuse.result);
        return {
          ...paid,
          analysisId: analysis.id,
          burnedMicros: 0n,
          reusedFrom: { runId: reuse.id, startedAt: reuse.startedAt, burnedMicros: reuse.burnedMicros },
        };
      }
    }
    const runId = await this.begin(caller, accountId, fairUse, analysis.id, 'run', analysis.spec);
    return this.execute(caller, {
      requestId,
      runId,
      analysisId: analysis.id,
      spec: analysis.spec,
      fairUse,
      budget: newBudget(),
      finish: true,
    });
  }

  /** Starts a run (or a question) against the day's cap; refuses before anything is read. */
  async begin(
    caller: Caller,
    accountId: string,
    fairUse: FairUse,
    analysisId: string | null,
    kind: AnalysisRunKind,
    spec: AnalysisSpec | null,
  ): Promise<string> {
    if (spec) {
      const estimate = await this.estimate(caller, { spec }, { reading: true });
      if (spec.series.length > fairUse.reads_per_run) throw estimate.refusal as AppError;
      if (estimate.refusal && estimate.refusal.code !== 'fair_use_limit') throw estimate.refusal;
    }
    const runId = newId('run');
    const now = this.#deps.now();
    const begun = await this.#deps.store.beginAnalysisRun(
      {
        id: runId,
        accountId,
        analysisId,
        kind,
        inputsHash: spec ? inputsHash(spec) : null,
        startedAt: now,
      },
      { sinceMs: nextUtcDay(now) - DAY_MS, maxRuns: fairUse.runs_per_day },
    );
    if (!begun.ok) {
      throw fairUseRefusal(
        `This account has started its ${fairUse.runs_per_day} analysis runs (composer runs and assistant questions) for today (UTC).`,
        'runs_per_day',
        fairUse.runs_per_day,
        now,
      );
    }
    return runId;
  }

  /**
   * Reads (metered) and computes; records the run's outcome. `budget` counts reads against reads_per_run
   * and collects the charged reads. A run that fails after some reads were charged refunds them: it
   * served nothing.
   */
  async execute(caller: Caller, run: ExecuteOptions): Promise<RunResult> {
    const { spec, fairUse, budget } = run;
    const plans = checkSpec(spec, this.#deps.catalog);
    if (budget.used + plans.length > fairUse.reads_per_run) {
      throw readsPerRunRefusal(
        `This would make ${budget.used + plans.length} reads in one run; one run may make ${fairUse.reads_per_run}.`,
        fairUse,
      );
    }
    if (!run.finish) {
      // A question's analysis: the whole of it against the balance and the key's caps before a read.
      const estimate = await this.estimate(caller, { spec }, { reading: true });
      if (estimate.refusal && estimate.refusal.code !== 'fair_use_limit') throw estimate.refusal;
    }
    const startedAt = this.#deps.now();
    const done = {
      reads: [] as SeriesRead[],
      computed: new Map<string, Computed>(),
      charged: [] as ChargedRead[],
    };
    try {
      for (const plan of plans) await this.#readSeries(caller, run, plan, startedAt, done);
    } catch (error) {
      throw await this.#failed(caller, run, done, error);
    }
    budget.charged.push(...done.charged);
    const burnedMicros = done.reads.reduce((sum, r) => sum + r.burnedMicros, 0n);
    const { values, problems } = computeSteps(spec, done.computed);
    const result: RunResult = {
      runId: run.runId,
      analysisId: run.analysisId,
      startedAt,
      reads: done.reads,
      burnedMicros,
      outputs: renderOutputs(spec, values, problems),
      problems,
      notes: coverageNotes(spec.series, done.reads),
      reusedFrom: null,
    };
    if (run.finish) {
      await this.#deps.store.finishAnalysisRun(run.runId, {
        status: 'done',
        reads: done.reads.length,
        burnedMicros,
        result: storeResult(result),
      });
    }
    return result;
  }

  /** One series: a metered read of its newest observations, counted, and its charge kept for a refund. */
  async #readSeries(
    caller: Caller,
    run: ExecuteOptions,
    plan: SeriesPlan,
    startedAt: number,
    done: { reads: SeriesRead[]; computed: Map<string, Computed>; charged: ChargedRead[] },
  ): Promise<void> {
    const readId = `${run.requestId}.${plan.spec.id}`;
    const metered = await this.#deps.reads.read(caller, readId, plan.entry.key, {
      filters: Object.fromEntries(Object.entries(plan.spec.entity).map(([k, v]) => [k, [v]])),
      from: plan.spec.from,
      to: plan.spec.to,
      fields: plan.fields,
      limit: OBSERVATIONS_PER_SERIES,
      sort: 'desc',
    });
    run.budget.used++;
    if (metered.cost.burnedMicros > 0n) {
      done.charged.push(chargeOf(readId, plan.entry.key, plan.entry.listCost, metered.cost, startedAt));
    }
    const rows = (metered.value.rows ?? []).map((r) => projectRow(r, plan.fields)).reverse();
    done.computed.set(plan.spec.id, toComputed(plan, rows));
    const dates = rows.map((r) => String(r[plan.timeField]));
    done.reads.push({
      series: plan.spec.id,
      dataset: plan.entry.key,
      requestId: readId,
      rows: rows.length,
      truncated: metered.value.nextCursor !== null,
      firstDate: dates[0] ?? null,
      lastDate: dates.at(-1) ?? null,
      costMicros: metered.cost.costMicros,
      burnedMicros: metered.cost.burnedMicros,
    });
  }

  /** A run that failed after some reads: they are refunded, and a composer run is recorded failed. */
  async #failed(
    caller: Caller,
    run: ExecuteOptions,
    done: { reads: SeriesRead[]; charged: ChargedRead[] },
    error: unknown,
  ): Promise<unknown> {
    const refunded = await refundAll(
      this.#deps.meter,
      caller,
      done.charged,
      `analysis run ${run.runId} failed after ${done.reads.length} reads`,
    );
    run.budget.refunded.reads += refunded.reads;
    run.budget.refunded.micros += refunded.micros;
    if (!run.finish) return error;
    const burnedMicros = done.reads.reduce((sum, r) => sum + r.burnedMicros, 0n) - refunded.micros;
    await this.#deps.store.finishAnalysisRun(run.runId, {
      status: 'failed',
      reads: done.reads.length,
      burnedMicros,
      result: null,
    });
    return withRefunds(error, 'run', run.budget.refunded);
  }

  /** The latest result of an analysis as CSV (404 before its first run). */
  async resultCsv(caller: Caller, id: string): Promise<{ name: string; csv: string }> {
    const { accountId } = workbenchEntitlement(this.#deps.config, caller);
    const analysis = await this.#deps.library.own(accountId, id);
    const run =
      (await this.#deps.store.findAnalysisRun(accountId, { analysisId: id })) ??
      (await this.#deps.store.findAnalysisRun(accountId, {
        inputsHash: inputsHash(analysisSpec.parse(JSON.parse(analysis.spec))),
      }));
    if (!run?.result) throw new AppError('not_found', `Analysis ${id} has no result yet: run it first.`);
    return { name: analysis.name, csv: resultCsv(loadResult(run.result).outputs) };
  }
}
