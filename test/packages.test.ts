/** Packages (spec 2.3): operator-assigned, monthly_credits once per UTC month, entitlements; checkout not live. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { parseEnv } from '../src/config.ts';
import { buildDeps, closeDeps } from '../src/deps.ts';
import {
  creditMonthlyPackages,
  type MonthlyCreditRun,
  scheduleMonthlyCredits,
} from '../src/domain/packages.ts';
import { adminRequest, freshIp, operatorAccount } from './helpers/operator.ts';
import {
  assertLedgerBalanced,
  baseConfig,
  bearer,
  sandboxKey,
  startServer,
  TestClock,
  type TestServer,
} from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
afterEach(() => assertLedgerBalanced(server));
after(() => server.close());

async function monthlyCredits(s: TestServer, walletId: string) {
  return (await s.deps.store.listEntries(walletId))
    .filter((e) => e.kind === 'monthly_credit')
    .map((e) => ({ amount: e.amountMicros, key: e.idempotencyKey, memo: e.memo }));
}

/** A second process on the same database file: what a restart or another node sees. */
async function secondNode(s: TestServer, now: () => number) {
  const env = parseEnv({
    DATABASE_URL: join(s.dir, 'tmd.sqlite'),
    DATA_DIR: s.dir,
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
  });
  return buildDeps({ env, config: baseConfig(), now, log: { info() {}, warn() {}, error() {} } });
}

describe('monthly credits', () => {
  test('credited once per month however many times the job or a restart runs, also concurrently on two nodes', async () => {
    const account = await operatorAccount(server, { pkg: 'pro' });
    const once = [
      { amount: 150_000_000_000n, key: 'monthly-credit:pro:2026-11', memo: 'monthly credit: Pro 2026-11' },
    ];
    assert.deepEqual(
      await monthlyCredits(server, account.walletId),
      once,
      'assignment credits the month at once',
    );

    const reassigned = await adminRequest(server, 'PUT', `/api/v1/admin/accounts/${account.id}/package`, {
      body: { package: 'pro' },
    });
    assert.equal(reassigned.json.monthly_credit.duplicate, true);
    for (let i = 0; i < 3; i++) {
      const run = await adminRequest(server, 'POST', '/api/v1/admin/monthly-credits');
      assert.equal(run.status, 200, run.text);
      assert.equal(run.json.month, '2026-11');
      assert.deepEqual(run.json.credited, []);
    }

    // A restart (main.ts runs the job at start) and a second node, racing the first.
    const restarted = await secondNode(server, server.clock.now);
    try {
      const atStart = await new Promise<MonthlyCreditRun>((resolve, reject) => {
        const stop = scheduleMonthlyCredits(restarted, resolve, reject);
        stop();
      });
      assert.deepEqual(atStart.credited, []);
      const [a, b] = await Promise.all([
        creditMonthlyPackages(restarted, server.clock.now()),
        creditMonthlyPackages(server.deps, server.clock.now()),
      ]);
      assert.deepEqual([...a.credited, ...b.credited], []);
    } finally {
      await closeDeps(restarted);
    }
    assert.deepEqual(await monthlyCredits(server, account.walletId), once);
    const me = await server.request('GET', '/api/v1/me', { headers: bearer(account.key) });
    assert.equal(me.json.wallet.balance, '150000');
  });

  test('the next UTC month is credited once, from the first millisecond of the month', async () => {
    const clock = new TestClock(Date.parse('2026-11-30T23:00:00Z'));
    const s = await startServer({ clock });
    try {
      const account = await operatorAccount(s, { pkg: 'partner' });
      clock.t = Date.parse('2026-11-30T23:59:59.999Z');
      assert.deepEqual((await creditMonthlyPackages(s.deps, clock.now())).credited, []);
      clock.t = Date.parse('2026-12-01T00:00:00.000Z');
      const december = await creditMonthlyPackages(s.deps, clock.now());
      assert.equal(december.month, '2026-12');
      assert.deepEqual(december.credited, [
        {
          accountId: account.id,
          packageId: 'partner',
          tokens: '500000',
          entryId: december.credited[0]?.entryId,
        },
      ]);
      clock.advance(3_600_000);
      const again = await creditMonthlyPackages(s.deps, clock.now());
      assert.deepEqual(again.credited, []);
      assert.equal(again.alreadyCredited, 1);
      assert.deepEqual(
        (await monthlyCredits(s, account.walletId)).map((c) => c.key),
        ['monthly-credit:partner:2026-11', 'monthly-credit:partner:2026-12'],
      );
      await assertLedgerBalanced(s);
    } finally {
      await s.close();
    }
  });

  test('clearing the package stops the monthly credit; what was credited stays', async () => {
    const clock = new TestClock(Date.parse('2026-11-10T12:00:00Z'));
    const s = await startServer({ clock });
    try {
      const account = await operatorAccount(s, { pkg: 'starter' });
      const cleared = await adminRequest(s, 'PUT', `/api/v1/admin/accounts/${account.id}/package`, {
        body: { package: null },
      });
      assert.equal(cleared.status, 200, cleared.text);
      assert.equal(cleared.json.account.package, null);
      assert.equal(cleared.json.monthly_credit, null);
      clock.t = Date.parse('2026-12-01T00:00:00Z');
      assert.deepEqual((await creditMonthlyPackages(s.deps, clock.now())).credited, []);
      assert.deepEqual(
        (await monthlyCredits(s, account.walletId)).map((c) => c.key),
        ['monthly-credit:starter:2026-11'],
      );
      await assertLedgerBalanced(s);
    } finally {
      await s.close();
    }
  });
});

describe('entitlements', () => {
  test('GET /api/v1/me shows the package and its entitlements; the rate limit is the higher of tier and package', async () => {
    const workbench = await operatorAccount(server, { pkg: 'workbench' });
    const me = await server.request('GET', '/api/v1/me', { headers: bearer(workbench.session) });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.json.account.package, 'workbench');
    assert.deepEqual(me.json.account.entitlements, {
      bulk_export: true,
      analysis_assistant: true,
      mcp_included: true,
      spending_caps: false,
    });
    assert.equal(me.json.limits.per_minute, 240);
    const partner = await operatorAccount(server, { pkg: 'partner' });
    const partnerMe = await server.request('GET', '/api/v1/me', { headers: bearer(partner.key) });
    assert.deepEqual(partnerMe.json.account.entitlements, {
      bulk_export: true,
      analysis_assistant: false,
      mcp_included: true,
      spending_caps: true,
    });
    assert.equal(partnerMe.json.limits.per_minute, 300);
    const plain = await operatorAccount(server);
    const plainMe = await server.request('GET', '/api/v1/me', { headers: bearer(plain.key) });
    assert.equal(plainMe.json.account.package, null);
    assert.deepEqual(plainMe.json.account.entitlements, {
      bulk_export: false,
      analysis_assistant: false,
      mcp_included: true,
      spending_caps: false,
    });
    assert.equal(plainMe.json.limits.per_minute, 60);
  });
});

describe('checkout', () => {
  test('POST /api/v1/billing/checkout is 501 not_live with the package shapes, for anyone', async () => {
    const account = await operatorAccount(server, { tokens: 5 });
    const sandbox = await sandboxKey(server);
    const packages = baseConfig().pricing.commercial_skus;
    for (const headers of [{ 'x-forwarded-for': freshIp() }, bearer(sandbox), bearer(account.session)]) {
      const res = await server.request('POST', '/api/v1/billing/checkout', {
        headers,
        body: { package: 'pro' },
      });
      assert.equal(res.status, 501);
      assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.deepEqual(res.json, {
        type: '/manual/errors#not_live',
        title: 'Not live',
        status: 501,
        code: 'not_live',
        detail:
          'Checkout is not live: no package or subscription is sold yet (subscriptions_live = false). Billing is prepaid tokens; an operator assigns packages to accounts.',
        request_id: res.headers.get('x-request-id'),
        subscriptions_live: false,
        method: 'prepaid_tokens',
        workbench_public_price_published: false,
        packages,
      });
    }
    const view = await adminRequest(server, 'GET', `/api/v1/admin/accounts/${account.id}`);
    assert.equal(view.json.package, null, 'nothing pretends a subscription exists');
    assert.equal(view.json.wallet.balance, '5');
  });
});
