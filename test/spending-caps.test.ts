/** Spending caps per key (Partner): tokens per UTC day and month, 402 spending_cap_reached with reset_at. */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { adminRequest, type OperatorAccount, operatorAccount } from './helpers/operator.ts';
import { assertLedgerBalanced, bearer, sandboxKey, startServer, type TestServer } from './helpers/server.ts';

const COST5 = '/api/v1/data/cftc/legacy_futures-facts?limit=1';

let server: TestServer;
before(async () => {
  server = await startServer();
});
afterEach(() => assertLedgerBalanced(server));
after(() => server.close());

async function setOwnCaps(account: OperatorAccount, body: Record<string, unknown>, keyId = account.keyId) {
  return server.request('PATCH', `/api/v1/keys/${keyId}`, { headers: bearer(account.session), body });
}

describe('spending caps', () => {
  test('a daily cap admits reads up to it, then 402 spending_cap_reached until the next UTC day', async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    const set = await setOwnCaps(partner, { daily_tokens: 10 });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.json.spending_caps, { daily: '10', monthly: null });
    for (let i = 0; i < 2; i++) {
      assert.equal((await server.request('GET', COST5, { headers: bearer(partner.key) })).status, 200);
    }
    const refused = await server.request('GET', COST5, { headers: bearer(partner.key) });
    assert.equal(refused.status, 402);
    assert.match(refused.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.deepEqual(refused.json, {
      type: '/manual/errors#spending_cap_reached',
      title: 'Spending cap reached',
      status: 402,
      code: 'spending_cap_reached',
      detail:
        "This key's daily spending cap of 10 tokens is reached: it burned 10 today (UTC) and this request costs 5. The cap resets at 2026-11-22T00:00:00.000Z.",
      request_id: refused.headers.get('x-request-id'),
      period: 'day',
      cap_tokens: '10',
      spent_tokens: '10',
      required_tokens: '5',
      reset_at: '2026-11-22T00:00:00.000Z',
    });
    const burns = (await server.deps.store.listEntries(partner.walletId)).filter((e) => e.kind === 'burn');
    assert.equal(burns.length, 2, 'the refused read burned nothing');

    const session = await server.request('GET', COST5, { headers: bearer(partner.session) });
    assert.equal(session.status, 200, 'a cap is on the key, not on the account');

    server.clock.t = Date.parse('2026-11-22T00:00:00Z');
    const nextDay = await server.request('GET', COST5, { headers: bearer(partner.key) });
    assert.equal(nextDay.status, 200, nextDay.text);
    server.clock.t = Date.parse('2026-11-21T15:00:00Z');
  });

  test('a read that would pass the cap is refused even when the cap is not reached yet', async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    await setOwnCaps(partner, { daily_tokens: '7.5' });
    assert.equal((await server.request('GET', COST5, { headers: bearer(partner.key) })).status, 200);
    const refused = await server.request('GET', COST5, { headers: bearer(partner.key) });
    assert.equal(refused.status, 402);
    assert.equal(refused.json.spent_tokens, '5');
    const cheap = await server.request('GET', '/api/v1/data/maritime/vessel-positions?limit=1', {
      headers: bearer(partner.key),
    });
    assert.equal(cheap.status, 200, 'a 2-token read still fits under 7.5');
  });

  test('a monthly cap refuses until the first of the next month; clearing it (null) lifts it', async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    const set = await adminRequest(server, 'PUT', `/api/v1/admin/keys/${partner.keyId}/spending-caps`, {
      body: { daily_tokens: null, monthly_tokens: 12 },
    });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.json.spending_caps, { daily: null, monthly: '12' });
    assert.equal((await server.request('GET', COST5, { headers: bearer(partner.key) })).status, 200);
    server.clock.t = Date.parse('2026-11-28T09:00:00Z');
    assert.equal((await server.request('GET', COST5, { headers: bearer(partner.key) })).status, 200);
    const refused = await server.request('GET', COST5, { headers: bearer(partner.key) });
    assert.equal(refused.status, 402);
    assert.equal(refused.json.period, 'month');
    assert.equal(refused.json.reset_at, '2026-12-01T00:00:00.000Z');
    const cleared = await adminRequest(server, 'PUT', `/api/v1/admin/keys/${partner.keyId}/spending-caps`, {
      body: { daily_tokens: null, monthly_tokens: null },
    });
    assert.deepEqual(cleared.json.spending_caps, { daily: null, monthly: null });
    assert.equal((await server.request('GET', COST5, { headers: bearer(partner.key) })).status, 200);
    server.clock.t = Date.parse('2026-11-21T15:00:00Z');
  });

  test('when both caps are reached the later reset (the month) is reported', async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    await setOwnCaps(partner, { daily_tokens: 5, monthly_tokens: 5 });
    assert.equal((await server.request('GET', COST5, { headers: bearer(partner.key) })).status, 200);
    const refused = await server.request('GET', COST5, { headers: bearer(partner.key) });
    assert.equal(refused.json.period, 'month');
    assert.equal(refused.json.reset_at, '2026-12-01T00:00:00.000Z');
  });

  test('concurrent reads never take a key past its cap: 16 at once under a 25-token cap serve exactly 5', async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    await setOwnCaps(partner, { daily_tokens: 25 });
    const results = await Promise.all(
      Array.from({ length: 16 }, () => server.request('GET', COST5, { headers: bearer(partner.key) })),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 5);
    const refused = results.filter((r) => r.status !== 200);
    assert.equal(refused.length, 11);
    for (const r of refused) assert.equal(r.json.code, 'spending_cap_reached');
    const usage = await server.deps.store.listUsage({ keyId: partner.keyId }, null, 100);
    assert.equal(
      usage.reduce((sum, e) => sum + e.burnedMicros, 0n),
      25_000_000n,
    );
  });
});

describe('who sets caps', () => {
  test('an account without the Partner package cannot set caps itself: 403 forbidden', async () => {
    const pro = await operatorAccount(server, { pkg: 'pro' });
    const res = await setOwnCaps(pro, { daily_tokens: 10 });
    assert.equal(res.status, 403);
    assert.equal(res.json.code, 'forbidden');
    assert.equal(
      res.json.detail,
      'Spending caps per key come with the Partner package; an operator can assign it or set caps for you.',
    );
    const byOperator = await adminRequest(server, 'PUT', `/api/v1/admin/keys/${pro.keyId}/spending-caps`, {
      body: { daily_tokens: 10, monthly_tokens: null },
    });
    assert.equal(byOperator.status, 200, 'an operator may cap any live key');
  });

  test("another account's key is 404; keys other than live are 409; a key cannot set caps at all (403)", async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    const other = await operatorAccount(server, { pkg: 'partner' });
    const foreign = await setOwnCaps(partner, { daily_tokens: 10 }, other.keyId);
    assert.equal(foreign.status, 404);
    assert.equal(foreign.json.code, 'not_found');
    const withKey = await server.request('PATCH', `/api/v1/keys/${partner.keyId}`, {
      headers: bearer(partner.key),
      body: { daily_tokens: 10 },
    });
    assert.equal(withKey.status, 403);
    const sandbox = await sandboxKey(server);
    const sandboxId = (await server.request('GET', '/api/v1/me', { headers: bearer(sandbox) })).json
      .credential.key_id;
    const onSandbox = await adminRequest(server, 'PUT', `/api/v1/admin/keys/${sandboxId}/spending-caps`, {
      body: { daily_tokens: 10, monthly_tokens: null },
    });
    assert.equal(onSandbox.status, 409);
    assert.equal(onSandbox.json.code, 'conflict');
    const unknown = await adminRequest(server, 'PUT', '/api/v1/admin/keys/key_nothing/spending-caps', {
      body: { daily_tokens: 10, monthly_tokens: null },
    });
    assert.equal(unknown.status, 404);
  });

  test('a revoked key takes no caps: 409 conflict, by its account and by an operator', async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    const revoked = await server.request('DELETE', `/api/v1/keys/${partner.keyId}`, {
      headers: bearer(partner.session),
    });
    assert.equal(revoked.status, 200, revoked.text);
    const own = await setOwnCaps(partner, { daily_tokens: 7 });
    assert.equal(own.status, 409, own.text);
    assert.equal(own.json.code, 'conflict');
    const byOperator = await adminRequest(
      server,
      'PUT',
      `/api/v1/admin/keys/${partner.keyId}/spending-caps`,
      {
        body: { daily_tokens: 7, monthly_tokens: null },
      },
    );
    assert.equal(byOperator.status, 409);
    const key = await server.deps.store.getKey(partner.keyId);
    assert.equal(key?.dailyCapMicros, null, 'nothing changed');
  });

  test('a session creates a live key with no body at all', async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    const created = await server.request('POST', '/api/v1/keys', { headers: bearer(partner.session) });
    assert.equal(created.status, 201, created.text);
    assert.match(created.json.key, /^tmd_live_/);
  });

  test('the caps show in the key listing; an absent field leaves a cap as it was', async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    await setOwnCaps(partner, { daily_tokens: 10, monthly_tokens: 200 });
    const patched = await setOwnCaps(partner, { daily_tokens: null });
    assert.deepEqual(patched.json.spending_caps, { daily: null, monthly: '200' });
    const listed = await server.request('GET', '/api/v1/keys', { headers: bearer(partner.session) });
    assert.deepEqual(listed.json.data[0].spending_caps, { daily: null, monthly: '200' });
  });
});
