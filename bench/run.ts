/**
 * npm run bench: requests/s, p50 and p99 of (a) a metered read with a wallet key through the real
 * service and (b) the same read through a bare Fastify route, each in its own process, measured in the
 * same run; prints a/b. (c) and (d): the same read as MCP read_dataset calls (2025-era and 2026-07-28
 * requests) against the same service; prints c/a and d/a. With `--heavy=N` (default 64 with
 * `--backend postgres`) it measures (a) and (b) again at N connections. Every acknowledged debit is
 * committed before its response is sent (the debit transaction commits before the handler returns).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadServiceFile, parseEnv } from '../src/config.ts';
import { buildDeps, closeDeps } from '../src/deps.ts';
import { newId } from '../src/domain/ids.ts';
import { tokensToMicros } from '../src/domain/money.ts';
import { utcMonth } from '../src/domain/pricing.ts';
import { countBurns, type McpLoad, mcpLoads, provisionMcpKey } from './mcp.ts';

const argv = process.argv.slice(2);
// `--name value` is accepted as well as `--name=value`.
const args = new Map(
  argv.flatMap((a, i) => {
    if (!a.startsWith('--')) return [];
    const [name, value] = a.slice(2).split('=') as [string, string | undefined];
    const next = argv[i + 1];
    return [[name, value ?? (next && !next.startsWith('--') ? next : 'true')] as [string, string]];
  }),
);
const backend = args.get('backend') ?? 'sqlite';
if (backend !== 'sqlite' && backend !== 'postgres') throw new Error('--backend must be sqlite or postgres');
const seconds = Number(args.get('duration') ?? 5);
const rounds = Number(args.get('rounds') ?? 3);
const connections = Number(args.get('connections') ?? 16);
// A second pass of (a) and (b) at more connections: the metered read waits on more round trips than
// the bare one (the limiter, the page, the debit's group commit), and with more requests in flight its
// group commits and Redis pipelines carry more requests each. Default 64 with PostgreSQL + Redis, where
// that matters; 0 turns it off.
const heavy = Number(args.get('heavy') ?? (backend === 'postgres' ? 64 : 0));
const dataset = args.get('dataset') ?? 'equities/stock-prices';
const limit = Number(args.get('limit') ?? 100);
// --wallets=N: the metered load also runs (line a*) with N customers, each its own account, wallet and key,
// taking turns request by request: the debits of different wallets share a group commit, where one
// wallet's wait for the batch in flight (see PostgresStore) and its per-key limits are one customer's.
const wallets = Number(args.get('wallets') ?? 1);

const dir = mkdtempSync(join(tmpdir(), 'tmd-bench-'));
// The limiter stays in the path; its limits are raised so the load is measured, not refused.
const config = loadServiceFile('config/service.json');
for (const tier of config.pricing.loyalty_tiers) tier.rate_limit = 1_000_000_000;
config.limits.wallet.concurrent = 10_000;
writeFileSync(join(dir, 'service.json'), JSON.stringify(config));
// --backend=postgres: the service on PostgreSQL + Redis (a fresh database `tmd_bench_*`, dropped after;
// BENCH_DATABASE_URL / BENCH_REDIS_URL override the servers); the bare route reads the same rows.
let databaseUrl = join(dir, 'bench.sqlite');
let dropDatabase = async () => {};
const backendEnv: Record<string, string> = {};
if (backend === 'postgres') {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const name = `tmd_bench_${Date.now().toString(36)}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  databaseUrl = url.toString();
  dropDatabase = async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  };
  backendEnv.REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  backendEnv.REDIS_KEY_PREFIX = `${name}:`;
}
const baseEnv = {
  CONFIG_FILE: join(dir, 'service.json'),
  ...process.env,
  ...backendEnv,
  DATABASE_URL: databaseUrl,
  DATA_DIR: dir,
  LOG_LEVEL: 'silent',
  JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0',
  HOST: '127.0.0.1',
  PORT: '0',
};

async function provision(n = 0): Promise<string> {
  const deps = await buildDeps({ env: parseEnv(baseEnv) });
  const now = Date.now();
  const account = await deps.store.createAccount(
    {
      id: newId('acc'),
      email: `bench${n}@example.com`,
      passwordHash: null,
      walletId: newId('wal'),
      createdAt: now,
      publicTestStartedAt: null,
    },
    utcMonth(now),
  );
  await deps.store.credit({
    walletId: account.walletId,
    kind: 'topup',
    amountMicros: tokensToMicros(1_000_000_000),
    at: now,
  });
  const issued = await deps.credentials.createLiveKey(account, 'bench', null);
  await deps.reads.ensureRows(deps.reads.resolve(dataset));
  await closeDeps(deps);
  return issued.secret;
}

async function startChild(script: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [script], { env: baseEnv, stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  return { child, port: Number(chunk.toString().trim().split('\n').at(-1)) };
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** 2xx answers, warm-up included. */
  ok: number;
  /** CPU time of the serving process per request (µs): steadier than req/s on a shared machine. */
  cpuUs: number | null;
  /** CPU time per request (µs) of the PostgreSQL and Redis servers (all their processes), and of the load generator. */
  postgresUs: number | null;
  redisUs: number | null;
  clientUs: number;
}

/** CPU time (µs) a process has used so far, from /proc (Linux, 100 ticks a second); null elsewhere. */
function cpuMicros(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10_000 : null;
  } catch {
    return null;
  }
}

/** CPU time (µs) used so far by every process of this machine whose name is `comm` (Linux); null elsewhere. */
function cpuOfAll(comm: string): number | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return null;
  }
  let total = 0;
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== comm) continue;
    } catch {
      continue; // the process ended
    }
    total += cpuMicros(Number(pid)) ?? 0;
  }
  return total;
}

const serverCpu = () => ({ postgres: cpuOfAll('postgres'), redis: cpuOfAll('redis-server') });

async function load(
  url: string,
  headers: Record<string, string>,
  request: Pick<McpLoad, 'method' | 'body'> | null = null,
  pid?: number,
  clients = connections,
  keys: readonly string[] = [],
): Promise<Figures> {
  let turn = 0;
  // Several keys: each request takes the next one.
  const rotate =
    keys.length > 1
      ? {
          requests: [
            {
              setupRequest: (req: autocannon.Request) => {
                turn = (turn + 1) % keys.length;
                return { ...req, headers: { ...req.headers, authorization: `Bearer ${keys[turn]}` } };
              },
            },
          ],
        }
      : {};
  const options = { url, headers, connections: clients, ...(request ?? {}), ...rotate };
  const warm = await autocannon({ ...options, duration: 1 });
  const cpuBefore = cpuMicros(pid);
  const serversBefore = serverCpu();
  const clientBefore = process.cpuUsage();
  const result = await autocannon({ ...options, duration: seconds });
  const client = process.cpuUsage(clientBefore);
  const cpuAfter = cpuMicros(pid);
  const serversAfter = serverCpu();
  const perRequest = (before: number | null, after: number | null) =>
    before === null || after === null || result.requests.total === 0
      ? null
      : (after - before) / result.requests.total;
  return {
    postgresUs: backend === 'postgres' ? perRequest(serversBefore.postgres, serversAfter.postgres) : null,
    redisUs: backend === 'postgres' ? perRequest(serversBefore.redis, serversAfter.redis) : null,
    clientUs: (client.user + client.system) / Math.max(1, result.requests.total),
    cpuUs:
      cpuBefore === null || cpuAfter === null || result.requests.total === 0
        ? null
        : (cpuAfter - cpuBefore) / result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    ok: warm['2xx'] + result['2xx'],
  };
}

function line(name: string, f: Figures): string {
  const cpu = f.cpuUs === null ? '' : `   cpu ${f.cpuUs.toFixed(0).padStart(4)} µs/req`;
  return `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(8)} req/s   p50 ${String(f.p50).padStart(4)} ms   p99 ${String(f.p99).padStart(4)} ms   non-2xx ${f.non2xx}${cpu}`;
}

const median = (values: number[]) =>
  [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number;
const medianOrNull = (values: (number | null)[]) =>
  values.some((v) => v === null) ? null : median(values as number[]);
function summarise(runs: Figures[]): Figures {
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    ok: runs.reduce((sum, r) => sum + r.ok, 0),
    cpuUs: medianOrNull(runs.map((r) => r.cpuUs)),
    postgresUs: medianOrNull(runs.map((r) => r.postgresUs)),
    redisUs: medianOrNull(runs.map((r) => r.redisUs)),
    clientUs: median(runs.map((r) => r.clientUs)),
  };
}

const key = await provision();
const customerKeys: string[] = [];
if (wallets > 1) for (let n = 1; n <= wallets; n++) customerKeys.push(await provision(n));
const mcpKey = await provisionMcpKey(parseEnv(baseEnv));
const loads = mcpLoads(mcpKey.key, dataset, limit);
const service = await startChild('bench/serve-service.ts');
const bare = await startChild('bench/serve-bare.ts');
const meteredUrl = `http://127.0.0.1:${service.port}/api/v1/data/${dataset}?limit=${limit}`;
const bareUrl = `http://127.0.0.1:${bare.port}/bare/${dataset}?limit=${limit}`;
// Interleaved rounds, medians reported: machine noise hits both sides alike.
const meteredRuns: Figures[] = [];
const bareRuns: Figures[] = [];
const heavyMeteredRuns: Figures[] = [];
const heavyBareRuns: Figures[] = [];
const customerRuns: Figures[] = [];
const mcpRuns: Figures[][] = loads.map(() => []);
const mcpUrl = `http://127.0.0.1:${service.port}/mcp/jsonrpc`;
for (let round = 0; round < rounds; round++) {
  meteredRuns.push(await load(meteredUrl, { authorization: `Bearer ${key}` }, null, service.child.pid));
  bareRuns.push(await load(bareUrl, {}, null, bare.child.pid));
  if (customerKeys.length > 0) {
    customerRuns.push(await load(meteredUrl, {}, null, service.child.pid, connections, customerKeys));
  }
  if (heavy > 0) {
    heavyMeteredRuns.push(
      await load(meteredUrl, { authorization: `Bearer ${key}` }, null, service.child.pid, heavy),
    );
    heavyBareRuns.push(await load(bareUrl, {}, null, bare.child.pid, heavy));
  }
  for (const [i, mcp] of loads.entries()) {
    mcpRuns[i]?.push(await load(mcpUrl, mcp.headers, mcp, service.child.pid));
  }
}
service.child.kill('SIGTERM');
bare.child.kill('SIGTERM');
const metered = summarise(meteredRuns);
const baseline = summarise(bareRuns);

console.log(
  `benchmark: ${dataset}?limit=${limit}, ${connections} connections, ${rounds} interleaved rounds of ${seconds} s, medians; ${backend === 'postgres' ? 'PostgreSQL + Redis' : 'SQLite (WAL), in-process limits'}`,
);
const target = backend === 'postgres' ? '0.5' : '0.75';
const us = (value: number | null) => (value === null ? '-' : value.toFixed(0));
/** The (a)/(b) block at one number of connections: figures, ratio, and where the machine's CPU went. */
function report(meteredFigures: Figures, bareFigures: Figures, clients: number): void {
  console.log(line('(a) metered read, wallet key', meteredFigures));
  console.log(line('(b) bare Fastify route, same data', bareFigures));
  console.log(
    `ratio a/b at ${clients} connections: ${(meteredFigures.rps / bareFigures.rps).toFixed(3)} (target >= ${target})`,
  );
  if (meteredFigures.non2xx > 0) console.log('warning: the metered run had non-2xx responses');
  // Where the machine's CPU goes per request: the ratio is bounded by the sum over every process.
  // `busy` is the service process's share of one core (its CPU per request times requests/s): the
  // service's JavaScript runs on one thread, so near 100 % it is bound by its own CPU, well below
  // it by waiting on the other processes.
  for (const [name, f] of [
    ['(a)', meteredFigures],
    ['(b)', bareFigures],
  ] as const) {
    const busy = f.cpuUs === null ? '' : ` (busy ${((f.cpuUs * f.rps) / 10_000).toFixed(0)} %)`;
    const parts = [`service ${us(f.cpuUs)}${busy}`];
    if (backend === 'postgres') parts.push(`postgres ${us(f.postgresUs)}`, `redis ${us(f.redisUs)}`);
    parts.push(`load generator ${us(f.clientUs)}`);
    console.log(`cpu per request ${name}, µs: ${parts.join(', ')}`);
  }
}
report(metered, baseline, connections);
if (customerRuns.length > 0) {
  const customers = summarise(customerRuns);
  console.log(line(`(a*) metered, ${wallets} wallets`, customers));
  console.log(
    `ratio a*/b at ${connections} connections: ${(customers.rps / baseline.rps).toFixed(3)}; cpu per request, µs: service ${us(customers.cpuUs)}${backend === 'postgres' ? `, postgres ${us(customers.postgresUs)}, redis ${us(customers.redisUs)}` : ''}`,
  );
}
if (heavy > 0) {
  console.log(`the same at ${heavy} connections:`);
  report(summarise(heavyMeteredRuns), summarise(heavyBareRuns), heavy);
}
const mcpFigures = mcpRuns.map(summarise);
for (const [i, mcp] of loads.entries()) {
  const figures = mcpFigures[i] as Figures;
  console.log(line(mcp.name, figures));
  const byCpu =
    figures.cpuUs !== null && metered.cpuUs !== null
      ? `, ${(metered.cpuUs / figures.cpuUs).toFixed(3)} by service CPU per request`
      : '';
  console.log(
    `ratio ${mcp.name.slice(1, 2)}/a: ${(figures.rps / metered.rps).toFixed(3)} by req/s${byCpu} (target >= 0.5)`,
  );
}
// A refused tool call is a 2xx too, so count burns: each 2xx answer must have one. A run that stops
// leaves up to one call per connection served but uncounted, hence the slack above, never below.
const mcpOk = mcpFigures.reduce((sum, f) => sum + f.ok, 0);
const inFlight = loads.length * rounds * 2 * connections;
const burns = await countBurns(parseEnv(baseEnv), mcpKey.walletId);
console.log(
  burns >= mcpOk && burns - mcpOk <= inFlight
    ? `MCP: ${mcpOk} calls answered 2xx, ${burns} burns (${burns - mcpOk} served as a run stopped): every answer was a metered read`
    : `warning: ${mcpOk} MCP calls answered 2xx but the ledger has ${burns} burns (refused tool calls?)`,
);
await dropDatabase();
rmSync(dir, { recursive: true, force: true });
