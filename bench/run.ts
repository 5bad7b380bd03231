/**
 * npm run bench: the service CPU per request of (a) a metered read with a wallet key through the real
 * service against (b) the same read through a bare Fastify route, each in its own process, measured in
 * the same run; (c) and (d) the same read as MCP read_dataset calls (2025-era and 2026-07-28 requests)
 * against the same service. The headline of each mode is its CPU ratio; requests/s, p50 and p99 follow.
 * After every mode it audits the ledger of the store (every balance the sum of its entries). With
 * `--heavy=N` (default 64 with `--backend postgres`) it measures (a) and (b) again at N connections;
 * `--grow` runs the growth mode instead (bench/grow.ts), `--data` the large-dataset reads (bench/data.ts), `--live-import` an import under load (bench/live-import.ts). Results go to bench/results/latest.json, which
 * `npm run bench:docs` turns into the tables of docs/benchmarks.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { parseEnv } from '../src/config.ts';
import { buildDeps, closeDeps } from '../src/deps.ts';
import {
  type Audit,
  auditLine,
  auditStore,
  builtServer,
  type Figures,
  fundedKey,
  type LoadOptions,
  line,
  load,
  machine,
  parseArgs,
  saveResults,
  serverNodeFlags,
  startChild,
  stopChild,
  summarise,
  writeBenchConfig,
} from './lib.ts';
import { countBurns, mcpLoads, provisionMcpKey } from './mcp.ts';

const args = parseArgs(process.argv.slice(2));
if (args.has('grow')) {
  await import('./grow.ts');
  process.exit(0);
}
if (args.has('data')) {
  await import('./data.ts');
  process.exit(0);
}
if (args.has('live-import')) {
  await import('./live-import.ts');
  process.exit(0);
}
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
// --log: the service writes its request log (one JSON line per request, to /dev/null), as in production.
const logged = args.has('log');

const dir = mkdtempSync(join(tmpdir(), 'tmd-bench-'));
writeBenchConfig(dir);
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
  const { secret } = await fundedKey(deps, `bench${n}@example.com`);
  await deps.dataReads.ensureRows(deps.reads.resolve(dataset));
  await closeDeps(deps);
  return secret;
}

const key = await provision();
const customerKeys: string[] = [];
if (wallets > 1) for (let n = 1; n <= wallets; n++) customerKeys.push(await provision(n));
const mcpKey = await provisionMcpKey(parseEnv(baseEnv));
const loads = mcpLoads(mcpKey.key, dataset, limit);
const nodeFlags = serverNodeFlags(args);
const service = await startChild(
  builtServer('serve-service'),
  { ...baseEnv, ...(logged ? { BENCH_LOG: 'info' } : {}) },
  nodeFlags,
);
const bare = await startChild(builtServer('serve-bare'), baseEnv, nodeFlags);
const meteredUrl = `http://127.0.0.1:${service.port}/api/v1/data/${dataset}?limit=${limit}`;
const bareUrl = `http://127.0.0.1:${bare.port}/bare/${dataset}?limit=${limit}`;
const mcpUrl = `http://127.0.0.1:${service.port}/mcp/jsonrpc`;

interface Mode {
  /** The key of the mode in the results: a, b, c, d, a*, a@64, b@64. */
  id: string;
  name: string;
  options: LoadOptions;
  runs: Figures[];
}
const common = { seconds, connections, servers: backend === 'postgres' };
const modes: Mode[] = [
  {
    id: 'a',
    name: '(a) metered read, wallet key',
    options: {
      ...common,
      url: meteredUrl,
      headers: { authorization: `Bearer ${key}` },
      pid: service.child.pid,
    },
    runs: [],
  },
  {
    id: 'b',
    name: '(b) bare Fastify route, same data',
    options: { ...common, url: bareUrl, headers: {}, pid: bare.child.pid },
    runs: [],
  },
];
if (customerKeys.length > 0) {
  modes.push({
    id: 'a*',
    name: `(a*) metered, ${wallets} wallets`,
    options: { ...common, url: meteredUrl, headers: {}, pid: service.child.pid, keys: customerKeys },
    runs: [],
  });
}
if (heavy > 0) {
  modes.push(
    {
      id: `a@${heavy}`,
      name: `(a) metered read, ${heavy} connections`,
      options: { ...(modes[0] as Mode).options, connections: heavy },
      runs: [],
    },
    {
      id: `b@${heavy}`,
      name: `(b) bare route, ${heavy} connections`,
      options: { ...(modes[1] as Mode).options, connections: heavy },
      runs: [],
    },
  );
}
for (const [i, mcp] of loads.entries()) {
  modes.push({
    id: i === 0 ? 'c' : 'd',
    name: mcp.name,
    options: {
      ...common,
      url: mcpUrl,
      headers: mcp.headers,
      method: mcp.method,
      body: mcp.body,
      pid: service.child.pid,
    },
    runs: [],
  });
}

// --only=a,b: run just those modes (to profile one of them with --cpu-prof); the ratios need a, b, c, d.
const only = args.get('only')?.split(',');
if (only) modes.splice(0, modes.length, ...modes.filter((m) => only.includes(m.id)));
console.log(
  `benchmark: ${dataset}?limit=${limit}, ${connections} connections, ${rounds} interleaved rounds of ${seconds} s, medians; ${backend === 'postgres' ? 'PostgreSQL + Redis' : 'SQLite (WAL), in-process limits'}${logged ? '; request log on' : ''}`,
);
// Interleaved rounds, medians reported: machine noise hits every mode alike. The ledger is audited
// after every mode of every round.
const audits: Audit[] = [];
for (let round = 0; round < rounds; round++) {
  for (const mode of modes) {
    mode.runs.push(await load(mode.options));
    const audit = await auditStore(databaseUrl, `${mode.id} (round ${round + 1})`);
    audits.push(audit);
    if (!audit.clean) console.log(auditLine(audit));
  }
}
await stopChild(service.child);
await stopChild(bare.child);
const figures = Object.fromEntries(modes.map((m) => [m.id, summarise(m.runs)])) as Record<string, Figures>;
const fig = (id: string) => figures[id] as Figures;
const us = (value: number | null) => (value === null ? '-' : value.toFixed(0));
/** With PostgreSQL + Redis, the CPU of each process per request. */
function processLine(f: Figures): void {
  if (backend !== 'postgres') return;
  console.log(
    `    cpu per request, µs: service ${us(f.cpuUs)}, postgres ${us(f.postgresUs)}, redis ${us(f.redisUs)}, load generator ${us(f.clientUs)}`,
  );
}
if (only) {
  // A partial run (for a profile): its figures, not saved; the ratios need every mode.
  for (const mode of modes) {
    console.log(line(mode.name, fig(mode.id)));
    processLine(fig(mode.id));
    // What a profile of this run divides by (bench/profile.ts --requests=N): warm-ups included.
    console.log(`    requests served: ${fig(mode.id).ok}`);
  }
  console.log(
    audits.every((a) => a.clean) ? 'ledger audits: all clean' : 'warning: a ledger audit found mismatches',
  );
  await dropDatabase();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

/** x's CPU per request as a multiple of y's (null without /proc). */
const cpuTimes = (x: Figures, y: Figures) =>
  x.cpuUs === null || y.cpuUs === null ? null : x.cpuUs / y.cpuUs;
/** Service, PostgreSQL and Redis CPU per request together. */
const allCpu = (f: Figures) => (f.cpuUs === null ? null : f.cpuUs + (f.postgresUs ?? 0) + (f.redisUs ?? 0));
const times = (value: number | null) => (value === null ? '-' : `${value.toFixed(2)} ×`);

const ratios: Record<string, number | null> = {
  'a/b cpu': cpuTimes(fig('a'), fig('b')),
  'c/a cpu': cpuTimes(fig('c'), fig('a')),
  'd/a cpu': cpuTimes(fig('d'), fig('a')),
  'a/b req/s': fig('a').rps / fig('b').rps,
  'c/a req/s': fig('c').rps / fig('a').rps,
  'd/a req/s': fig('d').rps / fig('a').rps,
  'a/b p99': fig('a').p99 / Math.max(1, fig('b').p99),
};
if (backend === 'postgres') {
  const a = allCpu(fig('a'));
  const b = allCpu(fig('b'));
  ratios['a/b cpu, all processes'] = a === null || b === null ? null : a / b;
  if (heavy > 0) ratios[`a/b cpu at ${heavy}`] = cpuTimes(fig(`a@${heavy}`), fig(`b@${heavy}`));
}

// The headline: each mode's service CPU per request, against what it is compared with.
console.log('service CPU per request (the headline; lower is better):');
const headline = (name: string, f: Figures, against: string, ratio: number | null, target: string) =>
  console.log(
    `  ${name.padEnd(36)} ${us(f.cpuUs).padStart(5)} µs   ${against} ${times(ratio)}   (target ${target})`,
  );
// Targets as restated when a durable per-read debit was kept (docs/benchmarks.md).
headline(
  '(a) metered read',
  fig('a'),
  '= (b) ×',
  ratios['a/b cpu'] ?? null,
  backend === 'postgres' ? '- (all processes below)' : '<= 1.8 ×',
);
headline('(b) bare route', fig('b'), '          ', null, '-');
headline('(c) MCP read_dataset, 2025-11-25', fig('c'), '= (a) ×', ratios['c/a cpu'] ?? null, '<= 1.4 ×');
headline('(d) MCP read_dataset, 2026-07-28', fig('d'), '= (a) ×', ratios['d/a cpu'] ?? null, '<= 1.4 ×');
if (backend === 'postgres') {
  console.log(
    `  all processes (service, PostgreSQL, Redis): (a) ${us(allCpu(fig('a')))} µs, (b) ${us(allCpu(fig('b')))} µs: (a) = (b) × ${times(ratios['a/b cpu, all processes'] ?? null)} (target <= 2.0 ×)`,
  );
}
console.log('each mode:');
for (const mode of modes) {
  const f = fig(mode.id);
  console.log(line(mode.name, f));
  processLine(f);
  if (f.non2xx > 0) console.log(`    warning: ${f.non2xx} non-2xx responses`);
}
console.log(
  `p99: (a) ${fig('a').p99} ms = (b) × ${times(ratios['a/b p99'] ?? null)} (target <= 1.3 ×); req/s: a/b ${(ratios['a/b req/s'] as number).toFixed(2)}, c/a ${(ratios['c/a req/s'] as number).toFixed(2)}, d/a ${(ratios['d/a req/s'] as number).toFixed(2)}`,
);

// A refused tool call is a 2xx too, so count burns: each 2xx answer must have one. A run that stops
// leaves up to one call per connection served but uncounted, hence the slack above, never below.
const mcpOk = fig('c').ok + fig('d').ok;
const inFlight = loads.length * rounds * 2 * connections;
const burns = await countBurns(parseEnv(baseEnv), mcpKey.walletId);
const burnsMatch = burns >= mcpOk && burns - mcpOk <= inFlight;
console.log(
  burnsMatch
    ? `MCP: ${mcpOk} calls answered 2xx, ${burns} burns (${burns - mcpOk} served as a run stopped): every answer was a metered read`
    : `warning: ${mcpOk} MCP calls answered 2xx but the ledger has ${burns} burns (refused tool calls?)`,
);
const finalAudit = await auditStore(databaseUrl, 'the run');
audits.push(finalAudit);
const dirty = audits.filter((a) => !a.clean).length;
console.log(
  dirty === 0
    ? `ledger audits: ${audits.length} (after every mode of every round, and at the end), all clean; ${finalAudit.wallets} wallets, ${finalAudit.entries} entries`
    : `warning: ${dirty} of ${audits.length} ledger audits found mismatches`,
);

saveResults(`${backend}${logged ? '-logged' : ''}`, {
  measuredAt: new Date().toISOString(),
  machine: machine(),
  options: { backend, dataset, limit, connections, heavy, rounds, seconds, wallets, log: logged },
  figures,
  runs: Object.fromEntries(modes.map((m) => [m.id, m.runs])),
  ratios,
  mcp: { answered: mcpOk, burns, match: burnsMatch },
  audit: {
    count: audits.length,
    clean: dirty === 0,
    wallets: finalAudit.wallets,
    entries: finalAudit.entries,
  },
});
console.log('results: bench/results/latest.json (npm run bench:docs puts them in docs/benchmarks.md)');
await dropDatabase();
rmSync(dir, { recursive: true, force: true });
