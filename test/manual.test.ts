/** The manual at /manual/: docs/ as HTML, and every problem type resolving to its code's anchor. */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { loadServiceFile, parseEnv } from '../src/config.ts';
import { buildDeps, closeDeps, type Deps } from '../src/deps.ts';
import { AppError, type ErrorCode, errorCatalogue, toProblem } from '../src/errors.ts';
import { headingId } from '../src/http/routes/manual.ts';

const codes = Object.keys(errorCatalogue) as ErrorCode[];
let dir: string;
let deps: Deps;
let app: FastifyInstance;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tmd-manual-'));
  const env = parseEnv({
    DATABASE_URL: join(dir, 'tmd.sqlite'),
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
  });
  deps = await buildDeps({ env, config: loadServiceFile('config/service.json') });
  app = await buildApp(deps, { logger: false });
});
after(async () => {
  await app.close();
  await closeDeps(deps);
  rmSync(dir, { recursive: true, force: true });
});

test('every code of the error catalogue has its own heading in docs/errors.md', () => {
  const markdown = readFileSync('docs/errors.md', 'utf8');
  const anchors = [...markdown.matchAll(/^#{2,6} (.+)$/gm)].map((m) =>
    headingId((m[1] as string).replace(/`/g, '')),
  );
  for (const code of codes) assert.ok(anchors.includes(code), `docs/errors.md has no heading for ${code}`);
});

test("a problem's type is the relative address of its code's anchor in the manual", () => {
  for (const code of codes) {
    assert.equal(toProblem(new AppError(code, 'x'), 'req_1').type, `/manual/errors#${code}`);
  }
});

test('GET /manual/errors is HTML with an element whose id is each code, under a strict policy', async () => {
  const res = await app.inject({ method: 'GET', url: '/manual/errors' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  for (const code of codes) assert.ok(res.body.includes(`id="${code}"`), `no id="${code}"`);
  const policy = String(res.headers['content-security-policy']);
  assert.match(policy, /default-src 'none'/);
  assert.doesNotMatch(policy, /script-src|unsafe-inline/);
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
});

test("a problem's type resolves, against the response's URL, to a served page with that anchor", async () => {
  const res = await app.inject({ method: 'GET', url: '/api/v1/data/no/such-dataset' });
  const problem = res.json();
  const resolved = new URL(problem.type, 'http://tmd.test/api/v1/data/no/such-dataset');
  assert.equal(resolved.pathname, '/manual/errors');
  const page = await app.inject({ method: 'GET', url: resolved.pathname });
  assert.equal(page.statusCode, 200);
  assert.ok(page.body.includes(`id="${resolved.hash.slice(1)}"`));
});

test('GET /manual/ lists every page of docs/, and each page is served as HTML', async () => {
  const pages = readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => f.slice(0, -3));
  const index = await app.inject({ method: 'GET', url: '/manual/' });
  assert.equal(index.statusCode, 200);
  for (const name of pages) {
    assert.ok(index.body.includes(`href="/manual/${name}"`), `index lacks ${name}`);
    const res = await app.inject({ method: 'GET', url: `/manual/${name}` });
    assert.equal(res.statusCode, 200, name);
    assert.match(res.body, /^<!doctype html>/);
    assert.doesNotMatch(res.body, /<script/i);
  }
  assert.equal((await app.inject({ method: 'GET', url: '/manual' })).statusCode, 200);
});

test('links between pages point into the manual', async () => {
  const res = await app.inject({ method: 'GET', url: '/manual/errors' });
  assert.match(res.body, /href="\/manual\/api#credentials"/);
  assert.match(res.body, /href="#login_throttled"/);
  assert.doesNotMatch(res.body, /href="[a-z-]+\.md/);
});

test('an unknown page, or a path that tries to leave the docs folder, is a 404 problem', async () => {
  for (const url of [
    '/manual/no-such-page',
    '/manual/..%2Fpackage.json',
    '/manual/..%2F..%2Fetc%2Fpasswd',
    '/manual/README',
    '/manual/.env',
  ]) {
    const res = await app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 404, url);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8', url);
    assert.equal(res.json().code, 'not_found', url);
    assert.equal(res.json().type, '/manual/errors#not_found', url);
  }
  // Dot segments are resolved by the router before any route sees them: never a file outside docs/.
  for (const url of ['/manual/../package.json', '/manual/%2E%2E/package.json', '/manual/%2E%2E']) {
    const res = await app.inject({ method: 'GET', url });
    assert.notEqual(res.statusCode, 200, url);
    assert.doesNotMatch(res.body, /token-metered-data"/, url);
  }
});
