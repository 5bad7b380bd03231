/**
 * Service nodes as real processes (`node src/main.ts`), sharing one PostgreSQL database and one Redis
 * through loopback proxies the test controls, plus a test-side Deps on the same database to provision
 * accounts and keys the way an operator would.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadServiceFile, parseEnv, type ServiceFile } from '../../src/config.ts';
import { buildDeps, closeDeps, type Deps } from '../../src/deps.ts';
import { newId } from '../../src/domain/ids.ts';
import { tokensToMicros } from '../../src/domain/money.ts';
import { utcMonth } from '../../src/domain/pricing.ts';
import { MemoryLimiter } from '../../src/limits/memory-limiter.ts';
import type { TestDatabase, TestRedis } from './backends.ts';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

export const JWT_SECRET = 'cluster-secret-cluster-secret-cluster-0123';

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  assert.ok(address && typeof address === 'object');
  return address.port;
}

export interface Node {
  url: string;
  child: ChildProcess;
  /** Everything the process printed (its log lines). */
  output(): string;
  exited: Promise<number | null>;
}

export interface Cluster {
  nodes: Node[];
  deps: Deps;
  pgProxy: TcpProxy;
  redisProxy: TcpProxy;
  dir: string;
  startNode(extraEnv?: Record<string, string>): Promise<Node>;
  /** A wallet-backed live key on an account holding exactly `tokens` (no signup grant). */
  walletKey(
    tokens: number,
    packageId?: string | null,
  ): Promise<{ key: string; keyId: string; walletId: string; accountId: string }>;
  close(): Promise<void>;
}

export async function startCluster(options: {
  db: TestDatabase;
  redis: TestRedis;
  nodes: number;
  config?: (config: ServiceFile) => void;
  env?: Record<string, string>;
}): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'tmd-cluster-'));
  const config = loadServiceFile('config/service.json');
  options.config?.(config);
  const configFile = join(dir, 'service.json');
  writeFileSync(configFile, JSON.stringify(config));

  const pg = new URL(options.db.url);
  const pgProxy = await startTcpProxy(pg.hostname, Number(pg.port || 5432));
  const viaProxy = new URL(options.db.url);
  viaProxy.port = String(pgProxy.port);
  const redisTarget = new URL(options.redis.url);
  const redisProxy = await startTcpProxy(redisTarget.hostname, Number(redisTarget.port || 6379));

  const env = {
    DATABASE_URL: viaProxy.toString(),
    REDIS_URL: `redis://127.0.0.1:${redisProxy.port}`,
    REDIS_KEY_PREFIX: options.redis.prefix,
    JWT_SECRET,
    CONFIG_FILE: configFile,
    DATA_DIR: dir,
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    TRUST_PROXY: '127.0.0.1',
    ...options.env,
  };

  const nodes: Node[] = [];
  const startNode = async (extraEnv: Record<string, string> = {}): Promise<Node> => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', 'src/main.ts'], {
      env: { PATH: process.env.PATH ?? '', ...env, ...extraEnv, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ok = await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`node on port ${port} did not start:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const node = { url, child, output: () => output, exited };
    nodes.push(node);
    return node;
  };

  await Promise.all(Array.from({ length: options.nodes }, () => startNode()));
  // The test's own view of the same database (direct, not through the proxy), to provision and audit.
  const deps = await buildDeps({
    env: parseEnv({ ...env, DATABASE_URL: options.db.url, LOG_LEVEL: 'silent', KEY_CACHE_TTL_MS: '0' }),
    config,
    limiter: new MemoryLimiter(),
  });

  return {
    nodes,
    deps,
    pgProxy,
    redisProxy,
    dir,
    startNode,
    async walletKey(tokens, packageId = null) {
      const now = Date.now();
      const account = await deps.store.createAccount(
        {
          id: newId('acc'),
          email: `${newId('acc')}@example.com`,
          passwordHash: null,
          walletId: newId('wal'),
          createdAt: now,
          publicTestStartedAt: null,
        },
        utcMonth(now),
      );
      if (packageId) await deps.store.updateAccount(account.id, { packageId });
      if (tokens > 0) {
        await deps.store.credit({
          walletId: account.walletId,
          kind: 'topup',
          amountMicros: tokensToMicros(tokens),
          at: now,
        });
      }
      const issued = await deps.credentials.createLiveKey({ ...account, packageId }, 'cluster', null);
      return {
        key: issued.secret,
        keyId: issued.record.id,
        walletId: account.walletId,
        accountId: account.id,
      };
    },
    async close() {
      for (const node of nodes)
        if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGKILL');
      await Promise.all(nodes.map((n) => n.exited));
      await closeDeps(deps);
      await pgProxy.close();
      await redisProxy.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Reply {
  status: number;
  code?: string;
  requestId: string;
  headers: Headers;
}

/** One GET; the body is read (so the connection is reused) and its problem code kept. */
export async function get(url: string, key: string, requestId?: string): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (requestId) headers['x-request-id'] = requestId;
  const response = await fetch(url, { headers });
  const text = await response.text();
  let code: string | undefined;
  if (response.status >= 400) {
    try {
      code = JSON.parse(text).code;
    } catch {
      code = undefined;
    }
  }
  return { status: response.status, code, requestId: requestId ?? '', headers: response.headers };
}

export const count = (replies: readonly Reply[], status: number, code?: string) =>
  replies.filter((r) => r.status === status && (code === undefined || r.code === code)).length;
