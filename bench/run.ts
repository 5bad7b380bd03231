/**
 * npm run bench: requests/s, p50 and p99 of (a) a metered read with a wallet key through the real
 * service and (b) the same read through a bare Fastify route, each in its own process, measured in the
 * same run; prints a/b. Every acknowledged debit is committed before its response is sent (the debit
 * transaction commits before the handler returns).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { loadServiceFile, parseEnv } from '../src/config.ts';
import { buildDeps, closeDeps } from '../src/deps.ts';
import { newId } from '../src/domain/ids.ts';
import { tokensToMicros } from '../src/domain/money.ts';
import { utcMonth } from '../src/domain/pricing.ts';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const seconds = Number(args.get('duration') ?? 5);
const rounds = Number(args.get('rounds') ?? 3);
const connections = Number(args.get('connections') ?? 16);
const dataset = args.get('dataset') ?? 'equities/stock-prices';
const limit = Number(args.get('limit') ?? 100);

const dir = mkdtempSync(join(tmpdir(), 'tmd-bench-'));
// The limiter stays in the path; its limits are raised so the load is measured, not refused.
const config = loadServiceFile('config/service.json');
for (const tier of config.pricing.loyalty_tiers) tier.rate_limit = 1_000_000_000;
config.limits.wallet.concurrent = 10_000;
writeFileSync(join(dir, 'service.json'), JSON.stringify(config));
const baseEnv = {
  CONFIG_FILE: join(dir, 'service.json'),
  ...process.env,
  DATABASE_URL: join(dir, 'bench.sqlite'),
  DATA_DIR: dir,
  LOG_LEVEL: 'silent',
  JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0',
  HOST: '127.0.0.1',
  PORT: '0',
};

async function provision(): Promise<string> {
  const deps = await buildDeps({ env: parseEnv(baseEnv) });
  const now = Date.now();
  const account = await deps.store.createAccount(
    {
      id: newId('acc'),
      email: 'bench@example.com',
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
}

async function load(url: string, headers: Record<string, string>): Promise<Figures> {
  await autocannon({ url, headers, connections, duration: 1 }); // warm-up
  const result = await autocannon({ url, headers, connections, duration: seconds });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

function line(name: string, f: Figures): string {
  return `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(8)} req/s   p50 ${String(f.p50).padStart(4)} ms   p99 ${String(f.p99).padStart(4)} ms   non-2xx ${f.non2xx}`;
}

const median = (values: number[]) =>
  [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number;
function summarise(runs: Figures[]): Figures {
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
  };
}

const key = await provision();
const service = await startChild('bench/serve-service.ts');
const bare = await startChild('bench/serve-bare.ts');
const meteredUrl = `http://127.0.0.1:${service.port}/api/v1/data/${dataset}?limit=${limit}`;
const bareUrl = `http://127.0.0.1:${bare.port}/bare/${dataset}?limit=${limit}`;
// Interleaved rounds, medians reported: machine noise hits both sides alike.
const meteredRuns: Figures[] = [];
const bareRuns: Figures[] = [];
for (let round = 0; round < rounds; round++) {
  meteredRuns.push(await load(meteredUrl, { authorization: `Bearer ${key}` }));
  bareRuns.push(await load(bareUrl, {}));
}
service.child.kill('SIGTERM');
bare.child.kill('SIGTERM');
const metered = summarise(meteredRuns);
const baseline = summarise(bareRuns);

console.log(
  `benchmark: ${dataset}?limit=${limit}, ${connections} connections, ${rounds} interleaved rounds of ${seconds} s, medians; SQLite (WAL)`,
);
console.log(line('(a) metered read, wallet key', metered));
console.log(line('(b) bare Fastify route, same data', baseline));
console.log(`ratio a/b: ${(metered.rps / baseline.rps).toFixed(3)} (target >= 0.75)`);
if (metered.non2xx > 0) console.log('warning: the metered run had non-2xx responses');
rmSync(dir, { recursive: true, force: true });
