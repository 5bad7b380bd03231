/** Recipes: listed free, run once-charged as the sum of their reads. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DOW30, tonightWindow } from '../src/domain/recipes.ts';
import {
  assertLedgerBalanced,
  bearer,
  publicTestKey,
  sandboxKey,
  startServer,
  type TestServer,
} from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await assertLedgerBalanced(server);
  await server.close();
});

test('the recipe list is free and names what each reads and costs', async () => {
  const res = await server.request('GET', '/api/v1/recipes');
  assert.equal(res.status, 200);
  const names = res.json.data.map((r: { name: string }) => r.name);
  assert.deepEqual(names, ['dow30-sandbox-smoke', 'calendar-tonight']);
  for (const r of res.json.data) {
    assert.equal(r.list_cost, 2);
    assert.equal(r.p0, true);
  }
});

test('dow30-sandbox-smoke gives the latest close and change of all 30 constituents for 2 tokens', async () => {
  const key = await sandboxKey(server);
  const res = await server.request('GET', '/api/v1/recipes/dow30-sandbox-smoke', { headers: bearer(key) });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.meta.recipe, 'dow30-sandbox-smoke');
  assert.equal(res.json.meta.count, 30);
  assert.deepEqual(
    res.json.data.map((c: { symbol: string }) => c.symbol),
    [...DOW30],
  );
  for (const c of res.json.data) {
    assert.equal(typeof c.close, 'number', c.symbol);
    assert.equal(typeof c.previous_close, 'number', c.symbol);
    assert.equal(c.change, Math.round((c.close - c.previous_close) * 100) / 100);
  }
  assert.equal(res.headers.get('x-token-cost'), '2');
  assert.equal(res.headers.get('x-credits-remaining'), '2498');
});

test('calendar-tonight lists events from now to 06:00 next morning in the given zone', async () => {
  const { key } = await publicTestKey(server);
  const res = await server.request('GET', '/api/v1/recipes/calendar-tonight?tz=Europe/Berlin', {
    headers: bearer(key),
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.meta.tz, 'Europe/Berlin');
  // 2026-11-21T15:00Z is 16:00 in Berlin; the window ends at 06:00 Berlin (05:00Z) the next day.
  assert.equal(res.json.meta.from, '2026-11-21T15:00:00.000Z');
  assert.equal(res.json.meta.until, '2026-11-22T05:00:00.000Z');
  assert.ok(res.json.meta.count > 0);
  assert.equal(res.json.meta.count, res.json.data.length);
  assert.equal(res.headers.get('x-request-tokens'), '0', 'public-test: notional');
  assert.equal(res.headers.get('x-token-cost'), '2');
  const bad = await server.request('GET', '/api/v1/recipes/calendar-tonight?tz=Mars/Olympus', {
    headers: bearer(key),
  });
  assert.equal(bad.status, 400);
  const unknown = await server.request('GET', '/api/v1/recipes/nope', { headers: bearer(key) });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.json.code, 'recipe_not_found');
});

test('the tonight window handles the early morning and daylight-saving changes', () => {
  // 03:00 New York on 2026-03-08 (the spring-forward day) -> until 06:00 EDT the same morning = 10:00Z.
  assert.equal(
    new Date(tonightWindow(Date.parse('2026-03-08T08:00:00Z'), 'America/New_York').until).toISOString(),
    '2026-03-08T10:00:00.000Z',
  );
  // 22:00 New York on 2026-10-31 -> 06:00 EST on 2026-11-01 = 11:00Z.
  assert.equal(
    new Date(tonightWindow(Date.parse('2026-11-01T02:00:00Z'), 'America/New_York').until).toISOString(),
    '2026-11-01T11:00:00.000Z',
  );
});

test('a parameter the recipe does not take is a 400 that burns nothing', async () => {
  const key = await sandboxKey(server);
  const before = (await server.request('GET', '/api/v1/me', { headers: bearer(key) })).json.balance;
  const res = await server.request('GET', '/api/v1/recipes/dow30-sandbox-smoke?tz=Europe/London', {
    headers: bearer(key),
  });
  assert.equal(res.status, 400, res.text);
  assert.equal(res.json.code, 'invalid_request');
  assert.equal(res.json.errors[0].path, 'tz');
  assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(key) })).json.balance, before);
});
