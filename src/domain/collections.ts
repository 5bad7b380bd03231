/**
 * Collectors (docs/collectors.md): each run of a source is an import that fetched its own answers.
 * A run reads the source's cursor, asks for what is new after it, checks each chunk's records against
 * the dataset's fields as an import does, upserts them by natural key (beside the live rows when many:
 * reads never wait), then stores the chunk's cursor, so a run killed at any point resumes from its last
 * stored chunk. Every run is recorded (rows new and changed, requests, bytes, outcome, error); a
 * source that fails PAUSE_AFTER times in a row is paused for PAUSE_MS.
 */
import { Cron } from 'croner';
import type { Catalog } from '../catalog/catalog.ts';
import { convertRecords } from '../catalog/importers/importer.ts';
import { sourceById, sources } from '../catalog/sources/registry.ts';
import type { Chunk, Cursor, Source, SourceHttp } from '../catalog/sources/source.ts';
import type { ServiceFile } from '../config.ts';
import { AppError } from '../errors.ts';
import type { CollectionRun, CollectorState, Datasets, KeyedRow } from '../store/port.ts';

export const PAUSE_AFTER = 5;
export const PAUSE_MS = 3_600_000;

/** The polite client of one run, with what it counted. */
export interface CollectorHttp extends SourceHttp {
  readonly requests: number;
  readonly bytes: number;
  readonly notModified: number;
}

export type HttpFactory = (options: { userAgent: string; perSecond: number }) => CollectorHttp;

export interface CollectorStatus {
  source: string;
  title: string;
  datasets: readonly string[];
  enabled: boolean;
  schedule: string;
  /** The next scheduled run (ms), null when the source is not enabled. */
  nextRunAt: number | null;
  state: CollectorState | null;
  lastRun: CollectionRun | null;
}

/** What one run stored, counted as its chunks come in. */
interface RunTally {
  touched: Set<string>;
  rowsNew: number;
  rowsChanged: number;
  rowsRejected: number;
  /** The first three rejections, for the run's error. */
  rejections: string[];
}

interface CollectionsDeps {
  datasets: Datasets;
  catalog: Catalog;
  config: ServiceFile['collectors'];
  http: HttpFactory;
  credentials: Readonly<Record<string, string | undefined>>;
  now: () => number;
  /** Told each finished run (metrics). */
  onRun?: (run: CollectionRun) => void;
}

export class Collections {
  readonly #deps: CollectionsDeps;

  constructor(deps: CollectionsDeps) {
    this.#deps = deps;
  }

  /** The sources the configuration enables, with their schedules (UTC cron). */
  scheduled(): { source: string; schedule: string }[] {
    return sources
      .filter((s) => this.#settings(s).enabled)
      .map((s) => ({ source: s.id, schedule: this.#settings(s).schedule ?? s.schedule }));
  }

  #settings(source: Source) {
    return this.#deps.config.sources[source.id] ?? { enabled: false, options: {} };
  }

  #source(id: string): Source {
    const source = sourceById(id);
    if (!source)
      throw new AppError('not_found', `No source "${id}". Sources: ${sources.map((s) => s.id).join(', ')}.`);
    return source;
  }

  async status(): Promise<CollectorStatus[]> {
    const states = new Map((await this.#deps.datasets.listCollectorStates()).map((s) => [s.source, s]));
    const runs = await this.#deps.datasets.listCollectionRuns(500);
    return sources.map((source) => {
      const { enabled } = this.#settings(source);
      const schedule = this.#settings(source).schedule ?? source.schedule;
      const next = enabled
        ? new Cron(schedule, { timezone: 'UTC', paused: true }).nextRun(new Date(this.#deps.now()))
        : null;
      return {
        source: source.id,
        title: source.title,
        datasets: source.datasets,
        enabled,
        schedule,
        nextRunAt: next ? next.getTime() : null,
        state: states.get(source.id) ?? null,
        lastRun: runs.find((r) => r.source === source.id) ?? null,
      };
    });
  }

  /**
   * A scheduled run: once per slot across every node (the first to claim it), skipped while the source
   * is paused. Null when another node has it or the source is paused.
   */
  async runScheduled(id: string, slot: number): Promise<CollectionRun | null> {
    const state = await this.#deps.datasets.collectorState(id);
    if (state?.pausedUntil != null && state.pausedUntil > this.#deps.now()) return null;
    if (!(await this.#deps.datasets.claimCollectorSlot(id, slot))) return null;
    return this.run(id);
  }

  /** One run now (`tmd collect`): a paused source runs too, and a success unpauses it. */
  async run(id: string, options: { since?: string; backfill?: boolean } = {}): Promise<CollectionRun> {
    const { datasets, now } = this.#deps;
    const source = this.#source(id);
    const settings = this.#settings(source);
    const startedAt = now();
    const state: CollectorState = (await datasets.collectorState(id)) ?? {
      source: id,
      cursor: '{}',
      lastRunAt: null,
      lastSuccessAt: null,
      lastError: null,
      failures: 0,
      pausedUntil: null,
      claimedSlot: null,
    };
    const userAgent = this.#deps.config.user_agent;
    const http = this.#deps.http({
      userAgent: userAgent ?? 'token-metered-data collector',
      perSecond: settings.per_second ?? source.perSecond,
    });
    const tally: RunTally = {
      touched: new Set(),
      rowsNew: 0,
      rowsChanged: 0,
      rowsRejected: 0,
      rejections: [],
    };
    let error: string | null = null;
    try {
      this.#assertRunnable(source, userAgent);
      const chunks = source.run({
        http,
        baseUrl: (settings.base_url ?? source.baseUrl).replace(/\/$/, ''),
        cursor: JSON.parse(state.cursor) as Cursor,
        now: startedAt,
        today: new Date(startedAt).toISOString().slice(0, 10),
        since: options.since ?? null,
        backfill: options.backfill ?? false,
        credentials: this.#deps.credentials,
        options: settings.options,
      });
      for await (const chunk of chunks) {
        await this.#store(source, chunk, tally);
        // The chunk is stored: a run killed from here on resumes after it.
        state.cursor = JSON.stringify(chunk.cursor);
        await datasets.saveCollectorState({ ...state, lastRunAt: startedAt });
      }
    } catch (caught) {
      error = (caught as Error).message;
    }
    return this.#record(source, state, startedAt, http, tally, error);
  }

  /** A source that cannot run as configured: SEC EDGAR without a user agent, a credential missing. */
  #assertRunnable(source: Source, userAgent: string | null | undefined): void {
    if (source.id.startsWith('sec-') && !userAgent)
      throw new AppError(
        'invalid_request',
        'SEC EDGAR asks every client to name itself: set collectors.user_agent in the configuration ("Company Name admin@example.com").',
      );
    if (source.credential && !this.#deps.credentials[source.credential])
      throw new AppError('invalid_request', `${source.id} needs ${source.credential} in the environment.`);
  }

  /** One chunk's records checked against the dataset's fields and upserted by natural key. */
  async #store(source: Source, chunk: Chunk, tally: RunTally): Promise<void> {
    const { datasets, catalog, now } = this.#deps;
    const entry = catalog.resolve(chunk.dataset);
    if (!entry) throw new Error(`${source.id}: ${chunk.dataset} is not a dataset of the catalog`);
    const { dataset } = entry;
    const converted = convertRecords(
      chunk.records,
      { dataset: dataset.key, naturalKey: chunk.naturalKey },
      { dataset, fileName: chunk.url, sha256: '', set: {}, now: now() },
    );
    tally.rowsRejected += converted.rejected.length;
    for (const r of converted.rejected.slice(0, 3 - tally.rejections.length))
      tally.rejections.push(`${r.where}: ${r.reason}`);
    if (converted.rows.length === 0) return;
    // A feed may list one record twice (an entry under its filer and its issuer): the last stands.
    const rows: readonly KeyedRow[] = [...new Map(converted.rows.map((r) => [r.key, r])).values()];
    async function* one(): AsyncGenerator<readonly KeyedRow[]> {
      yield rows;
    }
    const run = await datasets.upsertRowsStream(
      dataset.key,
      dataset.time_field,
      one(),
      {
        importer: `collector:${source.id}`,
        sourceName: source.publisher,
        fileName: chunk.url,
        sha256: '',
        licence: source.licence,
        attribution: null,
        importedAt: now(),
        rowsRead: converted.read,
        rowsRejected: converted.rejected.length,
      },
      entry.columns,
    );
    tally.rowsNew += run.rowsInserted;
    tally.rowsChanged += run.rowsReplaced;
    tally.touched.add(dataset.key);
  }

  /** The run's outcome: the source's state (paused after PAUSE_AFTER failures in a row) and its record. */
  async #record(
    source: Source,
    state: CollectorState,
    startedAt: number,
    http: CollectorHttp,
    tally: RunTally,
    error: string | null,
  ): Promise<CollectionRun> {
    const { datasets, now } = this.#deps;
    const finishedAt = now();
    const failed = error !== null;
    const failures = failed ? state.failures + 1 : 0;
    await datasets.saveCollectorState({
      ...state,
      lastRunAt: startedAt,
      lastSuccessAt: failed ? state.lastSuccessAt : finishedAt,
      lastError: error,
      failures,
      pausedUntil: failures >= PAUSE_AFTER ? finishedAt + PAUSE_MS : null,
    });
    const { rejections } = tally;
    const run = await datasets.recordCollectionRun({
      source: source.id,
      startedAt,
      finishedAt,
      outcome: failed ? 'failed' : tally.rowsRejected > 0 ? 'partial' : 'ok',
      datasets: [...tally.touched],
      rowsNew: tally.rowsNew,
      rowsChanged: tally.rowsChanged,
      rowsRejected: tally.rowsRejected,
      requests: http.requests,
      bytes: http.bytes,
      notModified: http.notModified,
      error: error ?? (rejections.length > 0 ? `rejected: ${rejections.join('; ')}` : null),
    });
    this.#deps.onRun?.(run);
    return run;
  }
}
