/**
 * `tmd` behaves like a command line: --version, help per command, a human answer on a terminal and JSON
 * with --json or in a pipe, and a streamed CSV import that shows progress and names rejected lines.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type CliIo, runCli } from '../src/tmd.ts';
import { startServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(() => server.close());

async function tmd(argv: string[], tty: Partial<Pick<CliIo, 'isTTY' | 'progress'>> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: {
      DATABASE_URL: join(server.dir, 'tmd.sqlite'),
      DATA_DIR: server.dir,
      JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
      LOG_LEVEL: 'silent',
    },
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    now: server.clock.now,
    ...tty,
  });
  return { code, stdout, stderr };
}

test('--version names the package version and the Node it runs on', async () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  for (const argv of [['--version'], ['version']]) {
    const res = await tmd(argv);
    assert.equal(res.code, 0);
    assert.equal(res.stdout, `tmd ${pkg.version} (node ${process.versions.node})\n`);
  }
});

test('help per command: tmd import --help shows import alone; an unknown command the whole usage', async () => {
  const importHelp = await tmd(['import', '--help']);
  assert.equal(importHelp.code, 0);
  assert.match(importHelp.stdout, /^Usage:\n {2}tmd import /);
  assert.doesNotMatch(importHelp.stdout, /tmd account/);
  assert.equal((await tmd(['help', 'key'])).stdout.match(/ {2}tmd key /g)?.length, 2);
  const all = await tmd(['nothing', '--help']);
  assert.match(all.stdout, /tmd account create/);
  assert.match(all.stdout, /tmd monthly-credit/);
});

test('on a terminal the answer is for a person; --json (or a pipe) gives JSON', async () => {
  const human = await tmd(['account', 'create', 'tty@example.com'], { isTTY: true });
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /^id\s+acc_/m);
  assert.match(human.stdout, /^email\s+tty@example\.com$/m);
  assert.throws(() => JSON.parse(human.stdout));
  const json = await tmd(['account', 'show', 'tty@example.com', '--json'], { isTTY: true });
  assert.equal(JSON.parse(json.stdout).email, 'tty@example.com');
  const piped = await tmd(['account', 'show', 'tty@example.com']);
  assert.equal(JSON.parse(piped.stdout).email, 'tty@example.com');
});

const header = 'series_id,h15_series,title,date,value\n';
const line = (i: number, value = '4.25') =>
  `DGS10,RIFLGFCY10_N.B,"Market yield, 10-year",${new Date(Date.UTC(2000, 0, 1) + i * 86_400_000).toISOString().slice(0, 10)},${value}\n`;

test('a CSV import streams the file, shows progress on a terminal, and loads every row', async () => {
  const file = join(server.dir, 'many.csv');
  writeFileSync(file, header + Array.from({ length: 120_000 }, (_, i) => line(i)).join(''));
  const res = await tmd(['import', 'macro/fed-h15-series', file], { progress: true });
  assert.equal(res.code, 0, res.stderr);
  // Told after the piece of the file (64 KB) that passes each 50,000 rows.
  assert.match(
    res.stderr,
    /\rtmd: read 50,\d{3} rows \([\d.]+ MB\), [\d,]+ rows\/s, [\d.]+ s\rtmd: read 10\d,\d{3} rows/,
  );
  assert.match(res.stderr, /read 120,000 rows/);
  assert.match(res.stderr, /\ntmd: loaded 120,000 rows in [\d.]+ s\n$/);
  assert.equal(JSON.parse(res.stdout).total_rows, 120_000);
  const quiet = await tmd(['import', 'macro/fed-h15-series', file, '--dry-run']);
  assert.equal(quiet.stderr, '', 'no progress when standard error is not a terminal');
  assert.equal(JSON.parse(quiet.stdout).rows, 120_000);
});

test('a bad row after many loaded batches refuses the whole file: the dataset keeps its rows', async () => {
  const good = join(server.dir, 'good.csv');
  writeFileSync(good, header + Array.from({ length: 30 }, (_, i) => line(i)).join(''));
  assert.equal((await tmd(['import', 'macro/fed-h15-series', good, '--replace'])).code, 0);
  const file = join(server.dir, 'late-bad.csv');
  const lines = Array.from({ length: 12_000 }, (_, i) => line(i, i === 11_000 ? 'n/a' : '4.25'));
  writeFileSync(file, header + lines.join(''));
  const res = await tmd(['import', 'macro/fed-h15-series', file]);
  assert.equal(res.code, 1);
  assert.match(res.stderr, /1 invalid value\(s\) in the file; nothing was imported/);
  assert.match(res.stderr, /line 11002: column "value" -> value \(number\): "n\/a" is not a number/);
  const source = await server.deps.store.datasetSource('macro/fed-h15-series');
  assert.equal(source?.rows, 30, 'the 10,000 rows of the batches before the bad one were rolled back');
});

test('rejected rows are named by the line they start on, multi-line cells counted', async () => {
  const file = join(server.dir, 'bad.csv');
  writeFileSync(
    file,
    `${header}${line(0)}\n${line(1, 'lots')}DGS10,RIFLGFCY10_N.B,"two\nlines",2000-01-03,x\n${line(3)}${line(4, '1.2.3')}`,
  );
  const res = await tmd(['import', 'macro/fed-h15-series', file]);
  assert.equal(res.code, 1);
  assert.match(res.stderr, /3 invalid value\(s\) in the file; nothing was imported/);
  assert.match(res.stderr, /line 4: column "value" -> value \(number\)/);
  assert.match(res.stderr, /line 5: column "value" -> value \(number\)/);
  assert.match(res.stderr, /line 8: column "value" -> value \(number\)/);
});
