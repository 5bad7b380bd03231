/**
 * The Workbench's library: an account's saved analyses (a name, a spec and, for one the assistant
 * planned, its planner and transcript), checked against their schemas and the catalog when written.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Catalog } from '../../catalog/catalog.ts';
import type { ServiceFile } from '../../config.ts';
import { AppError } from '../../errors.ts';
import type { AnalysisRecord, Ledger } from '../../store/port.ts';
import type { Caller } from '../caller.ts';
import { checkSpec } from './check.ts';
import { workbenchEntitlement } from './fair-use.ts';
import type { TranscriptEntry } from './planner.ts';
import { type AnalysisSpec, analysisName, analysisSpec } from './spec.ts';

export interface Analysis {
  id: string;
  name: string;
  spec: AnalysisSpec;
  planner: string | null;
  transcript: TranscriptEntry[] | null;
  createdAt: number;
  updatedAt: number;
}

export interface LibraryDeps {
  store: Ledger;
  catalog: Catalog;
  config: ServiceFile;
  now: () => number;
}

export const newId = (prefix: 'ana' | 'run') => `${prefix}_${randomBytes(12).toString('base64url')}`;

/** Over the spec as the schema orders it, so the same analysis hashes the same however it was written. */
export function inputsHash(spec: AnalysisSpec): string {
  return createHash('sha256')
    .update(JSON.stringify(analysisSpec.parse(spec)))
    .digest('base64url');
}

/**
 * A name and spec checked against their schemas, as parsed; or 400 invalid_request listing every problem
 * by path (`spec.series.0.from`). What is stored always parses again when it is read back.
 */
export function parseAnalysis(input: { name?: unknown; spec?: unknown }): {
  name?: string;
  spec?: AnalysisSpec;
} {
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

/** A stored analysis; one that no longer parses (saved before a check it fails) is 400 invalid_request. */
export function toAnalysis(r: AnalysisRecord): Analysis {
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

export class AnalysisLibrary {
  readonly #deps: LibraryDeps;

  constructor(deps: LibraryDeps) {
    this.#deps = deps;
  }

  /** The account's stored record of an analysis, or 404. */
  async own(accountId: string, id: string): Promise<AnalysisRecord> {
    const found = await this.#deps.store.getAnalysis(accountId, id);
    if (!found) throw new AppError('not_found', `No analysis ${id} in this account.`);
    return found;
  }

  /** The account's analyses; those stored that no longer parse are left out and named in `unreadable`. */
  async list(caller: Caller): Promise<{ analyses: Analysis[]; unreadable: { id: string; name: string }[] }> {
    const { accountId } = workbenchEntitlement(this.#deps.config, caller);
    const analyses: Analysis[] = [];
    const unreadable: { id: string; name: string }[] = [];
    for (const r of await this.#deps.store.listAnalyses(accountId)) {
      try {
        analyses.push(toAnalysis(r));
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        unreadable.push({ id: r.id, name: r.name });
      }
    }
    return { analyses, unreadable };
  }

  async get(caller: Caller, id: string): Promise<Analysis> {
    const { accountId } = workbenchEntitlement(this.#deps.config, caller);
    return toAnalysis(await this.own(accountId, id));
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
    const { accountId } = workbenchEntitlement(this.#deps.config, caller);
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
    return toAnalysis(record);
  }

  /** Renames it and/or replaces its steps (the composer edits). */
  async update(caller: Caller, id: string, patch: { name?: string; spec?: AnalysisSpec }): Promise<Analysis> {
    const { accountId } = workbenchEntitlement(this.#deps.config, caller);
    const parsed = parseAnalysis(patch);
    if (parsed.spec) checkSpec(parsed.spec, this.#deps.catalog);
    const changed = await this.#deps.store.updateAnalysis(accountId, id, {
      ...(parsed.name !== undefined && { name: parsed.name }),
      ...(parsed.spec !== undefined && { spec: JSON.stringify(parsed.spec) }),
      updatedAt: this.#deps.now(),
    });
    if (!changed) throw new AppError('not_found', `No analysis ${id} in this account.`);
    return toAnalysis(await this.own(accountId, id));
  }

  async duplicate(caller: Caller, id: string, name?: string): Promise<Analysis> {
    const { accountId } = workbenchEntitlement(this.#deps.config, caller);
    const source = toAnalysis(await this.own(accountId, id));
    return this.create(caller, {
      name: name ?? `${source.name} (copy)`.slice(0, 120),
      spec: source.spec,
      planner: source.planner,
      transcript: source.transcript,
    });
  }

  async delete(caller: Caller, id: string): Promise<void> {
    const { accountId } = workbenchEntitlement(this.#deps.config, caller);
    if (!(await this.#deps.store.deleteAnalysis(accountId, id))) {
      throw new AppError('not_found', `No analysis ${id} in this account.`);
    }
  }
}
