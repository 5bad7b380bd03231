/**
 * What the bench modes share: arguments, the processes under load, the load itself, CPU and memory
 * from /proc, the ledger audit, and the results file the docs are regenerated from.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { loadServiceFile } from '../src/config.ts';
import { type Deps, isPostgresUrl } from '../src/deps.ts';
import { newId } from '../src/domain/ids.ts';
import { tokensToMicros } from '../src/domain/money.ts';
import { utcMonth } from '../src/domain/pricing.ts';
import type { Store } from '../src/store/port.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';

/** `--name=value` and `--name value`; a bare `--name` is `true`. */
export function parseArgs(argv: readonly string[]): Map<string, string> {
  return new Map(
    argv.flatMap((a, i) => {
      if (!a.startsWith('--')) return [];
      const at = a.indexOf('=');
      const [name, value] = at < 0 ? [a.slice(2), undefined] : [a.slice(2, at), a.slice(at + 1)];
      const next = argv[i + 1];
      return [[name, value ?? (next && !next.startsWith('--') ? next : 'true')] as [string, string]];
    }),
  );
}

/**
 * npm start's V8 flags by name (`max-semi-space-size` -> `8`, `no-allocation-site-pretenuring` -> ''),
 * read from package.json: the bench runs the service as it starts. Node's own warning switch is left out.
 */
function startV8Flags(): Map<string, string> {
  const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } };
  // The words between `node` and the script; V8 takes `_` and `-` alike in a flag's name.
  const words = scripts.start.split(/\s+/);
  const flags = words.slice(
    1,
    words.findIndex((w, i) => i > 0 && !w.startsWith('--')),
  );
  return new Map(
    flags
      .map((word) => /^--([\w-]+)(?:=(.*))?$/.exec(word))
      .filter((m): m is RegExpExecArray => m !== null && m[1] !== 'disable-warning')
      .map((m) => [(m[1] as string).replaceAll('_', '-'), m[2] ?? '']),
  );
}

/**
 * The Node flags a benchmarked server runs with: `npm start`'s V8 flags (`--semi-space=N` and
 * `--old-space=N` to change its heap sizes, `=default` for V8's own), `--node-flags="..."` to add V8
 * settings after them (a later flag wins: `--node-flags=--allocation-site-pretenuring` turns V8's
 * pretenuring back on), and `--cpu-prof=DIR` for each server to write a CPU profile there as it stops
 * (bench/profile.ts reads them).
 */
export function serverNodeFlags(args: Map<string, string>): string[] {
  const start = startV8Flags();
  for (const [option, flag] of [
    ['semi-space', 'max-semi-space-size'],
    ['old-space', 'max-old-space-size'],
  ] as const) {
    const size = args.get(option);
    if (size === 'default') start.delete(flag);
    else if (size !== undefined) {
      if (!/^\d+$/.test(size)) throw new Error(`--${option} takes megabytes or "default", not "${size}"`);
      start.set(flag, size);
    }
  }
  const flags = [...start].map(([flag, value]) => (value === '' ? `--${flag}` : `--${flag}=${value}`));
  flags.push(...(args.get('node-flags')?.split(' ').filter(Boolean) ?? []));
  const profileDir = args.get('cpu-prof');
  if (profileDir) flags.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
  return flags;
}

export interface Figures {
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
  /** The serving process's largest resident memory (VmRSS) seen during the measured run, MB. */
  rssMb: number | null;
}

/** CPU time (µs) a process has used so far, from /proc (Linux, 100 ticks a second); null elsewhere. */
export function cpuMicros(pid: number | undefined, withChildren = false): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // With its reaped children's time (cutime, cstime): PostgreSQL's backends come and go during a run,
    // and the postmaster then holds what an exited one used, so a sum over live processes never falls.
    const ticks =
      Number(fields[11]) + Number(fields[12]) + (withChildren ? Number(fields[13]) + Number(fields[14]) : 0);
    return Number.isFinite(ticks) ? ticks * 10_000 : null;
  } catch {
    return null;
  }
}

/** Resident memory of a process now (VmRSS), MB; null where /proc has no such line. */
export function rssMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
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
    total += cpuMicros(Number(pid), true) ?? 0;
  }
  return total;
}

let built = false;

/**
 * Builds the servers as `npm start` runs the service, compiled to JavaScript in dist/ (no type
 * stripping at run time), and returns the path of a bench server's build: 'serve-service' or 'serve-bare'.
 */
export function builtServer(name: 'serve-service' | 'serve-bare'): string {
  if (!built) {
    execFileSync(process.execPath, ['scripts/build-server.mjs'], { stdio: 'inherit' });
    built = true;
  }
  return `dist/bench/${name}.js`;
}

export async function startChild(
  script: string,
  env: NodeJS.ProcessEnv,
  execArgv: readonly string[] = [],
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...execArgv, script], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The port is the first line that is only digits (a request log may share the pipe); the rest of
  // the output is read and dropped, as a log collector would take it.
  const stdout = child.stdout as NodeJS.ReadableStream;
  let seen = '';
  for (;;) {
    const [chunk] = (await once(stdout, 'data')) as [Buffer];
    seen += chunk.toString();
    const port = seen.split('\n').find((l) => /^\d+$/.test(l.trim()));
    if (port !== undefined) {
      stdout.resume();
      return { child, port: Number(port) };
    }
  }
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

export interface LoadOptions {
  url: string;
  headers: Record<string, string>;
  method?: 'GET' | 'POST';
  body?: string;
  /** The serving process: its CPU and memory are measured. */
  pid?: number;
  connections: number;
  seconds: number;
  /** Several keys: each request takes the next one. */
  keys?: readonly string[];
  /** Also measure PostgreSQL's and Redis's CPU. */
  servers?: boolean;
}

export async function load(o: LoadOptions): Promise<Figures> {
  let turn = 0;
  const keys = o.keys ?? [];
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
  const options = {
    url: o.url,
    headers: o.headers,
    connections: o.connections,
    ...(o.method ? { method: o.method } : {}),
    ...(o.body !== undefined ? { body: o.body } : {}),
    ...rotate,
  };
  const warm = await autocannon({ ...options, duration: 1 });
  const serverCpu = () =>
    o.servers ? { postgres: cpuOfAll('postgres'), redis: cpuOfAll('redis-server') } : null;
  let peakRss = rssMb(o.pid);
  const sampler = setInterval(() => {
    const now = rssMb(o.pid);
    if (now !== null && (peakRss === null || now > peakRss)) peakRss = now;
  }, 250);
  const cpuBefore = cpuMicros(o.pid);
  const serversBefore = serverCpu();
  const clientBefore = process.cpuUsage();
  const result = await autocannon({ ...options, duration: o.seconds });
  const client = process.cpuUsage(clientBefore);
  const cpuAfter = cpuMicros(o.pid);
  const serversAfter = serverCpu();
  clearInterval(sampler);
  const perRequest = (before: number | null | undefined, after: number | null | undefined) =>
    before === null ||
    before === undefined ||
    after === null ||
    after === undefined ||
    result.requests.total === 0
      ? null
      : (after - before) / result.requests.total;
  return {
    postgresUs: perRequest(serversBefore?.postgres, serversAfter?.postgres),
    redisUs: perRequest(serversBefore?.redis, serversAfter?.redis),
    clientUs: (client.user + client.system) / Math.max(1, result.requests.total),
    cpuUs: perRequest(cpuBefore, cpuAfter),
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    ok: warm['2xx'] + result['2xx'],
    rssMb: peakRss,
  };
}

export const median = (values: number[]) =>
  [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number;
const medianOrNull = (values: (number | null)[]) =>
  values.some((v) => v === null) ? null : median(values as number[]);
const maxOrNull = (values: (number | null)[]) =>
  values.some((v) => v === null) ? null : Math.max(...(values as number[]));

/** Medians over rounds (CPU and latency), the most memory any round saw, every refusal counted. */
export function summarise(runs: Figures[]): Figures {
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
    rssMb: maxOrNull(runs.map((r) => r.rssMb)),
  };
}

export function line(name: string, f: Figures): string {
  const cpu = f.cpuUs === null ? '' : `   cpu ${f.cpuUs.toFixed(0).padStart(4)} µs/req`;
  const rss = f.rssMb === null ? '' : `   rss ${f.rssMb.toFixed(0)} MB`;
  return `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(8)} req/s   p50 ${String(f.p50).padStart(4)} ms   p99 ${String(f.p99).padStart(4)} ms   non-2xx ${f.non2xx}${cpu}${rss}`;
}

export interface Audit {
  after: string;
  clean: boolean;
  wallets: number;
  entries: number;
  mismatches: number;
}

/**
 * The ledger audit of the store the service writes to, through its own connection: every wallet's
 * balance equal to the sum of its entries, none negative.
 */
export async function auditStore(databaseUrl: string, after: string): Promise<Audit> {
  const store: Store = isPostgresUrl(databaseUrl)
    ? new PostgresStore(databaseUrl)
    : new SqliteStore(databaseUrl);
  try {
    const audit = await store.auditLedger();
    return {
      after,
      clean: audit.mismatches.length === 0,
      wallets: audit.wallets,
      entries: audit.entries,
      mismatches: audit.mismatches.length,
    };
  } finally {
    await store.close();
  }
}

export function auditLine(audit: Audit): string {
  return audit.clean
    ? `ledger audit after ${audit.after}: clean (${audit.wallets} wallets, ${audit.entries} entries)`
    : `warning: ledger audit after ${audit.after}: ${audit.mismatches} wallets whose balance is not the sum of their entries`;
}

export const RESULTS_FILE = 'bench/results/latest.json';

/** The machine a run measured on, recorded beside its figures. */
export function machine(): { cpus: number; cpuModel: string; node: string; platform: string } {
  const all = cpus();
  return {
    cpus: all.length,
    cpuModel: all[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

/** Replaces one section (sqlite, postgres, grow) of the results file, keeping the others. */
export function saveResults(section: string, value: unknown): void {
  mkdirSync('bench/results', { recursive: true });
  const all = existsSync(RESULTS_FILE)
    ? (JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as Record<string, unknown>)
    : {};
  all[section] = value;
  writeFileSync(RESULTS_FILE, `${JSON.stringify(all, null, 2)}\n`);
}

/**
 * The service file the benchmarks run with, written into `dir` as service.json: the limiter stays in
 * the path, its limits raised so that the load is measured, not refused.
 */
export function writeBenchConfig(dir: string): string {
  const config = loadServiceFile('config/service.json');
  for (const tier of config.pricing.loyalty_tiers) tier.rate_limit = 1_000_000_000;
  config.limits.wallet.concurrent = 10_000;
  const file = join(dir, 'service.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** A bench customer: an account, its wallet topped up with 1,000,000,000 tokens, and a live key. */
export async function fundedKey(
  deps: Deps,
  email: string,
  name = 'bench',
): Promise<{ secret: string; walletId: string }> {
  const now = Date.now();
  const account = await deps.store.createAccount(
    {
      id: newId('acc'),
      email,
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
  const issued = await deps.credentials.createLiveKey(account, name, null);
  return { secret: issued.secret, walletId: account.walletId };
}
