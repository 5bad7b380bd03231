/** The operator API: ADMIN_TOKEN guards it; accounts, credits (idempotent), keys and caps through it. */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { AppError } from '../src/errors.ts';
import { ADMIN_TOKEN, adminRequest, freshIp, operatorAccount } from './helpers/operator.ts';
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
afterEach(() => assertLedgerBalanced(server));
after(() => server.close());

const PROBLEM = /^application\/problem\+json/;

describe('GET /metrics with METRICS_TOKEN', () => {
  const METRICS_TOKEN = 'metrics-scraper-token-0123456789';

  test('open without METRICS_TOKEN; with it, only its Bearer token reads the metrics', async () => {
    const open = await server.request('GET', '/metrics');
    assert.equal(open.status, 200, 'no METRICS_TOKEN: open, as documented');
    const guarded = await startServer({ env: { METRICS_TOKEN } });
    try {
      const ok = await guarded.request('GET', '/metrics', {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      assert.equal(ok.status, 200);
      assert.match(ok.text, /^tmd_limiter_degraded 0$/m);

      const missing = await guarded.request('GET', '/metrics');
      assert.equal(missing.status, 401);
      assert.match(missing.headers.get('content-type') ?? '', PROBLEM);
      assert.equal(missing.json.code, 'missing_credentials');
      assert.equal(missing.headers.get('www-authenticate'), 'Bearer realm="token-metered-data-metrics"');
      assert.doesNotMatch(missing.text, /tmd_limiter/);

      for (const token of [`${METRICS_TOKEN}x`, ADMIN_TOKEN, 'short']) {
        const wrong = await guarded.request('GET', '/metrics', {
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(wrong.status, 401, `Bearer ${token}`);
        assert.equal(wrong.json.code, 'invalid_metrics_token');
        assert.equal(wrong.headers.get('www-authenticate'), 'Bearer realm="token-metered-data-metrics"');
      }

      const account = await operatorAccount(guarded, { tokens: 10 });
      const presented: Record<string, string>[] = [
        bearer(account.key),
        { 'x-api-key': account.key },
        bearer(account.session),
        { cookie: `tmd_session=${account.session}` },
        bearer(await sandboxKey(guarded)),
      ];
      for (const headers of presented) {
        const res = await guarded.request('GET', '/metrics', { headers });
        assert.equal(res.status, 403, JSON.stringify(Object.keys(headers)));
        assert.equal(res.json.code, 'forbidden');
        assert.doesNotMatch(res.text, /tmd_limiter/);
      }
      await assertLedgerBalanced(guarded);
    } finally {
      await guarded.close();
    }
  });
});

describe('admin API access', () => {
  test('without ADMIN_TOKEN the admin API is disabled: 403 forbidden, even with a token', async () => {
    const disabled = await startServer({ env: { ADMIN_TOKEN: undefined } });
    try {
      const res = await disabled.request('POST', '/api/v1/admin/monthly-credits', {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      assert.equal(res.status, 403);
      assert.match(res.headers.get('content-type') ?? '', PROBLEM);
      assert.equal(res.json.code, 'forbidden');
      assert.equal(res.json.detail, 'The admin API is disabled: the operator has not set ADMIN_TOKEN.');
    } finally {
      await disabled.close();
    }
  });

  test('a wrong token is 401 invalid_admin_token with an admin Bearer challenge, by either header', async () => {
    const wrong: Record<string, string>[] = [
      { authorization: 'Bearer not-the-admin-token-at-all' },
      { 'x-admin-token': 'nope' },
    ];
    for (const headers of wrong) {
      const res = await server.request('POST', '/api/v1/admin/accounts', {
        headers: { ...headers, 'x-forwarded-for': freshIp() },
        body: { email: 'never@example.com' },
      });
      assert.equal(res.status, 401);
      assert.match(res.headers.get('content-type') ?? '', PROBLEM);
      assert.equal(res.json.code, 'invalid_admin_token');
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="token-metered-data-admin"');
    }
    const lookup = await adminRequest(server, 'GET', '/api/v1/admin/accounts/never@example.com');
    assert.equal(lookup.status, 404, 'the refused request created nothing');
  });

  test('no token at all is 401 missing_credentials', async () => {
    const res = await server.request('POST', '/api/v1/admin/monthly-credits', {
      headers: { 'x-forwarded-for': freshIp() },
    });
    assert.equal(res.status, 401);
    assert.equal(res.json.code, 'missing_credentials');
  });

  test('keys and sessions never open it: 403 forbidden for live, sandbox and public-test keys and sessions', async () => {
    const account = await operatorAccount(server, { tokens: 10 });
    const fpt = await publicTestKey(server);
    const sandbox = await sandboxKey(server);
    const presented: Record<string, string>[] = [
      bearer(account.key),
      { 'x-api-key': account.key },
      bearer(account.session),
      { cookie: `tmd_session=${account.session}` },
      bearer(sandbox),
      bearer(fpt.key),
    ];
    for (const headers of presented) {
      const res = await server.request('POST', '/api/v1/admin/monthly-credits', { headers });
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.equal(res.json.code, 'forbidden');
      assert.equal(
        res.json.detail,
        'Admin endpoints take the operator token (ADMIN_TOKEN), not keys or sessions.',
      );
    }
  });

  test('X-Admin-Token opens it as well as Authorization: Bearer', async () => {
    const res = await server.request('POST', '/api/v1/admin/monthly-credits', {
      headers: { 'x-admin-token': ADMIN_TOKEN, 'x-forwarded-for': freshIp() },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.month, '2026-11');
  });
});

describe('admin operations', () => {
  test('create account: 201 with an empty wallet and no signup grant; the same email again is 409 conflict', async () => {
    const res = await adminRequest(server, 'POST', '/api/v1/admin/accounts', {
      body: { email: 'Ops.Made@Example.com', password: 'a long passphrase' },
    });
    assert.equal(res.status, 201, res.text);
    assert.match(res.json.id, /^acc_/);
    assert.deepEqual(
      { ...res.json, id: undefined, wallet: { ...res.json.wallet, id: undefined } },
      {
        id: undefined,
        email: 'ops.made@example.com',
        plan: 'standard',
        early_bird_eligible: false,
        package: null,
        entitlements: {
          bulk_export: false,
          analysis_assistant: false,
          mcp_included: true,
          spending_caps: false,
        },
        created_at: '2026-11-21T15:00:00.000Z',
        public_test_started_at: null,
        wallet: { id: undefined, balance: '0' },
        keys: [],
      },
    );
    assert.deepEqual(await server.deps.store.listEntries(res.json.wallet.id), []);
    const again = await adminRequest(server, 'POST', '/api/v1/admin/accounts', {
      body: { email: 'ops.made@example.com' },
    });
    assert.equal(again.status, 409);
    assert.equal(again.json.code, 'conflict');
    const login = await server.request('POST', '/api/v1/auth/login', {
      headers: { 'x-forwarded-for': freshIp() },
      body: { email: 'ops.made@example.com', password: 'a long passphrase' },
    });
    assert.equal(login.status, 200, 'the password given to the operator logs in');
  });

  test('a credit needs an Idempotency-Key: 400 without one, and nothing is credited', async () => {
    const account = await operatorAccount(server);
    const res = await adminRequest(server, 'POST', `/api/v1/admin/accounts/${account.id}/credits`, {
      body: { tokens: 100 },
    });
    assert.equal(res.status, 400);
    assert.equal(res.json.code, 'invalid_request');
    assert.deepEqual(res.json.errors, [{ path: 'headers.idempotency-key', message: 'is required' }]);
    assert.deepEqual(await server.deps.store.listEntries(account.walletId), []);
  });

  test('a credit is applied once per Idempotency-Key: 201, then 200 with the same entry; another amount is 409', async () => {
    const account = await operatorAccount(server);
    const path = `/api/v1/admin/accounts/${account.id}/credits`;
    const headers = { 'idempotency-key': 'invoice-2026-11-0042' };
    const first = await adminRequest(server, 'POST', path, {
      headers,
      body: { tokens: '250.5', memo: 'welcome credit' },
    });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    assert.deepEqual(first.json, {
      entry: {
        id: first.json.entry.id,
        kind: 'topup',
        amount: '250.5',
        balance_after: '250.5',
        created_at: '2026-11-21T15:00:00.000Z',
        idempotency_key: 'invoice-2026-11-0042',
        memo: 'operator topup (admin-api): welcome credit',
        request_id: first.headers.get('x-request-id'),
      },
      balance: '250.5',
    });
    const repeat = await adminRequest(server, 'POST', path, {
      headers,
      body: { tokens: '250.5', memo: 'welcome credit' },
    });
    assert.equal(repeat.status, 200);
    assert.equal(repeat.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(repeat.json, first.json, 'the same entry, the same balance');
    const other = await adminRequest(server, 'POST', path, { headers, body: { tokens: 999 } });
    assert.equal(other.status, 409);
    assert.equal(other.json.code, 'conflict');
    assert.equal(other.json.entry_id, first.json.entry.id);
    const entries = await server.deps.store.listEntries(account.walletId);
    assert.deepEqual(
      entries.map((e) => [e.kind, e.amountMicros, e.memo]),
      [['topup', 250_500_000n, 'operator topup (admin-api): welcome credit']],
    );
  });

  test('credit amounts are validated: zero, negative, too many decimals and unknown kinds are 400', async () => {
    const account = await operatorAccount(server);
    for (const body of [
      { tokens: 0 },
      { tokens: -5 },
      { tokens: '1.0000001' },
      { tokens: 5, kind: 'burn' },
    ]) {
      const res = await adminRequest(server, 'POST', `/api/v1/admin/accounts/${account.id}/credits`, {
        headers: { 'idempotency-key': `bad-${JSON.stringify(body)}` },
        body,
      });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.json.code, 'invalid_request');
    }
    assert.deepEqual(await server.deps.store.listEntries(account.walletId), []);
  });

  test('an operator-made live key reads against the account wallet', async () => {
    const account = await operatorAccount(server, { tokens: 20 });
    assert.match(account.key, /^tmd_live_/);
    const read = await server.request('GET', '/api/v1/data/maritime/vessel-positions?limit=1', {
      headers: bearer(account.key),
    });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.headers.get('x-request-tokens'), '2');
    assert.equal(read.headers.get('x-credits-remaining'), '18');
    const view = await adminRequest(server, 'GET', `/api/v1/admin/accounts/${account.email}`);
    assert.equal(view.status, 200);
    assert.equal(view.json.id, account.id, 'found by email as well as by id');
    assert.equal(view.json.wallet.balance, '18');
    assert.deepEqual(
      view.json.keys.map((k: { id: string; name: string; status: string }) => [k.id, k.name, k.status]),
      [[account.keyId, 'ops', 'active']],
    );
  });

  test('unknown accounts are 404 not_found; an unknown package is 400 naming the packages', async () => {
    const missing = await adminRequest(server, 'PUT', '/api/v1/admin/accounts/acc_nobody/package', {
      body: { package: 'pro' },
    });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.code, 'not_found');
    const account = await operatorAccount(server);
    const unknown = await adminRequest(server, 'PUT', `/api/v1/admin/accounts/${account.id}/package`, {
      body: { package: 'platinum' },
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.json.code, 'invalid_request');
    assert.equal(unknown.json.detail, 'No package "platinum". Packages: starter, pro, workbench, partner.');
  });
});

describe('operator edge cases', () => {
  test('a key sent as X-Admin-Token is 403, as in any other header; an unrouted admin path is 404/405, not a bad key', async () => {
    const key = await sandboxKey(server);
    const asAdmin = await server.request('POST', '/api/v1/admin/monthly-credits', {
      headers: { 'x-admin-token': key },
    });
    assert.equal(asAdmin.status, 403);
    assert.equal(asAdmin.json.code, 'forbidden');
    const wrongMethod = await adminRequest(server, 'GET', '/api/v1/admin/monthly-credits');
    assert.equal(wrongMethod.status, 405, wrongMethod.text);
    assert.equal(wrongMethod.headers.get('allow'), 'POST');
    const nowhere = await adminRequest(server, 'GET', '/api/v1/admin/nothing-here');
    assert.equal(nowhere.status, 404);
  });

  test('monthly credits report their tokens as an exact decimal string', async () => {
    const account = await operatorAccount(server);
    await server.deps.store.updateAccount(account.id, { packageId: 'starter' });
    const run = await adminRequest(server, 'POST', '/api/v1/admin/monthly-credits');
    assert.equal(run.status, 200, run.text);
    const mine = run.json.credited.find((c: { account_id: string }) => c.account_id === account.id);
    assert.equal(mine.tokens, '25000');
  });

  test('a wallet holds at most 10^12 tokens: a credit past that is 409 and changes nothing', async () => {
    const account = await operatorAccount(server);
    const credit = (i: number) =>
      adminRequest(server, 'POST', `/api/v1/admin/accounts/${account.id}/credits`, {
        headers: { 'idempotency-key': `fill-${account.id}-${i}` },
        body: { tokens: 1_000_000_000 },
      });
    // Fill the wallet in the store (1000 credits through the API would be slow), then try one more.
    await server.deps.store.credit({
      walletId: account.walletId,
      kind: 'adjustment',
      amountMicros: 999_500_000_000n * 1_000_000n,
      at: server.clock.now(),
    });
    const refused = await credit(1);
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.json.code, 'conflict');
    assert.equal(
      (await server.deps.store.getWallet(account.walletId))?.balanceMicros,
      999_500_000_000n * 1_000_000n,
    );
    // Filled to the brim by a credit the API made: retrying that same credit is its replay, not a 409.
    const half = await adminRequest(server, 'POST', `/api/v1/admin/accounts/${account.id}/credits`, {
      headers: { 'idempotency-key': `brim-${account.id}` },
      body: { tokens: 500_000_000 },
    });
    assert.equal(half.status, 201, half.text);
    const replay = await adminRequest(server, 'POST', `/api/v1/admin/accounts/${account.id}/credits`, {
      headers: { 'idempotency-key': `brim-${account.id}` },
      body: { tokens: 500_000_000 },
    });
    assert.equal(replay.status, 200, replay.text);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.json.entry.id, half.json.entry.id);
    const other = await adminRequest(server, 'POST', `/api/v1/admin/accounts/${account.id}/credits`, {
      headers: { 'idempotency-key': `brim-${account.id}` },
      body: { tokens: 1 },
    });
    assert.equal(other.status, 409, 'the same key with another amount is still the key conflict');
    assert.match(other.json.detail, /idempotency/i);
    assert.equal(
      (await server.deps.store.getWallet(account.walletId))?.balanceMicros,
      1_000_000_000_000n * 1_000_000n,
    );
  });

  test('a store failure while creating an account is that failure (503), not "the email exists"', async () => {
    const failing = await startServer({
      wrapStore: (store) =>
        new Proxy(store, {
          get(target, property, receiver) {
            if (property === 'createAccount') {
              return async () => {
                throw new AppError(
                  'service_unavailable',
                  'The ledger database cannot be reached; nothing was served.',
                );
              };
            }
            const value = Reflect.get(target, property, receiver);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
    });
    try {
      const res = await adminRequest(failing, 'POST', '/api/v1/admin/accounts', {
        body: { email: 'new-during-outage@example.com' },
      });
      assert.equal(res.status, 503, res.text);
      assert.equal(res.json.code, 'service_unavailable');
    } finally {
      await failing.close();
    }
  });

  test('/me/usage refuses a cursor it did not give with invalid_cursor', async () => {
    const account = await operatorAccount(server);
    for (const cursor of ['abc', '0', '-1', '1e3']) {
      const res = await server.request('GET', `/api/v1/me/usage?cursor=${cursor}`, {
        headers: bearer(account.key),
      });
      assert.equal(res.status, 400, cursor);
      assert.equal(res.json.code, 'invalid_cursor', cursor);
    }
  });

  test('two cap changes at once, of different caps, both hold', async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    for (let round = 0; round < 5; round++) {
      await server.request('PATCH', `/api/v1/keys/${partner.keyId}`, {
        headers: bearer(partner.session),
        body: { daily_tokens: null, monthly_tokens: null },
      });
      await Promise.all([
        server.request('PATCH', `/api/v1/keys/${partner.keyId}`, {
          headers: bearer(partner.session),
          body: { daily_tokens: 5 + round },
        }),
        server.request('PATCH', `/api/v1/keys/${partner.keyId}`, {
          headers: bearer(partner.session),
          body: { monthly_tokens: 100 + round },
        }),
      ]);
      const key = await server.deps.store.getKey(partner.keyId);
      assert.deepEqual(
        [key?.dailyCapMicros, key?.monthlyCapMicros],
        [BigInt(5 + round) * 1_000_000n, BigInt(100 + round) * 1_000_000n],
      );
    }
  });
});
