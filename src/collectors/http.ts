/**
 * The HTTP client a collector's source is handed (SourceHttp): one request at a time, spaced to the
 * source's rate, with the operator's User-Agent, a timeout, and retries with exponential backoff on
 * network errors, 429 and 5xx, honouring Retry-After. It counts requests, bytes and 304 answers for the
 * run's record. Node's fetch (undici) does the rest (gzip, keep-alive, redirects).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type GetOptions,
  SourceError,
  type SourceHttp,
  type SourceResponse,
} from '../catalog/sources/source.ts';

export interface PoliteOptions {
  userAgent: string;
  perSecond: number;
  timeoutMs?: number;
  /** Attempts after the first, for a network error, 429 or 5xx. */
  retries?: number;
  /** The first backoff (doubled each attempt) and the longest wait, Retry-After included. */
  backoffMs?: number;
  maxWaitMs?: number;
}

/** Retry-After as seconds or an HTTP date, in ms from now; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export class PoliteHttp implements SourceHttp {
  requests = 0;
  bytes = 0;
  notModified = 0;
  readonly #options: Required<PoliteOptions>;
  #nextAt = 0;

  constructor(options: PoliteOptions) {
    this.#options = { timeoutMs: 30_000, retries: 4, backoffMs: 1_000, maxWaitMs: 120_000, ...options };
  }

  /** Waits for this client's next turn: at most perSecond requests a second. */
  async #turn(): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.#nextAt);
    this.#nextAt = at + 1000 / this.#options.perSecond;
    if (at > now) await sleep(at - now);
  }

  get(url: string, options: GetOptions = {}): Promise<SourceResponse> {
    const headers: Record<string, string> = {};
    if (options.etag) headers['if-none-match'] = options.etag;
    if (options.lastModified) headers['if-modified-since'] = options.lastModified;
    return this.#request(url, { method: 'GET', headers }, options.accept);
  }

  postJson(url: string, body: unknown): Promise<SourceResponse> {
    return this.#request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  async #request(
    url: string,
    init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
    accept: readonly number[] = [],
  ): Promise<SourceResponse> {
    const { retries, backoffMs, maxWaitMs, timeoutMs, userAgent } = this.#options;
    const headers: Record<string, string> = { 'user-agent': userAgent, accept: '*/*', ...init.headers };
    for (let attempt = 0; ; attempt++) {
      await this.#turn();
      const backoff = Math.min(maxWaitMs, backoffMs * 2 ** attempt);
      let response: Response;
      let body: string;
      try {
        response = await fetch(url, {
          method: init.method,
          headers,
          ...(init.body === undefined ? {} : { body: init.body }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        body = await response.text();
      } catch (error) {
        if (attempt < retries) {
          await sleep(backoff);
          continue;
        }
        throw new SourceError(`${url}: ${(error as Error).message} (after ${attempt + 1} attempts)`);
      }
      this.requests++;
      this.bytes += Buffer.byteLength(body);
      const answer: SourceResponse = {
        status: response.status,
        url,
        etag: response.headers.get('etag'),
        lastModified: response.headers.get('last-modified'),
        body,
      };
      if (response.status === 304) {
        this.notModified++;
        return answer;
      }
      if (accept.includes(response.status)) return answer;
      if ((response.status === 429 || response.status >= 500) && attempt < retries) {
        await sleep(Math.min(maxWaitMs, retryAfterMs(response.headers.get('retry-after')) ?? backoff));
        continue;
      }
      if (response.status >= 400) throw new SourceError(`${url}: HTTP ${response.status}`);
      return answer;
    }
  }
}
