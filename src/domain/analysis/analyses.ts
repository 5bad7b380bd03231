/**
 * The Workbench (docs/analyze.md): saved analyses per account, their estimates and runs, and the
 * assistant. Every series is an ordinary metered read through DataReads (the caller's channel prices
 * it: a Terminal session pays the Terminal surcharge), estimated beforehand with the same estimate() a
 * single read uses. Entitlement, fair use and the reuse of a paid result are decided here.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Catalog } from '../../catalog/catalog.ts';
import { entitySuggestions } from '../../catalog/entity-suggestions.ts';
import type { ServiceFile, Sku } from '../../config.ts';
import { AppError } from '../../errors.ts';
import type { AnalysisRecord, AnalysisRunKind, Ledger } from '../../store/port.ts';
import type { Caller } from '../caller.ts';
import { credentialKinds, kindLabel } from '../credential-kinds.ts';
import { type Estimate, grandfathers } from '../metering.ts';
import { formatMicros, tokensToMicros } from '../money.ts';
import { packageOf } from '../packages.ts';
import { utcMonth } from '../pricing.ts';
import { type DataReads, projectRow } from '../reads.ts';
import { capThatWouldRefuse, spendingCapReached } from '../spending-caps.ts';
import { checkSpec, type SeriesPlan } from './check.ts';
import {
  type Computed,
  computeSteps,
  type RenderedOutput,
  renderOutputs,
  resultCsv,
  type StepProblem,
} from './engine.ts';
import type { Planner, PlannerTools, PlanOutcome, TranscriptEntry } from './planner.ts';
import { type DeclineReason, declineOf } from './scope.ts';
import { type AnalysisSpec, analysisName, analysisSpec, type SeriesSpec } from './spec.ts';
import { cotNet, type Series, type Value } from './transforms.ts';

/** The Workbench's fair use when a package record leaves a value out (docs/analyze.md#fair-use). */
export const FAIR_USE_DEFAULTS = {
  runs_per_day: 100,
  reads_per_run: 20,
  reuse_minutes: 15,
  confirm_above_tokens: 50,
} as const;

export type FairUse = { [K in keyof typeof FAIR_USE_DEFAULTS]: number };

export function fairUseOf(sku: Sku | null): FairUse {
  return { ...FAIR_USE_DEFAULTS, ...(sku?.fair_use ?? {}) };
}

/** Each series is one read of at most this many observations, the newest ones. */
export const OBSERVATIONS_PER_SERIES = 1000;
const DAY_MS = 86_400_000;

export interface Analysis {
  id: string;
  name: string;
  spec: AnalysisSpec;
  planner: string | null;
  transcript: TranscriptEntry[] | null;
  createdAt: number;
  updatedAt: number;
}

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

export interface SeriesRead {
  series: string;
  dataset: string;
  requestId: string;
  rows: number;
  /** More observations matched than one read returns: the oldest were left out. */
  truncated: boolean;
  firstDate: string | null;
  lastDate: string | null;
  costMicros: bigint;
  burnedMicros: bigint;
}

export interface RunResult {
  runId: string;
  analysisId: string | null;
  startedAt: number;
  reads: SeriesRead[];
  /** What this run burned: the sum of its reads' ledger entries. */
  burnedMicros: bigint;
  outputs: RenderedOutput[];
  problems: StepProblem[];
  /**
   * Where the data did not meet the dates asked for, said openly: a series that starts later than its
   * `from` ("the data starts 2025-03-01; showing from then"), one cut to its newest observations, one
   * with nothing in its range.
   */
  notes: string[];
  /** Set when this answer reuses an earlier run's paid result: nothing was read or burned now. */
  reusedFrom: { runId: string; startedAt: number; burnedMicros: bigint } | null;
}

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
  | {
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
  | Extract<AskResult, { kind: 'clarify' }>
  | { kind: 'unavailable'; planner: string; message: string };

export interface AnalysesDeps {
  store: Ledger;
  reads: DataReads;
  catalog: Catalog;
  config: ServiceFile;
  now: () => number;
  builtInPlanner: Planner;
  /** The chat-completions planner, when the operator configured one; else the built-in answers. */
  chatPlanner?: Planner | null;
}

/** A read a run (or a question) was charged for: what a refund gives back if the run fails after it. */
interface ChargedRead {
  requestId: string;
  dataset: string;
  listCostMicros: bigint;
  costMicros: bigint;
  burnedMicros: bigint;
  chargedAt: number;
}

/**
 * One run's or question's reads: how many count against reads_per_run, those charged (refunded if it
 * fails after them), and what was refunded already.
 */
interface RunBudget {
  used: number;
  charged: ChargedRead[];
  refunded: { reads: number; micros: bigint };
}

const newBudget = (): RunBudget => ({ used: 0, charged: [], refunded: { reads: 0, micros: 0n } });

/** The refusal (or failure) of a run, saying which of its reads were refunded. */
function withRefunds(error: unknown, what: 'run' | 'question', refunded: RunBudget['refunded']): unknown {
  if (!(error instanceof AppError) || refunded.reads === 0) return error;
  const n = refunded.reads;
  return new AppError(
    error.code,
    `${error.message} The ${what}'s ${n} read${n === 1 ? '' : 's'} already charged (${formatMicros(refunded.micros)} tokens) ${n === 1 ? 'was' : 'were'} refunded.`,
    { ...error.extras, refunded_tokens: formatMicros(refunded.micros) },
    error.headers,
  );
}

const newId = (prefix: 'ana' | 'run') => `${prefix}_${randomBytes(12).toString('base64url')}`;

const nextUtcDay = (now: number) => Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;

function fairUseRefusal(detail: string, limit: keyof FairUse, value: number, now: number | null): AppError {
  if (now === null) return new AppError('fair_use_limit', detail, { limit, value });
  const retryAfter = Math.max(1, Math.ceil((nextUtcDay(now) - now) / 1000));
  return new AppError(
    'fair_use_limit',
    detail,
    { limit, value, retry_after: retryAfter, reset_at: new Date(nextUtcDay(now)).toISOString() },
    { 'retry-after': String(retryAfter) },
  );
}

/** A result as stored (and reused): token amounts as decimal micro strings. */
function storeResult(result: RunResult): string {
  return JSON.stringify(result, (_key, value) => (typeof value === 'bigint' ? `${value}n` : value));
}

/**
 * A name and spec checked against their schemas, as parsed; or 400 invalid_request listing every problem
 * by path (`spec.series.0.from`). What is stored always parses again when it is read back.
 */
function parseAnalysis(input: { name?: unknown; spec?: unknown }): { name?: string; spec?: AnalysisSpec } {
  const errors: { path: string; message: string }[] = [];
  const out: { name?: string; spec?: AnalysisSpec } = {};
  for (const [field, schema] of [
    ['name', analysisName],
    ['spec', analysisSpec],
  ] as const) {
    if (input[field] === undefined) continue;
    const parsed = schema.safeParse(input[field]);
    if (parsed.success) Object.assign(out, { [field]: parsed.data });
    else
      for (const issue of parsed.error.issues)
        errors.push({ path: [field, ...issue.path].map(String).join('.'), message: issue.message });
  }
  if (errors.length > 0) {
    throw new AppError(
      'invalid_request',
      `The analysis is invalid: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}.`,
      { errors },
    );
  }
  return out;
}

function loadResult(json: string): RunResult {
  const result = JSON.parse(json, (_key, value) =>
    typeof value === 'string' && /^-?\d+n$/.test(value) ? BigInt(value.slice(0, -1)) : value,
  ) as RunResult;
  // Results stored before notes were kept have none.
  return { ...result, notes: result.notes ?? [] };
}

/** A week: a first observation within it of `from` is the calendar (a weekend, a holiday), not the data. */
const NOTE_SLACK_MS = 7 * DAY_MS;

/** Where the reads did not meet the dates the spec asked for (RunResult.notes). */
function coverageNotes(series: readonly SeriesSpec[], reads: readonly SeriesRead[]): string[] {
  const notes: string[] = [];
  for (const s of series) {
    const read = reads.find((r) => r.series === s.id);
    if (!read) continue;
    const label = s.label ?? s.id;
    const range = `${s.from ? ` from ${s.from}` : ''}${s.to ? ` to ${s.to}` : ''}`;
    if (read.rows === 0) {
      notes.push(`There is no data for ${label}${range}: nothing to show for it.`);
    } else if (read.truncated && read.firstDate) {
      notes.push(
        `${label} has more than ${OBSERVATIONS_PER_SERIES} observations${range}: showing the newest ${OBSERVATIONS_PER_SERIES}, from ${read.firstDate}.`,
      );
    } else if (s.from && read.firstDate && Date.parse(read.firstDate) - Date.parse(s.from) > NOTE_SLACK_MS) {
      notes.push(
        `The data for ${label} starts ${read.firstDate.slice(0, 10)}; showing from then (asked from ${s.from}).`,
      );
    }
    if (s.to && read.lastDate && Date.parse(s.to) - Date.parse(read.lastDate) > NOTE_SLACK_MS) {
      notes.push(
        `The data for ${label} ends ${read.lastDate.slice(0, 10)}; showing to then (asked to ${s.to}).`,
      );
    }
  }
  return notes;
}

export class Analyses {
  readonly #deps: AnalysesDeps;

  constructor(deps: AnalysesDeps) {
    this.#deps = deps;
  }

  /** Which planner answers questions: the chat model when configured, else the built-in planner. */
  get plannerName(): string {
    return (this.#deps.chatPlanner ?? this.#deps.builtInPlanner).name;
  }

  /** The packages that bring the Workbench, for the refusal and the page's explanation. */
  entitlingPackages(): { id: string; name: string }[] {
    return this.#deps.config.pricing.commercial_skus
      .filter((s) => s.analysis_assistant)
      .map((s) => ({ id: s.id, name: s.name }));
  }

  /**
   * The caller's account and fair use, or 403 analysis_not_entitled: only an account whose package has
   * analysis_assistant, through a session or a wallet key; sandbox and public-test keys never.
   */
  entitlement(caller: Caller): { accountId: string; fairUse: FairUse } {
    const packages = this.entitlingPackages();
    const names = packages.map((p) => p.name).join(' or ');
    const refuse = (detail: string) =>
      new AppError('analysis_not_entitled', detail, { packages: packages.map((p) => p.id) });
    if (credentialKinds[caller.kind].p0Only || !caller.account) {
      throw refuse(
        `${kindLabel(caller.kind, true)} cannot use the Workbench: the composer and the assistant are for accounts with the ${names} package, through the Terminal or a wallet key.`,
      );
    }
    const sku = packageOf(this.#deps.config, caller.account);
    if (!sku?.analysis_assistant) {
      throw refuse(
        `The Workbench (the analysis composer and assistant) comes with the ${names} package; this account has ${sku ? `the ${sku.name} package` : 'no package'}. An operator can assign it.`,
      );
    }
    return { accountId: caller.account.id, fairUse: fairUseOf(sku) };
  }

  /** A stored analysis; one that no longer parses (saved before a check it fails) is 400 invalid_request. */
  #toAnalysis(r: AnalysisRecord): Analysis {
    let stored: unknown;
    try {
      stored = JSON.parse(r.spec);
    } catch {
      stored = null;
    }
    const parsed = analysisSpec.safeParse(stored);
    if (!parsed.success) {
      throw new AppError(
        'invalid_request',
        `Analysis ${r.id} as stored is not a valid analysis (${parsed.error.issues.map((i) => `${['spec', ...i.path].join('.')}: ${i.message}`).join('; ')}): replace its spec (PATCH) or delete it.`,
        { analysis: r.id },
      );
    }
    return {
      id: r.id,
      name: r.name,
      spec: parsed.data,
      planner: r.planner,
      transcript: r.transcript === null ? null : (JSON.parse(r.transcript) as TranscriptEntry[]),
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
    };
  }

  async #own(accountId: string, id: string): Promise<AnalysisRecord> {
    const found = await this.#deps.store.getAnalysis(accountId, id);
    if (!found) throw new AppError('not_found', `No analysis ${id} in this account.`);
    return found;
  }

  /** The account's analyses; those stored that no longer parse are left out and named in `unreadable`. */
  async list(caller: Caller): Promise<{ analyses: Analysis[]; unreadable: { id: string; name: string }[] }> {
    const { accountId } = this.entitlement(caller);
    const analyses: Analysis[] = [];
    const unreadable: { id: string; name: string }[] = [];
    for (const r of await this.#deps.store.listAnalyses(accountId)) {
      try {
        analyses.push(this.#toAnalysis(r));
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        unreadable.push({ id: r.id, name: r.name });
      }
    }
    return { analyses, unreadable };
  }

  async get(caller: Caller, id: string): Promise<Analysis> {
    const { accountId } = this.entitlement(caller);
    return this.#toAnalysis(await this.#own(accountId, id));
  }

  async create(
    caller: Caller,
    input: {
      name: string;
      spec: AnalysisSpec;
      planner?: string | null;
      transcript?: TranscriptEntry[] | null;
    },
  ): Promise<Analysis> {
    const { accountId } = this.entitlement(caller);
    const { name, spec } = parseAnalysis(input) as { name: string; spec: AnalysisSpec };
    checkSpec(spec, this.#deps.catalog);
    const now = this.#deps.now();
    const record: AnalysisRecord = {
      id: newId('ana'),
      accountId,
      name,
      spec: JSON.stringify(spec),
      transcript: input.transcript ? JSON.stringify(input.transcript) : null,
      planner: input.planner ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await this.#deps.store.createAnalysis(record);
    return this.#toAnalysis(record);
  }

  /** Renames it and/or replaces its steps (the composer edits). */
  async update(caller: Caller, id: string, patch: { name?: string; spec?: AnalysisSpec }): Promise<Analysis> {
    const { accountId } = this.entitlement(caller);
    const parsed = parseAnalysis(patch);
    if (parsed.spec) checkSpec(parsed.spec, this.#deps.catalog);
    const changed = await this.#deps.store.updateAnalysis(accountId, id, {
      ...(parsed.name !== undefined && { name: parsed.name }),
      ...(parsed.spec !== undefined && { spec: JSON.stringify(parsed.spec) }),
      updatedAt: this.#deps.now(),
    });
    if (!changed) throw new AppError('not_found', `No analysis ${id} in this account.`);
    return this.#toAnalysis(await this.#own(accountId, id));
  }

  async duplicate(caller: Caller, id: string, name?: string): Promise<Analysis> {
    const { accountId } = this.entitlement(caller);
    const source = this.#toAnalysis(await this.#own(accountId, id));
    return this.create(caller, {
      name: name ?? `${source.name} (copy)`.slice(0, 120),
      spec: source.spec,
      planner: source.planner,
      transcript: source.transcript,
    });
  }

  async delete(caller: Caller, id: string): Promise<void> {
    const { accountId } = this.entitlement(caller);
    if (!(await this.#deps.store.deleteAnalysis(accountId, id))) {
      throw new AppError('not_found', `No analysis ${id} in this account.`);
    }
  }

  /** Over the spec as the schema orders it, so the same analysis hashes the same however it was written. */
  #inputsHash(spec: AnalysisSpec): string {
    return createHash('sha256')
      .update(JSON.stringify(analysisSpec.parse(spec)))
      .digest('base64url');
  }

  async #runsToday(accountId: string): Promise<number> {
    return this.#deps.store.countAnalysisRuns(accountId, nextUtcDay(this.#deps.now()) - DAY_MS);
  }

  async #reusable(accountId: string, spec: AnalysisSpec, fairUse: FairUse) {
    if (fairUse.reuse_minutes <= 0) return null;
    return this.#deps.store.findAnalysisRun(accountId, {
      inputsHash: this.#inputsHash(spec),
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
    const { accountId, fairUse } = this.entitlement(caller);
    const spec =
      'spec' in target ? target.spec : this.#toAnalysis(await this.#own(accountId, target.id)).spec;
    const plans = checkSpec(spec, this.#deps.catalog);
    const reads: ReadCost[] = [];
    let refusal: AppError | null = null;
    let balanceMicros = caller.wallet.balanceMicros;
    // An early_bird session is never refused for its balance: as meter() does, each read the wallet
    // left by the reads before it cannot cover is served at zero burn.
    const grandfathered = grandfathers(caller, {});
    let coverMicros: bigint | null = null;
    for (const plan of plans) {
      const one: Estimate = await this.#deps.reads.estimate(caller, plan.entry.key);
      balanceMicros = one.balanceMicros;
      coverMicros ??= one.balanceMicros;
      if (one.refusal && one.refusal.code !== 'insufficient_tokens') refusal ??= one.refusal;
      let burnMicros = one.burnMicros;
      if (grandfathered) {
        if (burnMicros > coverMicros) burnMicros = 0n;
        coverMicros -= burnMicros;
      }
      reads.push({
        series: plan.spec.id,
        dataset: plan.entry.key,
        entity: plan.spec.entity,
        field: plan.spec.field,
        costMicros: one.costMicros,
        burnMicros,
      });
    }
    const costMicros = reads.reduce((sum, r) => sum + r.costMicros, 0n);
    const burnMicros = reads.reduce((sum, r) => sum + r.burnMicros, 0n);
    const now = this.#deps.now();
    const runsToday = await this.#runsToday(accountId);
    const reuse = options.reading ? null : await this.#reusable(accountId, spec, fairUse);
    if (reads.length > fairUse.reads_per_run) {
      refusal = fairUseRefusal(
        `This analysis makes ${reads.length} reads; one run may make ${fairUse.reads_per_run}.`,
        'reads_per_run',
        fairUse.reads_per_run,
        null,
      );
    } else if (!reuse && runsToday >= fairUse.runs_per_day) {
      refusal = fairUseRefusal(
        `This account has started its ${fairUse.runs_per_day} analysis runs for today (UTC).`,
        'runs_per_day',
        fairUse.runs_per_day,
        now,
      );
    } else if (!reuse && refusal === null && !grandfathered && burnMicros > balanceMicros) {
      refusal = new AppError(
        'insufficient_tokens',
        `This run costs ${formatMicros(burnMicros)} tokens and the wallet holds ${formatMicros(balanceMicros)}.`,
        { required_tokens: formatMicros(burnMicros), balance: formatMicros(balanceMicros) },
      );
    }
    if (!reuse && refusal === null) {
      // Each read's own estimate checks the key's caps for that read alone; the run burns them all.
      const cap = await capThatWouldRefuse(this.#deps.store, caller.key, burnMicros, now);
      if (cap) refusal = spendingCapReached(cap, burnMicros, now);
    }
    return {
      reads,
      costMicros,
      burnMicros,
      balanceMicros,
      balanceAfterMicros: refusal === null && !reuse ? balanceMicros - burnMicros : balanceMicros,
      confirmRequired: burnMicros > BigInt(fairUse.confirm_above_tokens) * 1_000_000n,
      refusal,
      fairUse: { ...fairUse, runs_today: runsToday },
      reuse: reuse ? { runId: reuse.id, startedAt: reuse.startedAt } : null,
    };
  }

  /** Runs a saved analysis: reuses a paid result of the same inputs within reuse_minutes unless `fresh`. */
  async run(
    caller: Caller,
    requestId: string,
    id: string,
    options: { fresh?: boolean } = {},
  ): Promise<RunResult> {
    const { accountId, fairUse } = this.entitlement(caller);
    const analysis = this.#toAnalysis(await this.#own(accountId, id));
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
    const runId = await this.#begin(caller, accountId, fairUse, analysis.id, 'run', analysis.spec);
    return this.#execute(caller, requestId, runId, analysis.id, analysis.spec, fairUse, newBudget());
  }

  /** Starts a run (or a question) against the day's cap; refuses before anything is read. */
  async #begin(
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
        inputsHash: spec ? this.#inputsHash(spec) : null,
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
   * served nothing. `finish`: a composer run, checked by #begin and recorded here; else a question's.
   */
  async #execute(
    caller: Caller,
    requestId: string,
    runId: string,
    analysisId: string | null,
    spec: AnalysisSpec,
    fairUse: FairUse,
    budget: RunBudget,
    finish = true,
  ): Promise<RunResult> {
    const plans = checkSpec(spec, this.#deps.catalog);
    if (budget.used + plans.length > fairUse.reads_per_run) {
      throw fairUseRefusal(
        `This would make ${budget.used + plans.length} reads in one run; one run may make ${fairUse.reads_per_run}.`,
        'reads_per_run',
        fairUse.reads_per_run,
        null,
      );
    }
    if (!finish) {
      // A question's analysis: the whole of it against the balance and the key's caps before a read.
      const estimate = await this.estimate(caller, { spec }, { reading: true });
      if (estimate.refusal && estimate.refusal.code !== 'fair_use_limit') throw estimate.refusal;
    }
    const startedAt = this.#deps.now();
    const reads: SeriesRead[] = [];
    const read = new Map<string, Computed>();
    const charged: ChargedRead[] = [];
    let burnedMicros = 0n;
    try {
      for (const plan of plans) {
        const readId = `${requestId}.${plan.spec.id}`;
        const metered = await this.#deps.reads.read(caller, readId, plan.entry.key, {
          filters: Object.fromEntries(Object.entries(plan.spec.entity).map(([k, v]) => [k, [v]])),
          from: plan.spec.from,
          to: plan.spec.to,
          fields: plan.fields,
          limit: OBSERVATIONS_PER_SERIES,
          sort: 'desc',
        });
        budget.used++;
        burnedMicros += metered.cost.burnedMicros;
        if (metered.cost.burnedMicros > 0n) {
          charged.push({
            requestId: readId,
            dataset: plan.entry.key,
            listCostMicros: tokensToMicros(plan.entry.listCost),
            costMicros: metered.cost.costMicros,
            burnedMicros: metered.cost.burnedMicros,
            chargedAt: startedAt,
          });
        }
        const rows = (metered.value.rows ?? []).map((r) => projectRow(r, plan.fields)).reverse();
        const computed = toComputed(plan, rows);
        read.set(plan.spec.id, computed);
        const dates = rows.map((r) => String(r[plan.timeField]));
        reads.push({
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
    } catch (error) {
      const refunded = await this.#refund(
        caller,
        charged,
        `analysis run ${runId} failed after ${reads.length} reads`,
      );
      budget.refunded.reads += refunded.reads;
      budget.refunded.micros += refunded.micros;
      burnedMicros -= refunded.micros;
      if (finish) {
        await this.#deps.store.finishAnalysisRun(runId, {
          status: 'failed',
          reads: reads.length,
          burnedMicros,
          result: null,
        });
        throw withRefunds(error, 'run', budget.refunded);
      }
      throw error;
    }
    budget.charged.push(...charged);
    const { values, problems } = computeSteps(spec, read);
    const outputs = renderOutputs(spec, values, problems);
    const result: RunResult = {
      runId,
      analysisId,
      startedAt,
      reads,
      burnedMicros,
      outputs,
      problems,
      notes: coverageNotes(spec.series, reads),
      reusedFrom: null,
    };
    if (finish) {
      await this.#deps.store.finishAnalysisRun(runId, {
        status: 'done',
        reads: reads.length,
        burnedMicros,
        result: storeResult(result),
      });
    }
    return result;
  }

  /** The latest result of an analysis as CSV (404 before its first run). */
  async resultCsv(caller: Caller, id: string): Promise<{ name: string; csv: string }> {
    const { accountId } = this.entitlement(caller);
    const analysis = await this.#own(accountId, id);
    const run =
      (await this.#deps.store.findAnalysisRun(accountId, { analysisId: id })) ??
      (await this.#deps.store.findAnalysisRun(accountId, {
        inputsHash: this.#inputsHash(analysisSpec.parse(JSON.parse(analysis.spec))),
      }));
    if (!run?.result) throw new AppError('not_found', `Analysis ${id} has no result yet: run it first.`);
    return { name: analysis.name, csv: resultCsv(loadResult(run.result).outputs) };
  }

  /**
   * A question to the assistant: the planner answers with an analysis (run and explained; saved only
   * with `save`) or asks back with candidates. A forecast or a ranking is declined before any planner
   * sees it. An answered question counts as one run of the day; every read it makes, the planner's own
   * and the analysis's, counts against reads_per_run and is metered like any other. A question not
   * answered (asked back or declined) charges nothing and does not count: its reads, if the planner made
   * any, are refunded and its run released.
   */
  async ask(
    caller: Caller,
    requestId: string,
    question: string,
    options: { save?: boolean } = {},
  ): Promise<AskResult> {
    const { accountId, fairUse } = this.entitlement(caller);
    const planner = this.#deps.chatPlanner ?? this.#deps.builtInPlanner;
    const declined = declineOf(question);
    if (declined) {
      return {
        kind: 'clarify',
        planner: planner.name,
        candidates: [],
        burnedMicros: 0n,
        reads: 0,
        ...declined,
      };
    }
    const runId = await this.#begin(caller, accountId, fairUse, null, 'ask', null);
    const budget = newBudget();
    let burnedMicros = 0n;
    let ran: { spec: AnalysisSpec; result: RunResult } | null = null;
    const tools = this.#tools(caller, requestId, runId, fairUse, budget, {
      onRead: (micros) => {
        burnedMicros += micros;
      },
      onRun: (spec, result) => {
        ran = { spec, result };
      },
    });
    const today = new Date(this.#deps.now()).toISOString().slice(0, 10);
    const finishAsk = async (status: 'done' | 'failed', result: string | null) =>
      this.#deps.store.finishAnalysisRun(runId, { status, reads: budget.used, burnedMicros, result });
    try {
      const planned = await planner.plan(question, tools, today);
      // A planner's analysis is checked like one sent to POST /analyses before anything reads it: one
      // that cannot run is a question back, never an error (a planner is not the caller's input).
      const outcome = planned.kind === 'clarify' ? planned : this.#checkPlanned(planned);
      if (outcome.kind === 'clarify') {
        // Not answered: nothing charged, and not a run of the day.
        const refunded = await this.#refund(caller, budget.charged, `question ${runId} was asked back`);
        await this.#deps.store.releaseAnalysisRun(accountId, runId);
        const n = refunded.reads;
        return {
          kind: 'clarify',
          planner: planner.name,
          reason: 'unsupported' in outcome && outcome.unsupported ? 'unsupported' : 'ask_back',
          message:
            n === 0
              ? outcome.message
              : `${outcome.message} (The ${n} read${n === 1 ? '' : 's'} made while planning ${n === 1 ? 'was' : 'were'} refunded.)`,
          candidates: outcome.candidates,
          burnedMicros: burnedMicros - refunded.micros,
          reads: budget.used,
        };
      }
      const earlier = ran as { spec: AnalysisSpec; result: RunResult } | null;
      const result =
        earlier && JSON.stringify(earlier.spec) === JSON.stringify(outcome.spec)
          ? earlier.result
          : await this.#execute(caller, `${requestId}.a`, runId, null, outcome.spec, fairUse, budget, false);
      if (result !== earlier?.result) burnedMicros += result.burnedMicros;
      const analysis = options.save
        ? await this.create(caller, {
            name: outcome.name,
            spec: outcome.spec,
            planner: planner.name,
            transcript: outcome.transcript,
          })
        : null;
      const answered: RunResult = { ...result, analysisId: analysis?.id ?? null };
      // Recorded with its inputs (and its analysis, when saved): a rerun of the same analysis, saved now
      // or later, reuses it, and its CSV exports.
      await this.#deps.store.finishAnalysisRun(runId, {
        status: 'done',
        reads: budget.used,
        burnedMicros,
        result: storeResult(answered),
        ...(analysis && { analysisId: analysis.id }),
        inputsHash: this.#inputsHash(outcome.spec),
      });
      const explanation = [
        outcome.explanation,
        ...answered.notes,
        describeCost(answered, burnedMicros, budget.used),
      ].join(' ');
      return {
        kind: 'analysis',
        planner: planner.name,
        name: outcome.name,
        spec: outcome.spec,
        analysis,
        result: answered,
        explanation,
        burnedMicros,
        reads: budget.used,
      };
    } catch (error) {
      // Nothing was answered: every read the question was charged for is given back.
      const refunded = await this.#refund(caller, budget.charged, `question ${runId} failed`);
      budget.refunded.reads += refunded.reads;
      budget.refunded.micros += refunded.micros;
      burnedMicros -= refunded.micros;
      await finishAsk('failed', null);
      throw withRefunds(error, 'question', budget.refunded);
    }
  }

  /**
   * What a question would read and cost if asked now, at the caller's price, and what would refuse it:
   * planned by the built-in planner without reading, charging or counting anything. A chat model plans
   * as it reads, so with one configured the cost is known only once it answers.
   */
  async estimateQuestion(caller: Caller, question: string): Promise<QuestionEstimate> {
    this.entitlement(caller);
    const planner = this.#deps.chatPlanner ?? this.#deps.builtInPlanner;
    const declined = declineOf(question);
    if (declined) {
      return {
        kind: 'clarify',
        planner: planner.name,
        candidates: [],
        burnedMicros: 0n,
        reads: 0,
        ...declined,
      };
    }
    if (this.#deps.chatPlanner) {
      return {
        kind: 'unavailable',
        planner: planner.name,
        message:
          'The chat model plans as it reads, so what a question costs is known only once it answers: each read at your price, within reads_per_run.',
      };
    }
    const today = new Date(this.#deps.now()).toISOString().slice(0, 10);
    const planned = await planner.plan(question, this.#estimateTools(), today);
    const outcome = planned.kind === 'clarify' ? planned : this.#checkPlanned(planned);
    if (outcome.kind === 'clarify') {
      return {
        kind: 'clarify',
        planner: planner.name,
        reason: 'unsupported' in outcome && outcome.unsupported ? 'unsupported' : 'ask_back',
        message: outcome.message,
        candidates: outcome.candidates,
        burnedMicros: 0n,
        reads: 0,
      };
    }
    // A question always reads afresh (it never reuses a paid result), so it is estimated as a fresh run.
    const estimate = await this.estimate(caller, { spec: outcome.spec }, { reading: true });
    return {
      kind: 'estimate',
      planner: planner.name,
      name: outcome.name,
      spec: outcome.spec,
      explanation: outcome.explanation,
      estimate,
    };
  }

  /** Tools for planning an estimate: the built-in planner uses none; a metered one is refused. */
  #estimateTools(): PlannerTools {
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

  /**
   * Gives back the charges of reads a failed run or question made (as a failed export is refunded): a
   * refund entry per read, referencing its request id, and the reversal of its usage event dated with the
   * charge, so the key's caps and the month's burn no longer count it. The ledger stays append-only.
   */
  async #refund(
    caller: Caller,
    charged: readonly ChargedRead[],
    detail: string,
  ): Promise<{ reads: number; micros: bigint }> {
    let micros = 0n;
    for (const read of charged) {
      await this.#deps.store.credit({
        walletId: caller.wallet.id,
        kind: 'refund',
        amountMicros: read.burnedMicros,
        at: this.#deps.now(),
        requestId: read.requestId,
        memo: `refund: ${detail}`,
        reverses: {
          month: utcMonth(read.chargedAt),
          usage: {
            requestId: read.requestId,
            keyId: caller.key?.id ?? null,
            accountId: caller.account?.id ?? null,
            walletId: caller.wallet.id,
            dataset: read.dataset,
            channel: caller.channel,
            listCostMicros: -read.listCostMicros,
            costMicros: -read.costMicros,
            burnedMicros: -read.burnedMicros,
            outcome: 'refunded',
            rows: 0,
            at: read.chargedAt,
          },
        },
      });
      micros += read.burnedMicros;
    }
    return { reads: charged.length, micros };
  }

  /** A planned analysis with its name and spec as parsed, or the question back saying why it cannot run. */
  #checkPlanned(
    planned: Extract<PlanOutcome, { kind: 'analysis' }>,
  ): Extract<PlanOutcome, { kind: 'analysis' }> | { kind: 'clarify'; message: string; candidates: [] } {
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
  #tools(
    caller: Caller,
    requestId: string,
    runId: string,
    fairUse: FairUse,
    budget: RunBudget,
    on: { onRead: (micros: bigint) => void; onRun: (spec: AnalysisSpec, result: RunResult) => void },
  ): PlannerTools {
    const { catalog, reads } = this.#deps;
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
          throw fairUseRefusal(
            `One question may make ${fairUse.reads_per_run} reads.`,
            'reads_per_run',
            fairUse.reads_per_run,
            null,
          );
        }
        const readId = `${requestId}.t${++n}`;
        const metered = await reads.read(caller, readId, dataset, {
          filters: Object.fromEntries(Object.entries(params.filters ?? {}).map(([k, v]) => [k, [v]])),
          from: params.from,
          to: params.to,
          limit: Math.min(params.limit ?? 20, 50),
          sort: 'desc',
        });
        // A read counts once served: a refused one (not found, not affordable) read nothing.
        budget.used++;
        on.onRead(metered.cost.burnedMicros);
        if (metered.cost.burnedMicros > 0n) {
          budget.charged.push({
            requestId: readId,
            dataset: metered.value.entry.key,
            listCostMicros: tokensToMicros(metered.value.entry.listCost),
            costMicros: metered.cost.costMicros,
            burnedMicros: metered.cost.burnedMicros,
            chargedAt: this.#deps.now(),
          });
        }
        return {
          rows: (metered.value.rows ?? []).map((r) => projectRow(r, metered.value.fields)),
          nextCursor: metered.value.nextCursor,
          tokenCost: formatMicros(metered.cost.costMicros),
          tokensBurned: formatMicros(metered.cost.burnedMicros),
        };
      },
      runAnalysis: async (spec) => {
        const result = await this.#execute(
          caller,
          `${requestId}.r${++n}`,
          runId,
          null,
          spec,
          fairUse,
          budget,
          false,
        );
        on.onRead(result.burnedMicros);
        on.onRun(spec, result);
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

/** A series' rows as values: a numeric field, a COT net position, or every entity of a curve. */
function toComputed(plan: SeriesPlan, rows: Record<string, unknown>[]): Computed {
  const label = plan.spec.label ?? plan.spec.id;
  const t = plan.timeField;
  if (plan.shape.kind === 'panel') {
    const { labelField, maturityField, field } = plan.shape;
    return {
      kind: 'panel',
      label,
      panel: {
        rows: rows.map((r) => ({
          date: String(r[t]),
          label: String(r[labelField]),
          maturityMonths: Number(r[maturityField]),
          value: typeof r[field] === 'number' ? (r[field] as number) : null,
        })),
      },
    };
  }
  const series: Series =
    plan.shape.kind === 'net'
      ? cotNet(rows, t, plan.shape.traderClass)
      : {
          dates: rows.map((r) => String(r[t])),
          values: rows.map((r) => {
            const v = r[(plan.shape as { field: string }).field];
            return typeof v === 'number' ? v : null;
          }),
        };
  return { kind: 'series', label, series: dedupeDates(series) };
}

/** A filter that matched two rows on one date (two listings of a symbol): the first one counts. */
function dedupeDates(s: Series): Series {
  const dates: string[] = [];
  const values: Value[] = [];
  s.dates.forEach((d, i) => {
    if (dates.at(-1) === d) return;
    dates.push(d);
    values.push(s.values[i] ?? null);
  });
  return { dates, values };
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
