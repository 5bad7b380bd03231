/**
 * npm run bench -- --data: what a read costs the service as a dataset grows, and whether costly reads
 * hold up other customers' (docs/benchmarks.md, "Reads on a large dataset"). Two databases of
 * `equities/stock-prices`, 250 trading days per symbol: `small` (10,000 rows) and `large` (--rows,
 * default 1,000,000; the issue's 10 M with --rows=10000000), each served by its own service process
 * with the chosen backend. For each, in interleaved rounds, the service CPU per request of:
 * the newest page; one symbol; one symbol over a quarter; an absent symbol; ten symbols; a filter no
 * index serves (a scan to SCAN_CAP that finds nothing: the worst accepted read). Then, on the large one,
 * 16 connections of worst reads from one key while another key reads one page at a time: that key's
 * p99. Every read is metered; the ledger is audited after each run. With --external (PostgreSQL), a
 * third service serves the large dataset from an operator's own table of as many rows
 * (`external_datasets`), read through a role that may only read.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { csvRecord } from '../src/catalog/csv.ts';
import type { Row } from '../src/catalog/types.ts';
import { parseEnv } from '../src/config.ts';
import { buildDeps, closeDeps } from '../src/deps.ts';
import { SCAN_CAP } from '../src/store/row-scan.ts';
import {
  type Audit,
  auditLine,
  auditStore,
  builtServer,
  type Figures,
  fundedKey,
  line,
  load,
  machine,
  median,
  parseArgs,
  saveResults,
  serverNodeFlags,
  startChild,
  stopChild,
  summarise,
  writeBenchConfig,
} from './lib.ts';

const args = parseArgs(process.argv.slice(2));
const backend = args.get('backend') ?? 'sqlite';
if (backend !== 'sqlite' && backend !== 'postgres') throw new Error('--backend must be sqlite or postgres');
const seconds = Number(args.get('duration') ?? 4);
const rounds = Number(args.get('rounds') ?? 3);
const connections = Number(args.get('connections') ?? 16);
const largeRows = Number(args.get('rows') ?? 1_000_000);
const external = args.has('external');
if (external && backend !== 'postgres') throw new Error('--external needs --backend=postgres');
const DAYS = 250;
const DATASET = 'equities/stock-prices';

const dir = mkdtempSync(join(tmpdir(), 'tmd-data-'));
writeBenchConfig(dir);

const cleanups: (() => Promise<void>)[] = [];
/** A fresh database for one setup: a file, or a PostgreSQL database dropped after the run. */
async function databaseFor(name: string): Promise<{ url: string; env: Record<string, string> }> {
  if (backend === 'sqlite') return { url: join(dir, `${name}.sqlite`), env: {} };
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const db = `tmd_data_${name}_${Date.now().toString(36)}`;
  await admin.query(`CREATE DATABASE ${db}`);
  cleanups.push(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
  });
  const url = new URL(adminUrl);
  url.pathname = `/${db}`;
  return {
    url: url.toString(),
    env: {
      REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: `${db}:`,
    },
  };
}

const symbolOf = (n: number) => `S${String(n).padStart(5, '0')}`;
const dayOf = (d: number) =>
  new Date(Date.UTC(2025, 0, 1) + Math.floor((d * 365) / DAYS) * 86_400_000).toISOString().slice(0, 10);

/** `rows` rows, symbol after symbol, 250 days each, in batches (never all in memory). */
async function* generate(rows: number): AsyncGenerator<Row[]> {
  let batch: Row[] = [];
  for (let i = 0; i < rows; i++) {
    const symbol = Math.floor(i / DAYS);
    const day = i % DAYS;
    const close = Math.round((50 + (symbol % 400) + Math.sin(day / 9) * 5) * 100) / 100;
    batch.push({
      symbol: symbolOf(symbol),
      exchange: symbol % 3 === 0 ? 'NYSE' : 'NASDAQ',
      mic: symbol % 3 === 0 ? 'XNYS' : 'XNAS',
      date: dayOf(day),
      open: close - 0.5,
      high: close + 1,
      low: close - 1,
      close,
      adj_close: close,
      vwap: close + 0.1,
      volume: 1_000_000 + ((symbol * 7919 + day * 104_729) % 5_000_000),
      currency: 'USD',
    });
    if (batch.length === 5000) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** The operator's own table of `rows` prices (loaded with COPY) and a role that may only read it. */
async function operatorTable(rows: number): Promise<string> {
  const { url } = await databaseFor('operator');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const role = `tmd_bench_reader_${Date.now().toString(36)}`;
  await client.query(`CREATE TABLE prices (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    symbol text, exchange text, mic text, date date, open float8, high float8, low float8, close float8,
    adj_close float8, vwap float8, volume bigint, currency text)`);
  const columns = [
    'symbol',
    'exchange',
    'mic',
    'date',
    'open',
    'high',
    'low',
    'close',
    'adj_close',
    'vwap',
    'volume',
    'currency',
  ];
  const copy = client.query(copyFrom(`COPY prices (${columns.join(', ')}) FROM STDIN (FORMAT csv)`));
  for await (const batch of generate(rows))
    if (!copy.write(batch.map((row) => `${csvRecord(row, columns)}\n`).join('')))
      await new Promise((resolve) => copy.once('drain', resolve));
  await new Promise((resolve, reject) => copy.end(resolve).once('error', reject));
  for (const lead of ['symbol', 'exchange', 'mic'])
    await client.query(`CREATE INDEX ON prices (${lead}, date, id)`);
  await client.query('CREATE INDEX ON prices (date, id)');
  await client.query('ANALYZE prices');
  await client.query(`CREATE ROLE ${role} LOGIN; GRANT SELECT ON prices TO ${role}`);
  await client.end();
  // After the operator database is dropped (cleanups run in order): its role.
  cleanups.push(async () => {
    const admin = new pg.Client({
      connectionString: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    });
    await admin.connect();
    await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.end();
  });
  const reader = new URL(url);
  reader.username = role;
  return reader.toString();
}

interface Setup {
  id: 'small' | 'large' | 'external';
  rows: number;
  env: Record<string, string>;
  databaseUrl: string;
  keys: string[];
}

async function provision(id: Setup['id'], rows: number): Promise<Setup> {
  const database = await databaseFor(id);
  let configFile = join(dir, 'service.json');
  const operator: Record<string, string> = {};
  if (id === 'external') {
    const started = Date.now();
    operator.TMD_BENCH_OPERATOR_URL = await operatorTable(rows);
    console.log(
      `  operator table: ${rows.toLocaleString('en')} rows copied and indexed in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    const config = JSON.parse(readFileSync(configFile, 'utf8'));
    config.external_datasets = [
      {
        dataset: DATASET,
        url_env: 'TMD_BENCH_OPERATOR_URL',
        relation: 'prices',
        id_column: 'id',
        provenance: 'bench',
      },
    ];
    configFile = join(dir, 'service-external.json');
    writeFileSync(configFile, JSON.stringify(config));
  }
  const env = {
    CONFIG_FILE: configFile,
    ...operator,
    ...process.env,
    ...database.env,
    DATABASE_URL: database.url,
    DATA_DIR: join(dir, id),
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0',
    HOST: '127.0.0.1',
    PORT: '0',
  } as Record<string, string>;
  const deps = await buildDeps({ env: parseEnv(env), environ: env });
  const entry = deps.reads.resolve(DATASET);
  const started = Date.now();
  if (id !== 'external')
    await deps.store.loadRowsStream(
      DATASET,
      entry.dataset.time_field,
      generate(rows),
      'import',
      entry.columns,
    );
  const loadedIn = (Date.now() - started) / 1000;
  const keys: string[] = [];
  for (const n of [1, 2]) keys.push((await fundedKey(deps, `data${n}@example.com`)).secret);
  await closeDeps(deps);
  if (id !== 'external')
    console.log(`  ${id}: ${rows.toLocaleString('en')} rows loaded in ${loadedIn.toFixed(1)} s`);
  return { id, rows, env, databaseUrl: database.url, keys };
}

const middle = (rows: number) => symbolOf(Math.floor(rows / DAYS / 2));
const reads = (rows: number): { id: string; name: string; query: string }[] => [
  { id: 'newest', name: 'newest page', query: 'limit=100' },
  { id: 'entity', name: 'one symbol', query: `symbol=${middle(rows)}&limit=100` },
  {
    id: 'range',
    name: 'one symbol, one quarter',
    query: `symbol=${middle(rows)}&from=2025-04-01&to=2025-06-30&limit=100`,
  },
  { id: 'absent', name: 'a symbol with no rows', query: 'symbol=NOPE&limit=100' },
  {
    id: 'several',
    name: 'ten symbols',
    query: `symbol=${Array.from({ length: 10 }, (_, i) => symbolOf(i * 3)).join(',')}&limit=100`,
  },
  {
    id: 'unindexed',
    name: `a filter no index serves (${SCAN_CAP.toLocaleString('en')} rows examined)`,
    query: 'close=-1&limit=100',
  },
];

console.log(
  `data benchmark: ${DATASET}, ${backend === 'postgres' ? 'PostgreSQL + Redis' : 'SQLite (WAL)'}, ${connections} connections, ${rounds} interleaved rounds of ${seconds} s, medians`,
);
const setups = [await provision('small', 10_000), await provision('large', largeRows)];
if (external) setups.push(await provision('external', largeRows));
const services = [];
for (const setup of setups) {
  services.push({
    setup,
    service: await startChild(builtServer('serve-service'), setup.env, serverNodeFlags(args)),
  });
}

const measured = services.flatMap(({ setup, service }) =>
  reads(setup.rows).map((read) => ({
    id: `${setup.id}:${read.id}`,
    name: `${setup.id}: ${read.name}`,
    read,
    setup,
    options: {
      url: `http://127.0.0.1:${service.port}/api/v1/data/${DATASET}?${read.query}`,
      headers: { authorization: `Bearer ${setup.keys[0]}` },
      pid: service.child.pid,
      connections,
      seconds,
      servers: backend === 'postgres',
    },
    runs: [] as Figures[],
  })),
);
const audits: Audit[] = [];
const isolation: { worst: Figures; other: Figures }[] = [];
const large = services[1] as (typeof services)[number];
for (let round = 0; round < rounds; round++) {
  for (const m of measured) {
    m.runs.push(await load(m.options));
    const audit = await auditStore(m.setup.databaseUrl, `${m.id} (round ${round + 1})`);
    audits.push(audit);
    if (!audit.clean) console.log(auditLine(audit));
  }
  // 16 connections of worst reads from one key; another key reads one page at a time meanwhile.
  const base = `http://127.0.0.1:${large.service.port}/api/v1/data/${DATASET}`;
  const [worst, other] = await Promise.all([
    load({
      url: `${base}?close=-1&limit=100`,
      headers: { authorization: `Bearer ${large.setup.keys[0]}` },
      pid: large.service.child.pid,
      connections: 16,
      seconds,
    }),
    load({
      url: `${base}?symbol=${middle(large.setup.rows)}&limit=10`,
      headers: { authorization: `Bearer ${large.setup.keys[1]}` },
      connections: 1,
      seconds,
    }),
  ]);
  isolation.push({ worst, other });
}
for (const { service } of services) await stopChild(service.child);

const figures = Object.fromEntries(measured.map((m) => [m.id, summarise(m.runs)])) as Record<string, Figures>;
/** CPU per read: the service's, and on PostgreSQL + Redis theirs too (a scan's work is in the database). */
const cpu = (id: string) => {
  const f = figures[id];
  if (!f || f.cpuUs === null) return null;
  return f.cpuUs + (f.postgresUs ?? 0) + (f.redisUs ?? 0);
};
const ratio = (x: number | null, y: number | null) => (x === null || y === null ? null : x / y);
const times = (v: number | null) => (v === null ? '-' : `${v.toFixed(2)} ×`);
console.log('each read (service CPU per request):');
for (const m of measured) {
  const f = figures[m.id] as Figures;
  console.log(`  ${line(m.name, f)}`);
  if (backend === 'postgres')
    console.log(
      `    cpu per request, µs: postgres ${f.postgresUs?.toFixed(0)}, redis ${f.redisUs?.toFixed(0)}`,
    );
}

const indexed = ['entity', 'range', 'absent', 'several'];
const ratios: Record<string, number | null> = {};
for (const id of indexed) {
  ratios[`${id}/newest, large`] = ratio(cpu(`large:${id}`), cpu('large:newest'));
  ratios[`${id}, large/small`] = ratio(cpu(`large:${id}`), cpu(`small:${id}`));
}
const largeCpus = reads(largeRows)
  .map((r) => cpu(`large:${r.id}`))
  .filter((v): v is number => v !== null);
ratios['worst/median, large'] = largeCpus.length ? Math.max(...largeCpus) / median(largeCpus) : null;
if (external)
  for (const id of indexed)
    ratios[`${id}, external/large`] = ratio(cpu(`external:${id}`), cpu(`large:${id}`));
const otherP99 = median(isolation.map((i) => i.other.p99));
console.log(
  `targets (CPU per read${backend === 'postgres' ? ' of the service, PostgreSQL and Redis' : ''}):`,
);
for (const id of indexed) {
  console.log(
    `  ${id.padEnd(8)} large = newest × ${times(ratios[`${id}/newest, large`] ?? null)} (target <= 2 ×); large = small × ${times(ratios[`${id}, large/small`] ?? null)} (target <= 1.3 ×)`,
  );
}
console.log(`  worst read = median × ${times(ratios['worst/median, large'] ?? null)} (target <= 10 ×)`);
if (external)
  console.log(
    `  one symbol from the operator's table = stored × ${times(ratios['entity, external/large'] ?? null)} (target <= 1.5 ×)`,
  );
console.log(
  `  another key's p99 while 16 worst reads run: ${otherP99} ms (target < 50 ms; rounds: ${isolation.map((i) => i.other.p99).join(', ')} ms; worst reads served ${isolation.map((i) => i.worst.rps.toFixed(0)).join(', ')} /s)`,
);
const dirty = audits.filter((a) => !a.clean).length;
console.log(
  dirty === 0
    ? `ledger audits: ${audits.length} (after every run), all clean`
    : `warning: ${dirty} of ${audits.length} ledger audits found mismatches`,
);
// A run with --external is a comparison of its own: it leaves the stored-data tables as they were.
saveResults(external ? 'data-external' : `data-${backend}`, {
  measuredAt: new Date().toISOString(),
  machine: machine(),
  options: {
    backend,
    dataset: DATASET,
    rows: { small: 10_000, large: largeRows, ...(external ? { external: largeRows } : {}) },
    connections,
    rounds,
    seconds,
    scanCap: SCAN_CAP,
  },
  reads: measured.map((m) => ({
    id: m.id,
    name: m.name,
    query: m.read.query,
    figures: figures[m.id],
    runs: m.runs,
  })),
  ratios,
  isolation: { otherP99, runs: isolation },
  audit: { count: audits.length, clean: dirty === 0 },
});
console.log('results: bench/results/latest.json (npm run bench:docs puts them in docs/benchmarks.md)');
for (const cleanup of cleanups) await cleanup();
rmSync(dir, { recursive: true, force: true });
