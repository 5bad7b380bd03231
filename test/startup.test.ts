/** Operator faults at start: environment values, the generated secret, a database another process holds. */
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { ConfigError, parseEnv } from '../src/config.ts';
import { buildDeps } from '../src/deps.ts';
import { bearer, startServer, walletAccount } from './helpers/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmd-startup-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('an environment variable set to nothing is unset; whole numbers take digits only', () => {
  const env = parseEnv({ PORT: '', SHUTDOWN_GRACE_MS: '', KEY_CACHE_TTL_MS: '', REDIS_URL: '' });
  assert.deepEqual(
    [env.PORT, env.SHUTDOWN_GRACE_MS, env.KEY_CACHE_TTL_MS, env.REDIS_URL],
    [3000, 10_000, 2000, undefined],
  );
  assert.equal(parseEnv({ PORT: '4267' }).PORT, 4267);
  for (const [name, value] of [
    ['PORT', '0x10ab'],
    ['PORT', '1e3'],
    ['REQUEST_TIMEOUT_MS', ' 5000'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['DATABASE_URL', 'postgress://db/tmd'],
    ['REDIS_URL', 'notaurl'],
  ]) {
    assert.throws(
      () => parseEnv({ [name as string]: value }),
      (error: Error) => error instanceof ConfigError && error.message.includes(name as string),
      `${name}=${value}`,
    );
  }
  assert.equal(parseEnv({ DATABASE_URL: 'postgresql://db/tmd' }).DATABASE_URL, 'postgresql://db/tmd');
  assert.equal(parseEnv({ DATABASE_URL: 'data/other.sqlite' }).DATABASE_URL, 'data/other.sqlite');
});

test('a jwt-secret file too short to be a secret stops the start, naming the file', async () => {
  const data = join(dir, 'short-secret');
  mkdirSync(data);
  writeFileSync(join(data, 'jwt-secret'), '');
  await assert.rejects(
    buildDeps({
      env: parseEnv({ DATA_DIR: data, DATABASE_URL: join(data, 'db.sqlite'), LOG_LEVEL: 'silent' }),
    }),
    (error: Error) => error instanceof ConfigError && /jwt-secret holds 0 bytes/.test(error.message),
  );
});

test('a start that fails past the environment prints one line, not a stack trace', async () => {
  const data = join(dir, 'bad-catalog');
  mkdirSync(data);
  writeFileSync(join(data, 'catalog.json'), '{ not json');
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', 'src/main.ts'],
      {
        env: {
          ...process.env,
          DATA_DIR: data,
          DATABASE_URL: join(data, 'db.sqlite'),
          CATALOG_FILE: join(data, 'catalog.json'),
          PORT: '0',
          LOG_LEVEL: 'silent',
        },
      },
      (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
    );
  });
  assert.notEqual(code, 0);
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, stderr);
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
});

test('a database another process holds past busy_timeout is a 503 with Retry-After, and nothing is served', async () => {
  const server = await startServer();
  try {
    const { key } = await walletAccount(server, 100);
    const path = server.deps.env.DATABASE_URL;
    const other = new DatabaseSync(path);
    other.exec('PRAGMA busy_timeout = 0');
    other.exec('BEGIN IMMEDIATE');
    try {
      const res = await server.request('GET', '/api/v1/data/equities/stock-prices?limit=1', {
        headers: bearer(key),
      });
      assert.equal(res.status, 503, res.text);
      assert.equal(res.json.code, 'service_unavailable');
      assert.equal(res.headers.get('retry-after'), '1');
      assert.equal(res.json.data, undefined);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    const again = await server.request('GET', '/api/v1/data/equities/stock-prices?limit=1', {
      headers: bearer(key),
    });
    assert.equal(again.status, 200, 'served once the other writer is done');
  } finally {
    await server.close();
  }
});

test('the build npm start runs starts without type stripping and serves the package files', async () => {
  // npm start runs dist/ (built by prepare and prestart): V8 needs no TypeScript stripper resident.
  execFileSync(process.execPath, ['scripts/build-server.mjs']);
  const data = join(dir, 'built');
  mkdirSync(data);
  const child = spawn(
    process.execPath,
    ['--no-experimental-strip-types', '--disable-warning=ExperimentalWarning', 'dist/src/main.js'],
    {
      env: {
        ...process.env,
        DATA_DIR: data,
        DATABASE_URL: join(data, 'db.sqlite'),
        PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    let out = '';
    let address: string | undefined;
    const exited = once(child, 'exit').then(([code]) => ({ code }));
    while (address === undefined) {
      const next = await Promise.race([once(child.stdout, 'data').then(([c]) => c as Buffer), exited]);
      if (!Buffer.isBuffer(next))
        assert.fail(`the built server exited (${next.code}) before listening:\n${out}`);
      out += next.toString();
      address = /"address":"(http:[^"]+)"/.exec(out)?.[1];
    }
    const ready = await fetch(`${address}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    const terminal = await fetch(`${address}/terminal/`, { headers: { accept: 'text/html' } });
    assert.equal(terminal.status, 200);
    assert.match(await terminal.text(), /<script type="module"/);
    const manual = await fetch(`${address}/manual/api`);
    assert.equal(manual.status, 200);
    assert.match(await manual.text(), /<h1/);
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  }
});
