/**
 * The real service for the ledger model: the app over one SQLite file or one PostgreSQL database (+ Redis),
 * built again over the same data on `restart()`. Requests go through app.inject(); the store is wrapped
 * only so a test can make an export's second page fail (which the service refunds).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import { type Env, loadServiceFile, parseEnv, type ServiceFile } from '../../../src/config.ts';
import { buildDeps, closeDeps, type Deps } from '../../../src/deps.ts';
import type { RowQuery, RowsPage, Store } from '../../../src/store/port.ts';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import { freshDatabase, freshRedis, type TestDatabase, type TestRedis } from '../backends.ts';
import { H15, h15Rows } from '../h15.ts';
import { TestClock, type TestResponse } from '../server.ts';

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
/** Rows of the exported dataset: two started blocks of 1,000, so an export reads a second page. */
export const EXPORT_ROWS = 1500;
export const EXPORT_DATASET = H15;
/** Where every sequence starts: late in a month, so a month turn is a few days away. */
export const START = Date.parse('2026-11-24T15:00:00Z');

const HIGH = 1_000_000;

/**
 * The shipped configuration with tier thresholds and monthly credits small enough for a short sequence to
 * climb and spend them, and rate limits out of the way (the limiter counts on the wall clock, not the test's).
 */
export function modelConfig(): ServiceFile {
  const config = loadServiceFile('config/service.json');
  const thresholds = [0, 40, 100, 250, 600, 1500, 4000, 10000];
  config.pricing.loyalty_tiers.forEach((tier, i) => {
    tier.min_tokens = thresholds[i] ?? tier.min_tokens;
    tier.rate_limit = HIGH;
  });
  // Monthly credits of tens of tokens, so wallets on a package still run dry and caps still bite.
  config.pricing.commercial_skus.forEach((sku, i) => {
    sku.rate_limit_per_minute = HIGH;
    sku.monthly_credits = 20 * (i + 1);
  });
  config.limits.ip_fence_per_minute = HIGH;
  config.limits.public_test.per_minute = HIGH;
  config.limits.public_test.registrations_per_ip_per_day = HIGH;
  return config;
}

export interface Service {
  readonly name: string;
  clock: TestClock;
  app: FastifyInstance;
  deps: Deps;
  /** Set while an export's pages after the first should fail: called just before each fails. */
  exportPageFails: (() => void) | null;
  request(
    method: string,
    path: string,
    init?: { headers?: Record<string, string>; body?: unknown },
  ): Promise<TestResponse>;
  admin(
    method: string,
    path: string,
    init?: { headers?: Record<string, string>; body?: unknown },
  ): Promise<TestResponse>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

interface Backend {
  env: Partial<Record<keyof Env, string>>;
  open(): Store;
  close(): Promise<void>;
}

function sqliteBackend(): Backend {
  const dir = mkdtempSync(join(tmpdir(), 'tmd-ledger-model-'));
  const file = join(dir, 'tmd.sqlite');
  return {
    env: { DATABASE_URL: file, DATA_DIR: dir },
    open: () => new SqliteStore(file),
    close: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** PostgreSQL and Redis, or why there are none (with CI=true a missing server throws instead). */
async function postgresBackend(): Promise<Backend | { skip: string }> {
  const db: TestDatabase | { skip: string } = await freshDatabase();
  if ('skip' in db) return db;
  const redis: TestRedis | { skip: string } = await freshRedis();
  if ('skip' in redis) {
    await db.drop();
    return redis;
  }
  const dir = mkdtempSync(join(tmpdir(), 'tmd-ledger-model-'));
  return {
    env: { DATABASE_URL: db.url, REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix, DATA_DIR: dir },
    open: () => new PostgresStore(db.url),
    async close() {
      await db.drop();
      await redis.cleanup();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startService(kind: 'sqlite' | 'postgres'): Promise<Service | { skip: string }> {
  const backend = kind === 'sqlite' ? sqliteBackend() : await postgresBackend();
  if ('skip' in backend) return backend;
  const clock = new TestClock(START);
  const config = modelConfig();
  const env = parseEnv({
    LOG_LEVEL: 'silent',
    PORT: '0',
    JWT_SECRET: 'ledger-model-secret-ledger-model-0123',
    ADMIN_TOKEN,
    TRUST_PROXY: '127.0.0.1',
    ...backend.env,
  });
  let ip = 0;
  const service = {
    name: kind,
    clock,
    exportPageFails: null,
  } as Service;
  const build = async () => {
    const store = withFailingExportPages(backend.open(), () => service.exportPageFails);
    service.deps = await buildDeps({ env, config, now: clock.now, store });
    service.app = await buildApp(service.deps, { logger: false });
    await service.app.ready();
  };
  const shutdown = async () => {
    await service.app.close();
    await closeDeps(service.deps);
  };
  service.request = async (method, path, init = {}) => {
    const headers: Record<string, string> = { host: '127.0.0.1', ...init.headers };
    const payload = init.body === undefined ? undefined : JSON.stringify(init.body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const response = await service.app.inject({
      method: method as 'GET',
      url: path,
      headers,
      ...(payload === undefined ? {} : { payload }),
    });
    let json: unknown;
    try {
      json = JSON.parse(response.body);
    } catch {
      json = undefined;
    }
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) responseHeaders.set(name, String(value));
    }
    return { status: response.statusCode, headers: responseHeaders, text: response.body, json };
  };
  // Each admin call from an address of its own, as an operator's calls sit behind the per-IP fence.
  service.admin = (method, path, init = {}) =>
    service.request(method, path, {
      ...init,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        'x-forwarded-for': `10.200.${Math.floor(++ip / 250) % 250}.${ip % 250}`,
        ...init.headers,
      },
    });
  service.restart = async () => {
    await shutdown();
    await build();
  };
  service.close = async () => {
    await shutdown();
    await backend.close();
  };
  await build();
  await service.deps.store.loadRows(EXPORT_DATASET, 'date', h15Rows(EXPORT_ROWS), 'import');
  return service;
}

/** The store, but an export's later pages (a read with `after`) of the exported dataset fail when asked. */
function withFailingExportPages(store: Store, failing: () => (() => void) | null): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'queryRows') {
        return async (query: RowQuery): Promise<RowsPage> => {
          const fails = failing();
          if (fails && query.dataset === EXPORT_DATASET && query.after !== undefined) {
            fails();
            throw new Error('disk on fire (ledger model)');
          }
          return target.queryRows(query);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
