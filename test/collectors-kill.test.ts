/**
 * A collector killed with SIGKILL mid-backfill, then run again, ends with the rows of a run that was
 * never interrupted, on SQLite and on PostgreSQL. `tmd collect nyfed --backfill` runs as its own process
 * (as an operator runs it) against a replay of the NY Fed's recorded answers; the replay holds a chosen
 * request open (the process is killed while it waits for a source) or answers it and has the process
 * killed at once (while it stores the chunk), several times over one database, before a last run ends.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freshDatabase, type TestDatabase } from './helpers/backends.ts';
import { recorded, USER_AGENT } from './helpers/replay.ts';
import { startServer, type TestServer } from './helpers/server.ts';

const RECORDINGS: Record<string, string> = {
  '/api/rates/secured/sofr/search.json': 'nyfed/sofr_search_2024-06-01_2024-06-06.json',
  '/api/rates/unsecured/effr/search.json': 'nyfed/effr_search_2023-01-01_2023-06-06.json',
  '/api/rates/unsecured/obfr/search.json': 'nyfed/obfr_search_2024-06-01_2024-06-06.json',
};
const DATASETS = ['macro/nyfed-sofr-series', 'macro/nyfed-effr-series', 'macro/nyfed-obfr-series'];

/** What the next request of a run should meet: held open, or answered and then the process killed. */
type Trap = { at: number; mode: 'hold' | 'answer-then-kill'; hit: () => void } | null;

/** The recorded rates inside the asked window, as the NY Fed answers a date-window search. */
function window(url: URL): string | null {
  const file = RECORDINGS[url.pathname];
  if (!file) return null;
  const from = url.searchParams.get('startDate') ?? '';
  const to = url.searchParams.get('endDate') ?? '9999';
  const { refRates } = JSON.parse(recorded(file)) as { refRates: { effectiveDate: string }[] };
  return JSON.stringify({
    refRates: refRates.filter((r) => r.effectiveDate >= from && r.effectiveDate <= to),
  });
}

const replay = {
  base: '',
  /** Requests of the current run, in order. */
  seen: [] as string[],
  trap: null as Trap,
  held: [] as ServerResponse[],
};
const server = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://replay');
  replay.seen.push(`${url.pathname}${url.search}`);
  const trap = replay.trap;
  if (trap && replay.seen.length === trap.at && trap.mode === 'hold') {
    replay.held.push(response);
    trap.hit();
    return;
  }
  const body = window(url);
  response.writeHead(body === null ? 404 : 200, { 'content-type': 'application/json' });
  response.end(body ?? '{}');
  if (trap && replay.seen.length === trap.at) trap.hit();
});
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  replay.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  for (const response of replay.held) response.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function service(env: Record<string, string>): Promise<TestServer> {
  const started = await startServer({
    env,
    config: (config) => {
      config.collectors = {
        user_agent: USER_AGENT,
        sources: {
          nyfed: {
            enabled: false,
            base_url: replay.base,
            per_second: 10,
            options: { rates: ['sofr', 'effr', 'obfr'] },
          },
        },
      };
    },
  });
  writeFileSync(join(started.dir, 'service.json'), JSON.stringify(started.deps.config));
  return started;
}

/** `tmd collect nyfed --backfill` in its own process, over the service's database. */
function collect(target: TestServer, databaseUrl: string): ChildProcess {
  return spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', 'bin/tmd.ts', 'collect', 'nyfed', '--backfill', '--json'],
    {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        DATA_DIR: target.dir,
        CONFIG_FILE: join(target.dir, 'service.json'),
        JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
        LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: string | null; out: string }> {
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, out })));
}

/** A run killed with SIGKILL at its `at`-th request; the requests it made. */
async function killedRun(
  target: TestServer,
  databaseUrl: string,
  at: number,
  mode: 'hold' | 'answer-then-kill',
) {
  replay.seen = [];
  const child = collect(target, databaseUrl);
  const done = exited(child);
  await new Promise<void>((hit, fail) => {
    replay.trap = { at, mode, hit };
    done.then((end) => fail(new Error(`the run ended before request ${at}: ${JSON.stringify(end)}`)));
  });
  child.kill('SIGKILL');
  const end = await done;
  replay.trap = null;
  assert.equal(end.signal, 'SIGKILL', end.out);
  return [...replay.seen];
}

async function wholeRun(target: TestServer, databaseUrl: string) {
  replay.seen = [];
  const end = await exited(collect(target, databaseUrl));
  assert.equal(end.code, 0, end.out);
  const run = JSON.parse(end.out) as { outcome: string; rows_new: number };
  assert.equal(run.outcome, 'ok', end.out);
  return { run, requests: [...replay.seen] };
}

async function rowsOf(target: TestServer): Promise<Record<string, unknown[]>> {
  const rows: Record<string, unknown[]> = {};
  for (const dataset of DATASETS)
    rows[dataset] = (
      await target.deps.datasets.queryRows({ dataset, filters: {}, descending: false, limit: 1000 })
    ).rows.map((r) => r.json);
  return rows;
}

/** A service on its own database (PostgreSQL when a URL is given, else its SQLite file). */
async function serviceOn(databaseUrl?: string): Promise<{ target: TestServer; url: string }> {
  const target = await service(databaseUrl ? { DATABASE_URL: databaseUrl } : {});
  return { target, url: databaseUrl ?? join(target.dir, 'tmd.sqlite') };
}

async function killAndResume(wholeUrl?: string, brokenUrl?: string) {
  const { target: whole, url: wholeDb } = await serviceOn(wholeUrl);
  const { target: broken, url: brokenDb } = await serviceOn(brokenUrl);
  try {
    const unbroken = await wholeRun(whole, wholeDb);
    const expected = await rowsOf(whole);
    assert.deepEqual(
      DATASETS.map((d) => expected[d]?.length),
      [4, 108, 4],
      'the recorded rates, every one',
    );
    const total = unbroken.requests.length;
    assert.ok(total > 20, `a backfill of years in windows: ${total} requests`);

    // Killed while waiting for a source, and while storing an answer, at points across the run; each
    // run after a kill starts where the last one's stored chunks end.
    const kills: [number, 'hold' | 'answer-then-kill'][] = [
      [3, 'hold'],
      [Math.floor(total / 3), 'answer-then-kill'],
      [Math.floor(total / 2), 'hold'],
      [4, 'answer-then-kill'],
      [2, 'hold'],
    ];
    const asked: string[][] = [];
    for (const [at, mode] of kills) asked.push(await killedRun(broken, brokenDb, at, mode));
    const resumed = await wholeRun(broken, brokenDb);
    assert.deepEqual(await rowsOf(broken), expected, 'the rows of a run never interrupted');
    // SOFR's 2024 rates were stored before the later kills: the runs after them asked SOFR from five
    // days before its last stored day, not from its first day (2018-04-02) again.
    assert.ok(
      resumed.requests.every((r) => !r.includes('sofr/search.json?startDate=2018-04-02')),
      resumed.requests.join('\n'),
    );
    assert.ok(
      resumed.requests.length < total,
      `${resumed.requests.length} requests after the kills, ${total} for a whole run`,
    );
    assert.ok(asked.every((a, n) => a.length === kills[n]?.[0]));
    const state = await broken.deps.datasets.collectorState('nyfed');
    assert.equal(JSON.parse(state?.cursor ?? '{}').obfr, '2024-06-06');
    const log = await broken.deps.datasets.listCollectionRuns(50);
    assert.deepEqual(
      log.map((r) => r.outcome),
      ['ok'],
      'a killed run leaves no record: only the run that ended is logged',
    );
  } finally {
    await whole.close();
    await broken.close();
  }
}

test('SQLite: a backfill killed five times with SIGKILL resumes and ends as an unbroken run', async () => {
  await killAndResume();
});

const probe = await freshDatabase();
test('PostgreSQL: a backfill killed five times with SIGKILL resumes and ends as an unbroken run', {
  skip: 'skip' in probe ? probe.skip : false,
}, async () => {
  const whole = probe as TestDatabase;
  const broken = (await freshDatabase()) as TestDatabase;
  try {
    await killAndResume(whole.url, broken.url);
  } finally {
    await whole.drop();
    await broken.drop();
  }
});
