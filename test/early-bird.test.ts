/** early_bird (spec 5.3, DECISIONS): an operator-set grandfather for accounts older than the cohort cutoff. */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { adminRequest, freshIp, login, type OperatorAccount, operatorAccount } from './helpers/operator.ts';
import { assertLedgerBalanced, bearer, startServer, TestClock, type TestServer } from './helpers/server.ts';

const NON_P0 = '/api/v1/data/maritime/vessel-positions?limit=1';
const P0 = '/api/v1/data/cftc/legacy_futures-facts?limit=1';

let server: TestServer;
/** Accounts made in December 2025, before the shipped cohort cutoff (2026-01-01T00:00:00Z). */
let early: OperatorAccount;
let normal: OperatorAccount;

before(async () => {
  server = await startServer({ clock: new TestClock(Date.parse('2025-12-15T10:00:00Z')) });
  early = await operatorAccount(server);
  normal = await operatorAccount(server);
  const set = await adminRequest(server, 'PUT', `/api/v1/admin/accounts/${early.id}/early-bird`, {
    body: { early_bird: true },
  });
  assert.equal(set.status, 200, set.text);
  assert.equal(set.json.plan, 'early_bird');
  assert.equal(set.json.early_bird_eligible, true);
  server.clock.t = Date.parse('2026-11-21T15:00:00Z');
});
afterEach(() => assertLedgerBalanced(server));
after(() => server.close());

describe('early_bird sessions', () => {
  test('a research read with an empty wallet is served and recorded as grandfathered; the same read by a normal account is 402', async () => {
    const session = await login(server, early);
    const res = await server.request('GET', NON_P0, { headers: bearer(session) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-token-cost'), '2');
    assert.equal(res.headers.get('x-request-tokens'), '0');
    assert.equal(res.headers.get('x-request-cost-eur'), '0');
    assert.equal(res.headers.get('x-credits-remaining'), '0');
    assert.equal(res.json.meta.cost.outcome, 'grandfathered');
    const [event] = await server.deps.store.listUsage({ accountId: early.id }, null, 1);
    assert.deepEqual(
      event && [event.dataset, event.outcome, event.costMicros, event.burnedMicros, event.requestId],
      ['maritime/vessel-positions', 'grandfathered', 2_000_000n, 0n, res.headers.get('x-request-id')],
    );
    assert.deepEqual(
      await server.deps.store.listEntries(early.walletId),
      [],
      'no ledger entry: nothing burned',
    );

    const refused = await server.request('GET', NON_P0, { headers: bearer(await login(server, normal)) });
    assert.equal(refused.status, 402);
    assert.equal(refused.json.code, 'insufficient_tokens');
    assert.equal(refused.json.required_tokens, '2');
    assert.equal(refused.json.balance, '0');
    assert.deepEqual(await server.deps.store.listUsage({ accountId: normal.id }, null, 5), []);
  });

  test('an early_bird session burns what the wallet holds while it covers the read, then reads grandfathered', async () => {
    const credit = await adminRequest(server, 'POST', `/api/v1/admin/accounts/${early.id}/credits`, {
      headers: { 'idempotency-key': 'early-3' },
      body: { tokens: 3 },
    });
    assert.equal(credit.status, 201, credit.text);
    const session = await login(server, early);
    const paid = await server.request('GET', NON_P0, { headers: bearer(session) });
    assert.equal(paid.json.meta.cost.outcome, 'charged');
    assert.equal(paid.headers.get('x-request-tokens'), '2');
    assert.equal(paid.headers.get('x-credits-remaining'), '1');
    const covered = await server.request('GET', NON_P0, { headers: bearer(session) });
    assert.equal(covered.status, 200);
    assert.equal(covered.json.meta.cost.outcome, 'grandfathered');
    assert.equal(covered.headers.get('x-request-tokens'), '0');
    assert.equal(covered.headers.get('x-credits-remaining'), '1');
    const entries = await server.deps.store.listEntries(early.walletId);
    assert.deepEqual(
      entries.map((e) => [e.kind, e.amountMicros, e.balanceAfterMicros]),
      [
        ['topup', 3_000_000n, 3_000_000n],
        ['burn', -2_000_000n, 1_000_000n],
      ],
    );
  });

  test("the grandfather is the session's: the account's live key with too small a wallet is 402", async () => {
    const res = await server.request('GET', '/api/v1/data/filings/documents?limit=1', {
      headers: bearer(early.key),
    });
    assert.equal(res.status, 402);
    assert.equal(res.json.code, 'insufficient_tokens');
  });

  test('its public-test key stays P0-only: a non-P0 read is 402 not_entitled', async () => {
    const fpt = await server.request('POST', '/api/v1/auth/public-test', {
      headers: { 'x-forwarded-for': freshIp() },
      body: { email: early.email, password: early.password, rotate_key: true },
    });
    assert.ok(fpt.status === 201 || fpt.status === 200, fpt.text);
    const refused = await server.request('GET', NON_P0, { headers: bearer(fpt.json.key) });
    assert.equal(refused.status, 402);
    assert.equal(refused.json.code, 'not_entitled');
    const p0 = await server.request('GET', P0, { headers: bearer(fpt.json.key) });
    assert.equal(p0.status, 200);
    assert.equal(p0.json.meta.cost.outcome, 'notional');
  });
});

describe('setting early_bird', () => {
  test('an account created after the cohort cutoff is refused with 409 conflict and keeps its plan', async () => {
    const late = await operatorAccount(server);
    const res = await adminRequest(server, 'PUT', `/api/v1/admin/accounts/${late.id}/early-bird`, {
      body: { early_bird: true },
    });
    assert.equal(res.status, 409);
    assert.equal(res.json.code, 'conflict');
    assert.equal(res.json.cohort_cutoff, '2026-01-01T00:00:00Z');
    assert.equal(
      res.json.detail,
      `early_bird is for accounts created before the cohort cutoff 2026-01-01T00:00:00Z; ${late.id} was created at 2026-11-21T15:00:00.000Z.`,
    );
    const view = await adminRequest(server, 'GET', `/api/v1/admin/accounts/${late.id}`);
    assert.equal(view.json.plan, 'standard');
    assert.equal(view.json.early_bird_eligible, false);
  });

  test('early_bird set and cleared on a cohort account takes effect on its open session at once', async () => {
    const set = await adminRequest(server, 'PUT', `/api/v1/admin/accounts/${normal.id}/early-bird`, {
      body: { early_bird: true },
    });
    assert.equal(set.status, 200, 'a cohort account can be set at any time');
    const session = await login(server, normal);
    const grandfathered = await server.request('GET', NON_P0, { headers: bearer(session) });
    assert.equal(grandfathered.json.meta.cost.outcome, 'grandfathered');
    const cleared = await adminRequest(server, 'PUT', `/api/v1/admin/accounts/${normal.id}/early-bird`, {
      body: { early_bird: false },
    });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.json.plan, 'standard');
    const refused = await server.request('GET', NON_P0, { headers: bearer(session) });
    assert.equal(refused.status, 402, 'the same session sees the cleared plan at once');
    assert.equal(refused.json.code, 'insufficient_tokens');
  });
});
