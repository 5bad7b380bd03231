/**
 * Who may call what: every credential kind against every endpoint class, in one table. Each cell is the
 * status, and the problem code for refusals.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_TOKEN, adminRequest, freshIp, operatorAccount } from './helpers/operator.ts';
import {
  assertLedgerBalanced,
  bearer,
  publicTestKey,
  sandboxKey,
  startServer,
  TestClock,
  type TestServer,
} from './helpers/server.ts';

const endpoints = {
  catalog: ['GET', '/api/v1/catalog?domain=cftc'],
  p0_read: ['GET', '/api/v1/data/cftc/legacy_futures-facts?limit=1'],
  non_p0_read: ['GET', '/api/v1/data/maritime/vessel-positions?limit=1'],
  export: ['GET', '/api/v1/export/cftc/legacy_futures-facts'],
  keys: ['GET', '/api/v1/keys'],
  admin: ['POST', '/api/v1/admin/monthly-credits'],
  checkout: ['POST', '/api/v1/billing/checkout'],
} as const;
type EndpointClass = keyof typeof endpoints;

const expected: Record<string, Record<EndpointClass, string>> = {
  anonymous: {
    catalog: '200',
    p0_read: '401 missing_credentials',
    non_p0_read: '401 missing_credentials',
    export: '401 missing_credentials',
    keys: '401 missing_credentials',
    admin: '401 missing_credentials',
    checkout: '501 not_live',
  },
  sandbox: {
    catalog: '200',
    p0_read: '200',
    non_p0_read: '402 not_entitled',
    export: '403 forbidden',
    keys: '403 forbidden',
    admin: '403 forbidden',
    checkout: '501 not_live',
  },
  public_test: {
    catalog: '200',
    p0_read: '200',
    non_p0_read: '402 not_entitled',
    export: '403 forbidden',
    keys: '403 forbidden',
    admin: '403 forbidden',
    checkout: '501 not_live',
  },
  live_key: {
    catalog: '200',
    p0_read: '200',
    non_p0_read: '200',
    export: '403 forbidden',
    keys: '403 forbidden',
    admin: '403 forbidden',
    checkout: '501 not_live',
  },
  live_key_pro: {
    catalog: '200',
    p0_read: '200',
    non_p0_read: '200',
    export: '200',
    keys: '403 forbidden',
    admin: '403 forbidden',
    checkout: '501 not_live',
  },
  session: {
    catalog: '200',
    p0_read: '200',
    non_p0_read: '200',
    export: '403 forbidden',
    keys: '200',
    admin: '403 forbidden',
    checkout: '501 not_live',
  },
  early_bird_session_empty_wallet: {
    catalog: '200',
    p0_read: '200',
    non_p0_read: '200',
    export: '403 forbidden',
    keys: '200',
    admin: '403 forbidden',
    checkout: '501 not_live',
  },
  admin_token: {
    catalog: '401 invalid_key',
    p0_read: '401 invalid_key',
    non_p0_read: '401 invalid_key',
    export: '401 invalid_key',
    keys: '401 invalid_key',
    admin: '200',
    checkout: '401 invalid_key',
  },
};

let server: TestServer;
before(async () => {
  // Start before the early_bird cohort cutoff (2026-01-01) so a cohort account can exist.
  server = await startServer({ clock: new TestClock(Date.parse('2025-12-20T12:00:00Z')) });
});
after(() => server.close());

test('every credential kind against every endpoint class gets the expected status', async () => {
  const cohort = await operatorAccount(server);
  const set = await adminRequest(server, 'PUT', `/api/v1/admin/accounts/${cohort.id}/early-bird`, {
    body: { early_bird: true },
  });
  assert.equal(set.status, 200, set.text);
  server.clock.t = Date.parse('2026-11-21T15:00:00Z');

  const funded = await operatorAccount(server, { tokens: 100 });
  const pro = await operatorAccount(server, { pkg: 'pro' });
  const earlyLogin = await server.request('POST', '/api/v1/auth/login', {
    headers: { 'x-forwarded-for': freshIp() },
    body: { email: cohort.email, password: cohort.password },
  });
  assert.equal(earlyLogin.status, 200);
  const credentials: Record<string, () => Record<string, string>> = {
    anonymous: () => ({ 'x-forwarded-for': freshIp() }),
    sandbox: (
      (key: string) => () =>
        bearer(key)
    )(await sandboxKey(server)),
    public_test: (
      (key: string) => () =>
        bearer(key)
    )((await publicTestKey(server)).key),
    live_key: () => bearer(funded.key),
    live_key_pro: () => bearer(pro.key),
    session: () => bearer(funded.session),
    early_bird_session_empty_wallet: () => bearer(earlyLogin.json.token),
    admin_token: () => ({ authorization: `Bearer ${ADMIN_TOKEN}`, 'x-forwarded-for': freshIp() }),
  };

  const actual: Record<string, Record<string, string>> = {};
  for (const [kind, headers] of Object.entries(credentials)) {
    actual[kind] = {};
    for (const [name, [method, path]] of Object.entries(endpoints)) {
      const res = await server.request(method, path, { headers: headers() });
      actual[kind][name] = res.status < 300 ? String(res.status) : `${res.status} ${res.json?.code}`;
    }
  }
  assert.deepEqual(actual, expected);

  const usage = await server.deps.store.listUsage({ accountId: cohort.id }, null, 10);
  assert.deepEqual(
    usage.map((e) => [e.dataset, e.outcome]),
    [
      ['maritime/vessel-positions', 'grandfathered'],
      ['cftc/legacy_futures-facts', 'grandfathered'],
    ],
    'the early_bird session read on an empty wallet, burning nothing',
  );
  await assertLedgerBalanced(server);
});
