/**
 * A public source a collector keeps datasets current from: what to ask for after a cursor, and how its
 * answers become catalog rows. Sources are pure over the SourceHttp they are handed (the polite client
 * of src/collectors/http.ts, or a test's), so each is tested against recorded answers.
 */
import type { SourceRecord } from '../importers/importer.ts';

export interface SourceResponse {
  status: number;
  url: string;
  etag: string | null;
  lastModified: string | null;
  body: string;
}

/** GET with the source's politeness (rate, User-Agent, retries with backoff) applied by the caller. */
export interface SourceHttp {
  get(url: string, options?: GetOptions): Promise<SourceResponse>;
  /** A POST of a JSON body (an API that takes its query that way, as BLS does). */
  postJson(url: string, body: unknown): Promise<SourceResponse>;
}

export interface GetOptions {
  /** Validators of the copy stored: the answer may be 304 Not Modified. */
  etag?: string | null;
  lastModified?: string | null;
  /** Statuses the source reads itself (not retried, not an error), e.g. a 503 that ends paging. */
  accept?: readonly number[];
}

/** A source's own record of how far it got: dates, accession numbers, validators. JSON-safe. */
export type Cursor = Record<string, string | number | null>;

/**
 * One committed step of a run: records for one dataset (checked against its fields as an import's
 * are, then upserted by natural key) and the cursor that holds once they are stored. A run killed
 * after a chunk resumes from that chunk's cursor.
 */
export interface Chunk {
  dataset: string;
  naturalKey: readonly string[];
  records: SourceRecord[];
  cursor: Cursor;
  /** Where the rows came from, for their provenance. */
  url: string;
}

export interface RunContext {
  http: SourceHttp;
  baseUrl: string;
  cursor: Cursor;
  /** When the run started (ms), and that day (UTC, YYYY-MM-DD). */
  now: number;
  today: string;
  /** Start of a backfill (`--since`), else the source's own earliest date. */
  since: string | null;
  backfill: boolean;
  /** Credentials from the environment (FRED_API_KEY …), by name. */
  credentials: Readonly<Record<string, string | undefined>>;
  /** Options of this source from the configuration (series lists …). */
  options: Readonly<Record<string, unknown>>;
}

export interface Source {
  id: string;
  title: string;
  publisher: string;
  licence: string;
  /** Catalog datasets it fills. */
  datasets: readonly string[];
  baseUrl: string;
  /** Requests per second at most (the source's published rule, or a polite default). */
  perSecond: number;
  /** When the service runs it (cron, UTC), unless the configuration says otherwise. */
  schedule: string;
  /** A credential the source needs, by environment variable name, if any. */
  credential?: string;
  /** The run's chunks, in order; each is stored before the next is asked for. */
  run(context: RunContext): AsyncIterable<Chunk>;
}

/** A source answered something that is not data (an error body sent with 200, a page it cannot parse). */
export class SourceError extends Error {
  override name = 'SourceError';
}

/** Adds days to a YYYY-MM-DD date. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

export function minDate(a: string, b: string): string {
  return a < b ? a : b;
}

/** A JSON body, or a SourceError naming the URL. */
export function json<T>(response: SourceResponse): T {
  try {
    return JSON.parse(response.body) as T;
  } catch {
    throw new SourceError(`${response.url}: not JSON (HTTP ${response.status})`);
  }
}
