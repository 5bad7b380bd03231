/**
 * The app over a real SQLite file, with an injectable clock. Requests go through Fastify's inject() unless
 * the test asks for a real socket (`listen: true`): limits across connections, shutdown, keep-alive,
 * streams cut mid-way, HTTP parser errors, timeouts, and clients that need a URL.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { type Env, loadServiceFile, parseEnv, type ServiceFile } from '../../src/config.ts';
import { buildDeps, closeDeps, type Deps } from '../../src/deps.ts';
import { newId } from '../../src/domain/ids.ts';
import { tokensToMicros } from '../../src/domain/money.ts';
import { hashPassword } from '../../src/domain/passwords.ts';
import { utcMonth } from '../../src/domain/pricing.ts';
import type { Store } from '../../src/store/port.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

export class TestClock {
  t: number;
  constructor(start = Date.parse('2026-11-21T15:00:00Z')) {
    this.t = start;
  }
  now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface TestServer {
  /** The listening server's base URL; throws unless started with `listen: true`. */
  readonly url: string;
  /** The origin requests are addressed to (their Host), for same-origin checks. */
  origin: string;
  app: FastifyInstance;
  deps: Deps;
  clock: TestClock;
  dir: string;
  request(
    method: string,
    path: string,
    init?: { headers?: Record<string, string>; body?: unknown; raw?: string },
  ): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are asserted field by field
  json: any;
}

export function baseConfig(): ServiceFile {
  return loadServiceFile('config/service.json');
}

export async function startServer(
  options: {
    clock?: TestClock;
    config?: (config: ServiceFile) => void;
    env?: Partial<Record<keyof Env, string>>;
    /** Wraps the real SQLite store (e.g. to slow reads down and count them in the server). */
    wrapStore?: (store: Store) => Store;
    /** Listen on a loopback port and send request() over it with fetch, for tests where the socket matters. */
    listen?: boolean;
    /** The port to listen on (with `listen`): a free one when absent. */
    port?: number;
    /** How the OAuth server fetches client ID metadata documents. */
    oauthFetch?: typeof globalThis.fetch;
  } = {},
): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'tmd-test-'));
  const clock = options.clock ?? new TestClock();
  const config = baseConfig();
  options.config?.(config);
  const env = parseEnv({
    DATABASE_URL: join(dir, 'tmd.sqlite'),
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    PORT: '0',
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
    ADMIN_TOKEN: 'admin-token-for-tests-0123456789',
    TRUST_PROXY: '127.0.0.1',
    ...options.env,
  });
  const store = options.wrapStore ? options.wrapStore(new SqliteStore(env.DATABASE_URL)) : undefined;
  const deps = await buildDeps({
    env,
    config,
    now: clock.now,
    ...(store ? { store } : {}),
    ...(options.oauthFetch ? { oauthFetch: options.oauthFetch } : {}),
  });
  const app = await buildApp(deps, { logger: false });
  if (!options.listen) {
    await app.ready();
    return {
      get url(): string {
        throw new Error(
          'This test server does not listen: start it with startServer({ listen: true }) to use a socket.',
        );
      },
      origin: `http://${INJECT_HOST}`,
      app,
      deps,
      clock,
      dir,
      request: (method, path, init = {}) => injectRequest(app, method, path, init),
      async close() {
        await app.close();
        await closeDeps(deps);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const address = app.server.address();
  assert.ok(address && typeof address === 'object');
  const url = `http://127.0.0.1:${address.port}`;
  return {
    url,
    origin: url,
    app,
    deps,
    clock,
    dir,
    async request(method, path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      let body: string | undefined = init.raw;
      if (init.body !== undefined) {
        body = JSON.stringify(init.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(`${url}${path}`, { method, headers, body });
      return toTestResponse(response.status, response.headers, await response.text());
    },
    async close() {
      // Keep-alive sockets of the test's own fetch calls would hold close() for Fastify's 72 s keep-alive.
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
      await closeDeps(deps);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The Host an injected request carries: a loopback name, as a local client's would be. */
const INJECT_HOST = '127.0.0.1';

/** The request headers fetch adds on its own, so the app sees the same request either way. */
const FETCH_DEFAULT_HEADERS = {
  accept: '*/*',
  'accept-language': '*',
  'sec-fetch-mode': 'cors',
  'user-agent': 'node',
} as const;

async function injectRequest(
  app: FastifyInstance,
  method: string,
  path: string,
  init: Parameters<TestServer['request']>[2] = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...FETCH_DEFAULT_HEADERS, host: INJECT_HOST };
  for (const [name, value] of Object.entries(init.headers ?? {})) headers[name.toLowerCase()] = value;
  let body: string | undefined = init.raw;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  // As fetch does: an empty body, or none on POST and PUT, is sent as Content-Length: 0.
  if (body === '' || (body === undefined && (method === 'POST' || method === 'PUT'))) {
    headers['content-length'] ??= '0';
  }
  const response = await app.inject({
    method: method as InjectOptions['method'],
    url: path,
    headers,
    ...(body ? { payload: body } : {}),
  });
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, String(one));
  }
  return toTestResponse(response.statusCode, responseHeaders, response.body);
}

function toTestResponse(status: number, headers: Headers, text: string): TestResponse {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, headers, text, json };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Every wallet's balance equals the sum of its entries, and none is negative. */
export async function assertLedgerBalanced(server: TestServer): Promise<void> {
  const audit = await server.deps.store.auditLedger();
  assert.deepEqual(audit.mismatches, [], 'every wallet balance equals the sum of its ledger entries');
}

let ipCounter = 0;
/** A sandbox key issued to a fresh client IP (the harness trusts X-Forwarded-For from loopback). */
export async function sandboxKey(
  server: TestServer,
  ip = `198.51.100.${++ipCounter % 250}`,
): Promise<string> {
  const res = await server.request('POST', '/api/v1/auth/sandbox', { headers: { 'x-forwarded-for': ip } });
  assert.equal(res.status, 201, res.text);
  return res.json.key as string;
}

let emailCounter = 0;
export async function publicTestKey(
  server: TestServer,
  email = `user${++emailCounter}@example.com`,
  password = 'correct horse battery',
) {
  // Each from its own address: new accounts per IP are capped (limits.public_test). An email that has an
  // account gets a new key in place of its old one (rotate_key).
  const res = await server.request('POST', '/api/v1/auth/public-test', {
    body: { email, password, rotate_key: true },
    headers: { 'x-forwarded-for': `10.9.${Math.floor(emailCounter / 250) % 250}.${emailCounter % 250}` },
  });
  assert.ok(res.status === 201 || res.status === 200, res.text);
  return {
    key: res.json.key as string,
    accountId: res.json.account_id as string,
    email,
    password,
    body: res.json,
  };
}

/**
 * A login account holding exactly `tokens`, with a session and a live key made through the API.
 * The account is created the way an operator would (no signup grant), so balances are exact.
 */
export async function walletAccount(server: TestServer, tokens: number, password = 'correct horse battery') {
  const { store } = server.deps;
  const now = server.clock.now();
  const email = `wallet${++emailCounter}@example.com`;
  const account = await store.createAccount(
    {
      id: newId('acc'),
      email,
      passwordHash: await hashPassword(password),
      walletId: newId('wal'),
      createdAt: now,
      publicTestStartedAt: null,
    },
    utcMonth(now),
  );
  if (tokens > 0) {
    await store.credit({
      walletId: account.walletId,
      kind: 'topup',
      amountMicros: tokensToMicros(tokens),
      at: now,
      idempotencyKey: `setup-${email}`,
    });
  }
  const login = await server.request('POST', '/api/v1/auth/login', { body: { email, password } });
  assert.equal(login.status, 200, login.text);
  const created = await server.request('POST', '/api/v1/keys', {
    headers: bearer(login.json.token),
    body: { name: 'test' },
  });
  assert.equal(created.status, 201, created.text);
  return {
    account,
    email,
    password,
    session: login.json.token as string,
    key: created.json.key as string,
    keyId: created.json.id as string,
  };
}

/** A loopback port nothing listens on now: for a server whose BASE_URL must name its own port. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
