/**
 * A local HTTP server that answers a collector's requests with its source's recorded answers (the shared
 * `recorded` folder, see its PROVENANCE.md), and a service whose collectors ask it. Each suite gives the
 * route from a request to its recorded answer; what was asked is kept in `seen`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ServiceFile } from '../../src/config.ts';
import { recordedDataDir } from './real-data.ts';
import { bearer, startServer, TestClock, type TestServer } from './server.ts';

export const USER_AGENT = 'Example Data Co ops@example.com';

/** A recorded answer's text, by its path in the recorded folder. */
export function recorded(path: string): string {
  return readFileSync(join(recordedDataDir(), path), 'utf8');
}

export type Answer = [status: number, body: string, headers?: Record<string, string>];

export interface Replay {
  base: string;
  seen: { path: string; userAgent: string | undefined; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/** Serves `route`'s answer to each request; an unrecorded request is 404, a throw a 500. */
export async function startReplay(
  route: (url: URL, headers: IncomingHttpHeaders) => Answer | null,
): Promise<Replay> {
  const seen: Replay['seen'] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://replay');
    seen.push({
      path: `${url.pathname}${url.search}`,
      userAgent: request.headers['user-agent'],
      headers: request.headers,
    });
    let answer: Answer;
    try {
      answer = route(url, request.headers) ?? [404, '{"error":"not recorded"}'];
    } catch (error) {
      answer = [500, JSON.stringify({ error: (error as Error).message })];
    }
    const [status, body, headers = {}] = answer;
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A service at a moment, its collectors configured with these sources (none scheduled). */
export function collectorServer(
  at: string,
  sources: ServiceFile['collectors']['sources'],
): Promise<TestServer> {
  return startServer({
    clock: new TestClock(Date.parse(at)),
    config: (config) => {
      config.collectors = { user_agent: USER_AGENT, sources };
    },
  });
}

/** A dataset's rows as a buyer reads them (real rows, not the sample). */
export async function rowsOf(server: TestServer, key: string, dataset: string, query = 'limit=1000') {
  const res = await server.request('GET', `/api/v1/data/${dataset}?${query}`, { headers: bearer(key) });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.meta.sample, false, `${dataset}: real rows`);
  return res.json.data as Record<string, unknown>[];
}
