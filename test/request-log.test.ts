/** The request log: one line per request, written when it ends, with no credential in it. */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { H15, h15Rows } from './helpers/h15.ts';
import { operatorAccount } from './helpers/operator.ts';
import { bearer, startServer, type TestServer, walletAccount } from './helpers/server.ts';

let server: TestServer;
let logged: FastifyInstance;
let url: string;
let output = '';

before(async () => {
  server = await startServer();
  // A second app on the same deps, with its log lines captured.
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  logged = await buildApp(server.deps, { logger: { level: 'info', stream } });
  url = await logged.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  // The test's own keep-alive connections would hold the close for Fastify's keep-alive timeout.
  const closing = logged.close();
  logged.server.closeAllConnections();
  await closing;
  await server.close();
});

const linesOf = (requestId: string) =>
  output
    .split('\n')
    .filter((line) => line.includes(requestId))
    .map((line) => JSON.parse(line));

test('a request is logged on one line with its method, URL, status, time and key id; no secret appears', async () => {
  const account = await walletAccount(server, 100);
  const secret = account.key as string;
  const read = await fetch(`${url}/api/v1/data/macro/fed-h15-series?limit=1&api_key=${secret}`, {
    headers: { ...bearer(secret), 'x-request-id': 'log-test-read' },
  });
  // A key in the URL is not a credential here (the query refuses unknown parameters): 400.
  assert.equal(read.status, 400);
  const ok = await fetch(`${url}/api/v1/me`, {
    headers: { ...bearer(secret), 'x-request-id': 'log-test-me' },
  });
  assert.equal(ok.status, 200);
  const refused = await fetch(`${url}/api/v1/me`, {
    headers: { ...bearer(`${secret}x`), 'x-request-id': 'log-test-401' },
  });
  assert.equal(refused.status, 401);
  // The line is written as the response ends: give the stream a turn.
  await new Promise((resolve) => setImmediate(resolve));

  for (const [id, status, withKey] of [
    ['log-test-read', 400, true],
    ['log-test-me', 200, true],
    ['log-test-401', 401, false],
  ] as const) {
    const lines = linesOf(id);
    assert.equal(lines.length, 1, `one line for ${id}: ${JSON.stringify(lines)}`);
    const [line] = lines;
    assert.equal(line.msg, 'request completed');
    assert.equal(line.req.method, 'GET');
    assert.equal(line.res.statusCode, status);
    assert.equal(typeof line.responseTime, 'number');
    assert.equal(line.keyId, withKey ? account.keyId : undefined);
  }
  assert.match(linesOf('log-test-read')[0].req.url, /api_key=tmd_live_\[redacted\]/);
  assert.equal(linesOf('log-test-me')[0].req.url, '/api/v1/me');
  assert.ok(!output.includes(secret.slice(9)), 'no part of the secret past its prefix is logged');
});

test('an export the client abandons still gets its one line, with its URL and key id', async () => {
  // Big enough (30,000 rows, about 4 MB) that it cannot all be in the socket's buffers when the client goes.
  const rows = h15Rows(30_000, Date.UTC(1950, 0, 1));
  await server.deps.store.loadRows(H15, 'date', rows, 'import');
  const pro = await operatorAccount(server, { pkg: 'pro' });
  const controller = new AbortController();
  const response = await fetch(`${url}/api/v1/export/${H15}`, {
    headers: { ...bearer(pro.key), 'x-request-id': 'log-test-abandoned' },
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  await reader.read();
  controller.abort();
  await reader.read().catch(() => undefined);
  let lines = linesOf('log-test-abandoned');
  for (let i = 0; i < 50 && lines.length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    lines = linesOf('log-test-abandoned');
  }
  assert.equal(lines.length, 1, JSON.stringify(lines));
  const [line] = lines;
  assert.equal(line.msg, 'request ended before its response was complete');
  assert.equal(line.req.url, `/api/v1/export/${H15}`);
  assert.equal(line.keyId, pro.keyId);
  assert.equal(line.res.statusCode, 200);
});
