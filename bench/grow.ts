/**
 * npm run bench -- --grow: CPU per metered read as the data and the customers grow (SQLite). Three
 * databases, each served by its own service process and loaded in interleaved rounds:
 * - `10k rows`: the dataset holds 10,000 rows, 100 customers (keys and wallets) take turns;
 * - `1M rows`: the same with 1,000,000 rows;
 * - `100k keys`: 10,000 rows, 100,000 customers, every request the next customer's key (so each key is
 *   seen once in tens of seconds: its lookup misses the key cache, as a large, spread-out clientele's
 *   would).
 * It reports each one's service CPU per request, the change against `10k rows`, the service's largest
 * resident memory (VmRSS) under the load, and audits each ledger after every run.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { generateSampleRows } from '../src/catalog/sample-data.ts';
import { parseEnv } from '../src/config.ts';
import { buildDeps, closeDeps } from '../src/deps.ts';
import { newId } from '../src/domain/ids.ts';
import { newKey } from '../src/domain/keys.ts';
import { tokensToMicros } from '../src/domain/money.ts';
import { utcMonth } from '../src/domain/pricing.ts';
import {
  type Audit,
  auditLine,
  auditStore,
  builtServer,
  type Figures,
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

const args = parseArgs(process.argv.slice(2));
if ((args.get('backend') ?? 'sqlite') !== 'sqlite') throw new Error('--grow measures SQLite only');
const seconds = Number(args.get('duration') ?? 5);
const rounds = Number(args.get('rounds') ?? 3);
const connections = Number(args.get('connections') ?? 16);
const dataset = args.get('dataset') ?? 'equities/stock-prices';
const limit = Number(args.get('limit') ?? 100);
const smallRows = 10_000;
const largeRows = Number(args.get('rows') ?? 1_000_000);
const fewKeys = 100;
const manyKeys = Number(args.get('keys') ?? 100_000);

const dir = mkdtempSync(join(tmpdir(), 'tmd-grow-'));
writeBenchConfig(dir);

const envFor = (name: string) => ({
  CONFIG_FILE: join(dir, 'service.json'),
  ...process.env,
  DATABASE_URL: join(dir, `${name}.sqlite`),
  DATA_DIR: join(dir, name),
  LOG_LEVEL: 'silent',
  JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0',
  HOST: '127.0.0.1',
  PORT: '0',
});

/**
 * A database whose dataset holds `rows` rows (sample rows over as many days as it takes) and `keys`
 * customers, each an account with a funded wallet (its top-up in the ledger) and a live key, written
 * in one transaction. Returns the keys' secrets.
 */
async function provision(name: string, rows: number, keys: number): Promise<string[]> {
  const env = envFor(name);
  const deps = await buildDeps({ env: parseEnv(env) });
  const entry = deps.reads.resolve(dataset);
  const def = entry.dataset;
  const periods = Math.ceil(rows / def.sample.entities / (def.sample.per_period ?? 1));
  const generated = generateSampleRows({ ...def, sample: { ...def.sample, periods } }, Date.now()).slice(
    0,
    rows,
  );
  await deps.store.loadRows(def.key, def.time_field, generated, 'sample', entry.columns);
  await closeDeps(deps);

  const db = new DatabaseSync(env.DATABASE_URL);
  const now = Date.now();
  const month = utcMonth(now);
  const funds = tokensToMicros(1_000_000_000);
  const secrets: string[] = [];
  const wallet = db.prepare(
    'INSERT INTO wallets (id, account_id, balance_micros, burn_month, burn_month_micros) VALUES (?, ?, ?, ?, 0)',
  );
  const account = db.prepare(
    'INSERT INTO accounts (id, email, password_hash, wallet_id, created_at) VALUES (?, ?, NULL, ?, ?)',
  );
  const topup = db.prepare(
    "INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at) VALUES (?, 'topup', ?, ?, ?)",
  );
  const key = db.prepare(
    "INSERT INTO api_keys (id, kind, digest, display_prefix, name, account_id, wallet_id, created_at) VALUES (?, 'live', ?, ?, 'bench', ?, ?, ?)",
  );
  db.exec('BEGIN');
  for (let n = 0; n < keys; n++) {
    const accountId = newId('acc');
    const walletId = newId('wal');
    const fresh = newKey('live');
    wallet.run(walletId, accountId, funds, month);
    account.run(accountId, `grow${n}@example.com`, walletId, now);
    topup.run(walletId, funds, funds, now);
    key.run(newId('key'), fresh.digest, fresh.displayPrefix, accountId, walletId, now);
    secrets.push(fresh.secret);
  }
  db.exec('COMMIT');
  db.close();
  return secrets;
}

interface Setup {
  id: string;
  name: string;
  rows: number;
  keys: number;
}
const setups: Setup[] = [
  {
    id: 'rows-10k',
    name: `${smallRows.toLocaleString('en')} rows, ${fewKeys} keys`,
    rows: smallRows,
    keys: fewKeys,
  },
  {
    id: 'rows-1m',
    name: `${largeRows.toLocaleString('en')} rows, ${fewKeys} keys`,
    rows: largeRows,
    keys: fewKeys,
  },
  {
    id: 'keys-100k',
    name: `${smallRows.toLocaleString('en')} rows, ${manyKeys.toLocaleString('en')} keys`,
    rows: smallRows,
    keys: manyKeys,
  },
];

console.log(
  `growth benchmark: ${dataset}?limit=${limit}, ${connections} connections, ${rounds} interleaved rounds of ${seconds} s, medians; SQLite (WAL), in-process limits`,
);
const prepared = [];
for (const setup of setups) {
  const started = Date.now();
  const keys = await provision(setup.id, setup.rows, setup.keys);
  console.log(`  set up ${setup.name} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const service = await startChild(builtServer('serve-service'), envFor(setup.id), serverNodeFlags(args));
  prepared.push({ setup, keys, service });
}
// With many customers, the load runs over all of them (each key's lookup misses the key cache) and over
// 100 of them (a large table, a small active clientele).
const measured = prepared.flatMap((p) => {
  const all = { id: p.setup.id, name: p.setup.name, p, keys: p.keys, runs: [] as Figures[] };
  if (p.keys.length <= fewKeys) return [all];
  return [
    all,
    {
      ...all,
      id: `${p.setup.id}-active-100`,
      name: `${p.setup.name}, 100 of them active`,
      keys: p.keys.slice(0, fewKeys),
      runs: [] as Figures[],
    },
  ];
});
const audits: Audit[] = [];
for (let round = 0; round < rounds; round++) {
  for (const m of measured) {
    m.runs.push(
      await load({
        url: `http://127.0.0.1:${m.p.service.port}/api/v1/data/${dataset}?limit=${limit}`,
        headers: {},
        keys: m.keys,
        pid: m.p.service.child.pid,
        connections,
        seconds,
      }),
    );
    const audit = await auditStore(envFor(m.p.setup.id).DATABASE_URL, `${m.id} (round ${round + 1})`);
    audits.push(audit);
    if (!audit.clean) console.log(auditLine(audit));
  }
}
for (const p of prepared) await stopChild(p.service.child);

const base = summarise((measured[0] as (typeof measured)[number]).runs);
const results = measured.map((m) => {
  const f = summarise(m.runs);
  const change = f.cpuUs === null || base.cpuUs === null ? null : f.cpuUs / base.cpuUs - 1;
  return {
    id: m.id,
    name: m.name,
    rows: m.p.setup.rows,
    keys: m.keys.length,
    figures: f,
    change,
    runs: m.runs,
  };
});
console.log('service CPU per metered read as work grows (target: within 10 %; memory under 250 MB):');
for (const r of results) {
  const change =
    r.change === null
      ? ''
      : r.id === 'rows-10k'
        ? '   (the base)'
        : `   ${r.change >= 0 ? '+' : ''}${(r.change * 100).toFixed(1)} %`;
  console.log(`  ${line(r.name, r.figures)}${change}`);
  const cpus = r.runs.map((x) => x.cpuUs?.toFixed(0) ?? '-').join(', ');
  console.log(`    cpu per round, µs: ${cpus}`);
}
const dirty = audits.filter((a) => !a.clean).length;
console.log(
  dirty === 0
    ? `ledger audits: ${audits.length} (after every run), all clean`
    : `warning: ${dirty} of ${audits.length} ledger audits found mismatches`,
);
saveResults('grow', {
  measuredAt: new Date().toISOString(),
  machine: machine(),
  options: { dataset, limit, connections, rounds, seconds },
  results,
  audit: { count: audits.length, clean: dirty === 0 },
});
console.log('results: bench/results/latest.json (npm run bench:docs puts them in docs/benchmarks.md)');
rmSync(dir, { recursive: true, force: true });
