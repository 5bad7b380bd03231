/**
 * npm run bench -- --live-import [--backend=postgres] [--rows=N] [--kills=N]: an import into a running
 * service (docs/benchmarks.md, "An import under load"). A service process serves `equities/stock-prices`
 * (10,000 rows, close 1) and `calendar/events`; 16 connections read them, metered, half each. First
 * `tmd import --replace` of a --rows file (default 1,000,000, close 2) is killed (kill -9) at a random
 * moment --kills times (default 10); then it runs whole. Reported: answers other than 200, pages that
 * mixed old and new rows, read latency p50/p99 per dataset while the import ran, the import's rate and
 * peak resident memory, and the ledger audit (one burn per read served).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { csvLine } from '../src/catalog/csv.ts';
import { parseEnv } from '../src/config.ts';
import { buildDeps, closeDeps } from '../src/deps.ts';
import {
  auditStore,
  builtServer,
  fundedKey,
  machine,
  parseArgs,
  saveResults,
  serverNodeFlags,
  startChild,
  stopChild,
  writeBenchConfig,
} from './lib.ts';

const args = parseArgs(process.argv.slice(2));
const backend = args.get('backend') ?? 'sqlite';
if (backend !== 'sqlite' && backend !== 'postgres') throw new Error('--backend must be sqlite or postgres');
const rows = Number(args.get('rows') ?? 1_000_000);
const kills = Number(args.get('kills') ?? 10);
const DATASET = 'equities/stock-prices';
const SYMBOLS = 100;

const dir = mkdtempSync(join(tmpdir(), 'tmd-live-'));
writeBenchConfig(dir);
let databaseUrl = join(dir, 'live.sqlite');
let drop = async () => {};
const extra: Record<string, string> = {};
if (backend === 'postgres') {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const name = `tmd_live_${Date.now().toString(36)}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  databaseUrl = url.toString();
  extra.REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  extra.REDIS_KEY_PREFIX = `${name}:`;
  drop = async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  };
}
const env = {
  ...process.env,
  ...extra,
  CONFIG_FILE: join(dir, 'service.json'),
  DATABASE_URL: databaseUrl,
  DATA_DIR: dir,
  LOG_LEVEL: 'silent',
  JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0',
  HOST: '127.0.0.1',
  PORT: '0',
} as Record<string, string>;

const day = (n: number) => new Date(Date.UTC(1990, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
const price = (i: number, close: number) => ({
  symbol: `S${i % SYMBOLS}`,
  exchange: 'NASDAQ',
  mic: 'XNAS',
  date: day(Math.floor(i / SYMBOLS)),
  open: close,
  high: close,
  low: close,
  close,
  adj_close: close,
  vwap: close,
  volume: 1000,
  currency: 'USD',
});
const columns = Object.keys(price(0, 0));

// The file: written once, in pieces.
const file = join(dir, 'prices.csv');
{
  let text = csvLine(columns);
  writeFileSync(file, '');
  for (let i = 0; i < rows; i++) {
    const row = price(i, 2) as Record<string, string | number>;
    text += csvLine(columns.map((c) => row[c] ?? null));
    if (text.length > 1 << 20) {
      writeFileSync(file, text, { flag: 'a' });
      text = '';
    }
  }
  writeFileSync(file, text, { flag: 'a' });
}

const deps = await buildDeps({ env: parseEnv(env) });
await deps.operator.importRows(
  DATASET,
  Array.from({ length: 10_000 }, (_, i) => price(i, 1)),
  { mode: 'replace' },
);
const funded = [await fundedKey(deps, 'live1@example.com'), await fundedKey(deps, 'live2@example.com')];
const keys = funded.map((f) => f.secret);
await closeDeps(deps);
const service = await startChild(builtServer('serve-service'), env, serverNodeFlags(args));
const base = `http://127.0.0.1:${service.port}/api/v1/data`;

interface Group {
  latencies: number[];
  statuses: Map<number, number>;
  mixed: number;
}
const newGroup = (): Group => ({ latencies: [], statuses: new Map(), mixed: 0 });

/** 16 connections of reads until stop(): even ones on the dataset imported, odd ones on another. */
function readers() {
  let running = true;
  const imported = newGroup();
  const other = newGroup();
  const loops = Array.from({ length: 16 }, async (_, n) => {
    const group = n % 2 === 0 ? imported : other;
    const url =
      n % 2 === 0
        ? `${base}/${DATASET}?symbol=S${n % SYMBOLS}&limit=100`
        : `${base}/calendar/events?limit=10`;
    while (running) {
      const started = performance.now();
      const res = await fetch(url, { headers: { authorization: `Bearer ${keys[n % 2]}` } });
      const body = (await res.json()) as { data?: { close?: number }[] };
      group.latencies.push(performance.now() - started);
      group.statuses.set(res.status, (group.statuses.get(res.status) ?? 0) + 1);
      if (n % 2 === 0 && body.data && new Set(body.data.map((r) => r.close)).size > 1) group.mixed++;
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return { imported, other };
    },
  };
}

function importer(): ChildProcess {
  return spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', 'bin/tmd.ts', 'import', DATASET, file, '--replace'],
    { env, stdio: ['ignore', 'ignore', 'inherit'] },
  );
}

/** Peak resident memory of a process, from /proc, sampled until it exits. */
function peakRss(child: ChildProcess): () => number {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peak = Math.max(peak, kb * 1024);
    } catch {
      // Exited.
    }
  }, 200);
  child.once('exit', () => clearInterval(timer));
  return () => peak;
}

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);
};
const summary = (g: Group) => ({
  reads: g.latencies.length,
  non200: [...g.statuses].filter(([s]) => s !== 200).reduce((n, [, c]) => n + c, 0),
  mixed: g.mixed,
  p50: Math.round(pct(g.latencies, 50)),
  p99: Math.round(pct(g.latencies, 99)),
});

console.log(
  `live import: ${DATASET}, ${backend === 'postgres' ? 'PostgreSQL + Redis' : 'SQLite (WAL)'}, ${rows.toLocaleString('en')} rows, 16 connections of reads`,
);
// Reads alone first: what the same 16 connections see without an import.
const alone = readers();
await sleep(8000);
const baseline = await alone.stop();
const baselineSummary = { imported: summary(baseline.imported), other: summary(baseline.other) };
console.log(`  no import: ${JSON.stringify(baselineSummary)}`);
// Killed at random moments.
const duringKills = readers();
for (let n = 0; n < kills; n++) {
  const child = importer();
  await sleep(1000 + Math.random() * 4000);
  child.kill('SIGKILL');
  await once(child, 'exit');
}
const killed = await duringKills.stop();
const killedSummary = { imported: summary(killed.imported), other: summary(killed.other) };
console.log(`  ${kills} imports killed: ${JSON.stringify(killedSummary)}`);

// Whole.
const during = readers();
const started = Date.now();
const child = importer();
const peak = peakRss(child);
const [code] = await once(child, 'exit');
const seconds = (Date.now() - started) / 1000;
const result = await during.stop();
if (code !== 0) throw new Error(`the import exited with ${code}`);
const after = await fetch(`${base}/${DATASET}?symbol=S1&limit=1`, {
  headers: { authorization: `Bearer ${keys[0]}` },
});
const newest = ((await after.json()) as { data: { close: number }[] }).data[0]?.close;
await stopChild(service.child);
const audit = await auditStore(databaseUrl, 'the run');
// One burn per read answered 200, and none for any other answer.
const counted = await buildDeps({ env: parseEnv(env) });
let burns = 0;
for (const { walletId } of funded)
  burns += (await counted.store.listEntries(walletId)).filter((e) => e.kind === 'burn').length;
await closeDeps(counted);
const served = [
  baseline.imported,
  baseline.other,
  killed.imported,
  killed.other,
  result.imported,
  result.other,
].reduce((n, g) => n + (g.statuses.get(200) ?? 0), 1);
const figures = {
  seconds,
  rowsPerSecond: Math.round(rows / seconds),
  peakRssBytes: peak(),
  imported: summary(result.imported),
  other: summary(result.other),
  newRowsServed: newest === 2,
  burnsMatchReads: burns === served,
};
console.log(
  `  import: ${seconds.toFixed(1)} s, ${figures.rowsPerSecond.toLocaleString('en')} rows/s, peak RSS ${(figures.peakRssBytes / 1048576).toFixed(0)} MB`,
);
for (const [name, s] of [
  ['dataset imported', figures.imported],
  ['another dataset', figures.other],
] as const)
  console.log(
    `  reads of the ${name}: ${s.reads}, non-200 ${s.non200}, mixed pages ${s.mixed}, p50 ${s.p50} ms, p99 ${s.p99} ms (target p99 < 100 ms)`,
  );
console.log(
  `  new rows served after the import: ${figures.newRowsServed}; burns ${burns} for ${served} reads served; ledger audit: ${audit.clean ? 'clean' : 'MISMATCHES'}`,
);
saveResults(`live-import-${backend}`, {
  measuredAt: new Date().toISOString(),
  machine: machine(),
  options: { backend, dataset: DATASET, rows, kills, connections: 16 },
  baseline: baselineSummary,
  killed: killedSummary,
  figures,
  audit: { clean: audit.clean },
});
console.log('results: bench/results/latest.json (npm run bench:docs puts them in docs/benchmarks.md)');
await drop();
rmSync(dir, { recursive: true, force: true });
