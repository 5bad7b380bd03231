/** Credentials: sandbox keys, public-test registration, live keys, sessions; expiry and revocation. */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { decodeJwt, SignJWT } from 'jose';
import { SESSION_TTL_MS, Sessions } from '../src/domain/sessions.ts';
import type { AppError } from '../src/errors.ts';
import { adminRequest, freshIp } from './helpers/operator.ts';
import {
  assertLedgerBalanced,
  bearer,
  publicTestKey,
  sandboxKey,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const P0_COST5 = '/api/v1/data/cftc/legacy_futures-facts?limit=5';
const NON_P0 = '/api/v1/data/maritime/vessel-positions?limit=5';

let server: TestServer;
before(async () => {
  server = await startServer();
});
afterEach(() => assertLedgerBalanced(server));
after(() => server.close());

describe('sandbox keys', () => {
  test('issuance returns a tmd_sbx_ key for 72 hours with 2500 tokens and Starter limits', async () => {
    const res = await server.request('POST', '/api/v1/auth/sandbox', {
      headers: { 'x-forwarded-for': '203.0.113.10' },
    });
    assert.equal(res.status, 201);
    assert.match(res.json.key, /^tmd_sbx_[A-Za-z0-9_-]{43}$/);
    assert.equal(res.json.kind, 'sandbox');
    assert.equal(res.json.balance, '2500');
    assert.equal(Date.parse(res.json.expires_at), server.clock.now() + 72 * HOUR);
    assert.deepEqual(res.json.limits, { per_minute: 60, per_day: 5000, concurrent: 5 });
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const me = await server.request('GET', '/api/v1/me', { headers: bearer(res.json.key) });
    assert.equal(me.status, 200);
    assert.equal(me.json.credential.kind, 'sandbox');
    assert.equal(me.json.wallet.balance, '2500');
    assert.equal(me.json.tier.level, 1);
    assert.equal(me.json.limits.per_minute, 60);
  });

  test('a P0 read burns the list cost from the key wallet, reported in the four cost headers', async () => {
    const key = await sandboxKey(server);
    const res = await server.request('GET', P0_COST5, { headers: bearer(key) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-token-cost'), '5');
    assert.equal(res.headers.get('x-request-tokens'), '5');
    assert.equal(res.headers.get('x-request-cost-eur'), '0.5');
    assert.equal(res.headers.get('x-credits-remaining'), '2495');
    const sameByHeader = await server.request('GET', P0_COST5, { headers: { 'x-api-key': key } });
    assert.equal(sameByHeader.status, 200);
    assert.equal(sameByHeader.headers.get('x-credits-remaining'), '2490');
  });

  test('a non-P0 read is 402 not_entitled and burns nothing', async () => {
    const key = await sandboxKey(server);
    const res = await server.request('GET', NON_P0, { headers: bearer(key) });
    assert.equal(res.status, 402);
    assert.equal(res.json.code, 'not_entitled');
    assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
    const me = await server.request('GET', '/api/v1/me', { headers: bearer(key) });
    assert.equal(me.json.wallet.balance, '2500');
  });

  test('issuance is capped at 3 per client IP per 24 hours with 429 issuance_limited', async () => {
    const ip = { 'x-forwarded-for': '192.0.2.77' };
    for (let i = 0; i < 3; i++)
      assert.equal((await server.request('POST', '/api/v1/auth/sandbox', { headers: ip })).status, 201);
    const refused = await server.request('POST', '/api/v1/auth/sandbox', { headers: ip });
    assert.equal(refused.status, 429);
    assert.equal(refused.json.code, 'issuance_limited');
    assert.equal(refused.headers.get('retry-after'), String(24 * 3600));
    server.clock.advance(DAY);
    assert.equal((await server.request('POST', '/api/v1/auth/sandbox', { headers: ip })).status, 201);
  });

  test('IPv6 clients count by their /64, and an IPv4-mapped address as its IPv4 address', async () => {
    const issue = (ip: string) =>
      server.request('POST', '/api/v1/auth/sandbox', { headers: { 'x-forwarded-for': ip } });
    const statuses = [];
    for (let host = 1; host <= 4; host++) statuses.push((await issue(`2001:db8:77:1::${host}`)).status);
    assert.deepEqual(statuses, [201, 201, 201, 429], 'four addresses of one /64 are one client');
    assert.equal((await issue('2001:db8:77:2::1')).status, 201, 'another /64 is another client');
    for (let i = 0; i < 3; i++) assert.equal((await issue('198.51.100.77')).status, 201);
    assert.equal((await issue('::ffff:198.51.100.77')).status, 429);
  });

  test('a forwarded address with a port is the address: a new port per connection is no new client', async () => {
    const issue = (ip: string) =>
      server.request('POST', '/api/v1/auth/sandbox', { headers: { 'x-forwarded-for': ip } });
    const statuses = [];
    for (const ip of [
      '198.51.100.90:1001',
      '198.51.100.90:1002',
      '[::ffff:198.51.100.90]:3',
      '198.51.100.90',
    ])
      statuses.push((await issue(ip)).status);
    assert.deepEqual(statuses, [201, 201, 201, 429]);
    const invented = [];
    for (let i = 1; i <= 4; i++) invented.push((await issue(`not-an-ip-${i}`)).status);
    assert.deepEqual(invented, [201, 201, 201, 429], 'values that are no address share one budget');
  });

  test('after 72 hours the key is refused with 401 key_expired', async () => {
    const key = await sandboxKey(server);
    server.clock.advance(72 * HOUR - 1);
    assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(key) })).status, 200);
    server.clock.advance(1);
    const res = await server.request('GET', P0_COST5, { headers: bearer(key) });
    assert.equal(res.status, 401);
    assert.equal(res.json.code, 'key_expired');
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
  });
});

describe('public-test keys', () => {
  test('registration creates the account, credits 10000 once and issues a 30-day tmd_fpt_ key', async () => {
    const now = server.clock.now();
    const res = await server.request('POST', '/api/v1/auth/public-test', {
      body: { email: 'Analyst@Example.com', password: 'correct horse battery' },
    });
    assert.equal(res.status, 201, res.text);
    assert.match(res.json.key, /^tmd_fpt_/);
    assert.equal(res.json.grant_credited, true);
    assert.equal(res.json.balance, '10000');
    assert.equal(Date.parse(res.json.expires_at), now + 30 * DAY);
    assert.equal(Date.parse(res.json.window_ends_at), now + 90 * DAY);
  });

  test('new accounts are capped at 5 per client IP per 24 hours; a new key for an existing account is not', async () => {
    const ip = { 'x-forwarded-for': '192.0.2.88' };
    const register = (email: string, password = 'correct horse battery') =>
      server.request('POST', '/api/v1/auth/public-test', { headers: ip, body: { email, password } });
    for (let i = 0; i < 5; i++) assert.equal((await register(`cap${i}@example.com`)).status, 201);
    const ledgerBefore = await server.deps.store.auditLedger();
    const refused = await register('cap5@example.com');
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.json.code, 'issuance_limited');
    assert.match(refused.json.detail, /5 new public-test accounts per IP address/);
    assert.equal(refused.headers.get('retry-after'), String(24 * 3600));
    assert.equal(await server.deps.store.findAccountByEmail('cap5@example.com'), null, 'no account');
    assert.deepEqual(await server.deps.store.auditLedger(), ledgerBefore, 'no wallet, no grant');

    const rotated = await server.request('POST', '/api/v1/auth/public-test', {
      headers: ip,
      body: { email: 'cap0@example.com', password: 'correct horse battery', rotate_key: true },
    });
    assert.equal(rotated.status, 200, 'an existing account gets its new key from the same address');
    assert.equal(rotated.json.grant_credited, false);
    const probe = await register('cap1@example.com');
    assert.equal(probe.status, 429, 'registering a taken email without rotate_key counts as a new account');
    assert.equal(probe.json.code, 'issuance_limited');
    const elsewhere = await server.request('POST', '/api/v1/auth/public-test', {
      headers: { 'x-forwarded-for': '192.0.2.89' },
      body: { email: 'cap5@example.com', password: 'correct horse battery' },
    });
    assert.equal(elsewhere.status, 201, 'another address is not capped');
    server.clock.advance(DAY);
    assert.equal((await register('cap6@example.com')).status, 201, 'the window slides');
  });

  test('a P0 read burns zero and reports the notional cost', async () => {
    const { key, accountId } = await publicTestKey(server);
    const res = await server.request('GET', P0_COST5, { headers: bearer(key) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-token-cost'), '5');
    assert.equal(res.headers.get('x-request-tokens'), '0');
    assert.equal(res.headers.get('x-request-cost-eur'), '0');
    assert.equal(res.headers.get('x-credits-remaining'), '10000');
    assert.equal(res.json.meta.cost.outcome, 'notional');
    const account = await server.deps.store.getAccount(accountId);
    assert.ok(account);
    const entries = await server.deps.store.listEntries(account.walletId);
    assert.deepEqual(
      entries.map((e) => e.kind),
      ['grant'],
      'no burn entry for a notional read',
    );
    const usage = await server.request('GET', '/api/v1/me/usage', { headers: bearer(key) });
    assert.equal(usage.json.data[0].outcome, 'notional');
    assert.equal(usage.json.data[0].token_cost, '5');
    assert.equal(usage.json.data[0].tokens_burned, '0');
  });

  test('a non-P0 read is 402 not_entitled', async () => {
    const { key } = await publicTestKey(server);
    for (const path of [NON_P0, '/api/v1/data/system/api-usage', '/api/v1/data/analytics/features']) {
      const res = await server.request('GET', path, { headers: bearer(key) });
      assert.equal(res.status, 402, path);
      assert.equal(res.json.code, 'not_entitled');
    }
  });

  test('an account an operator made registers for the public test once: the grant, a key, and nothing rotated', async () => {
    const email = `operator-made-${Date.now()}@example.com`;
    const made = await adminRequest(server, 'POST', '/api/v1/admin/accounts', {
      body: { email, password: 'a long passphrase' },
    });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.json.wallet.balance, '0', 'no grant at creation');
    const refused = await server.request('POST', '/api/v1/auth/public-test', {
      headers: { 'x-forwarded-for': freshIp() },
      body: { email, password: 'a long passphrase' },
    });
    assert.equal(refused.status, 409, 'the email has an account: rotate_key asks for its key');
    assert.equal(refused.json.code, 'account_exists');
    const first = await server.request('POST', '/api/v1/auth/public-test', {
      headers: { 'x-forwarded-for': freshIp() },
      body: { email, password: 'a long passphrase', rotate_key: true },
    });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json.rotated, false, 'there was no public-test key to rotate');
    assert.equal(first.json.grant_credited, true);
    assert.equal(first.json.balance, '10000');
    const again = await server.request('POST', '/api/v1/auth/public-test', {
      headers: { 'x-forwarded-for': freshIp() },
      body: { email, password: 'a long passphrase', rotate_key: true },
    });
    assert.equal(again.json.rotated, true);
    assert.equal(again.json.grant_credited, false);
    assert.equal(again.json.balance, '10000');
  });

  test('registering an email that has an account is 409 account_exists, whatever the password, and changes nothing', async () => {
    const first = await publicTestKey(server);
    for (const password of [first.password, 'wrong password here']) {
      const res = await server.request('POST', '/api/v1/auth/public-test', {
        headers: { 'x-forwarded-for': freshIp() },
        body: { email: first.email.toUpperCase(), password },
      });
      assert.equal(res.status, 409, res.text);
      assert.equal(res.json.code, 'account_exists');
      assert.equal(res.json.title, 'An account with this email exists');
      assert.equal(
        res.json.detail,
        'An account with this email exists: sign in (or reset your password). To replace its public-test key, register again with "rotate_key": true and its password.',
      );
      assert.equal(res.json.key, undefined);
    }
    assert.equal((await server.request('GET', P0_COST5, { headers: bearer(first.key) })).status, 200);
    const keys = await server.deps.store.listKeys(first.accountId);
    assert.deepEqual(
      keys.map((k) => [k.kind, k.revokedAt]),
      [['public_test', null]],
      'no key revoked, none issued',
    );
  });

  test('registering again with rotate_key rotates the key, revokes the old one and never credits the grant twice', async () => {
    const first = await publicTestKey(server);
    const second = await server.request('POST', '/api/v1/auth/public-test', {
      body: { email: first.email, password: first.password, rotate_key: true },
    });
    assert.equal(second.status, 200);
    assert.equal(second.json.rotated, true);
    assert.equal(second.json.grant_credited, false);
    assert.equal(second.json.balance, '10000');
    assert.notEqual(second.json.key, first.key);
    const old = await server.request('GET', P0_COST5, { headers: bearer(first.key) });
    assert.equal(old.status, 401);
    assert.equal(old.json.code, 'key_revoked');
    assert.equal((await server.request('GET', P0_COST5, { headers: bearer(second.json.key) })).status, 200);
    const account = await server.deps.store.getAccount(first.accountId);
    assert.ok(account);
    const grants = (await server.deps.store.listEntries(account.walletId)).filter((e) => e.kind === 'grant');
    assert.equal(grants.length, 1);
  });

  test('rotate_key with a wrong password is 401 invalid_login and changes nothing', async () => {
    const first = await publicTestKey(server);
    const res = await server.request('POST', '/api/v1/auth/public-test', {
      body: { email: first.email, password: 'wrong password here', rotate_key: true },
    });
    assert.equal(res.status, 401);
    assert.equal(res.json.code, 'invalid_login');
    assert.equal(
      (await server.request('GET', P0_COST5, { headers: bearer(first.key) })).status,
      200,
      'old key still works',
    );
  });

  test('the key expires after 30 days; inside the window a new one is issued, after 90 days the window is closed', async () => {
    const first = await publicTestKey(server);
    server.clock.advance(30 * DAY);
    const expired = await server.request('GET', P0_COST5, { headers: bearer(first.key) });
    assert.equal(expired.status, 401);
    assert.equal(expired.json.code, 'key_expired');
    server.clock.advance(45 * DAY);
    const renewed = await server.request('POST', '/api/v1/auth/public-test', {
      body: { email: first.email, password: first.password, rotate_key: true },
    });
    assert.equal(renewed.status, 200);
    assert.equal(
      Date.parse(renewed.json.expires_at),
      Date.parse(renewed.json.window_ends_at),
      'capped at the window end',
    );
    server.clock.advance(15 * DAY);
    const closed = await server.request('POST', '/api/v1/auth/public-test', {
      body: { email: first.email, password: first.password, rotate_key: true },
    });
    assert.equal(closed.status, 403);
    assert.equal(closed.json.code, 'public_test_window_closed');
    const lastKey = await server.request('GET', P0_COST5, { headers: bearer(renewed.json.key) });
    assert.equal(lastKey.status, 401);
    assert.equal(lastKey.json.code, 'key_expired');
  });

  test("a key's expires_at is one value everywhere; the account's window end is apart, named as such", async () => {
    const registered = await publicTestKey(server);
    const { expires_at: expiresAt, window_ends_at: windowEndsAt } = registered.body;
    assert.equal(Date.parse(expiresAt), server.clock.now() + 30 * DAY);
    assert.equal(Date.parse(windowEndsAt), server.clock.now() + 90 * DAY);
    const session = (
      await server.request('POST', '/api/v1/auth/login', {
        body: { email: registered.email, password: registered.password },
      })
    ).json.token;
    const expiries = async () => {
      const listed = await server.request('GET', '/api/v1/keys', { headers: bearer(session) });
      const byKey = await server.request('GET', '/api/v1/me', { headers: bearer(registered.key) });
      return { listed: listed.json.data[0].expires_at, me: byKey.json.credential.expires_at };
    };
    assert.deepEqual(await expiries(), { listed: expiresAt, me: expiresAt });
    const me = await server.request('GET', '/api/v1/me', { headers: bearer(session) });
    assert.equal(me.json.account.public_test_window_ends_at, windowEndsAt);

    // The operator ends the public test sooner: the key stops then, and says so wherever it is shown.
    const fpt = server.deps.config.pricing.free_public_test;
    const endsAt = new Date(server.clock.now() + 10 * DAY).toISOString();
    const before = fpt.ends_at;
    fpt.ends_at = endsAt;
    try {
      assert.deepEqual(await expiries(), { listed: endsAt, me: endsAt });
      const again = await server.request('GET', '/api/v1/me', { headers: bearer(session) });
      assert.equal(again.json.account.public_test_window_ends_at, endsAt);
    } finally {
      fpt.ends_at = before;
    }
  });

  test('a public-test key cannot manage keys', async () => {
    const { key } = await publicTestKey(server);
    const res = await server.request('POST', '/api/v1/keys', { headers: bearer(key), body: {} });
    assert.equal(res.status, 403);
    assert.equal(res.json.code, 'forbidden');
  });
});

describe('live keys and sessions', () => {
  test('a session creates, lists and revokes live keys; a revoked key is 401 key_revoked', async () => {
    const { session, key } = await walletAccount(server, 50);
    assert.match(key, /^tmd_live_/);
    const listed = await server.request('GET', '/api/v1/keys', { headers: bearer(session) });
    assert.equal(listed.status, 200);
    assert.equal(listed.json.data.length, 1);
    assert.equal(listed.json.data[0].status, 'active');
    assert.ok(!JSON.stringify(listed.json).includes(key), 'the key string is never listed');
    const read = await server.request('GET', NON_P0, { headers: bearer(key) });
    assert.equal(read.status, 200, 'a live key reads non-P0 data');
    assert.equal(read.headers.get('x-request-tokens'), '2');
    const revoked = await server.request('DELETE', `/api/v1/keys/${listed.json.data[0].id}`, {
      headers: bearer(session),
    });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.json.status, 'revoked');
    const refused = await server.request('GET', NON_P0, { headers: bearer(key) });
    assert.equal(refused.status, 401);
    assert.equal(refused.json.code, 'key_revoked');
  });

  test('a key cannot manage keys, and logout ends the session', async () => {
    const { session, key } = await walletAccount(server, 0);
    assert.equal((await server.request('GET', '/api/v1/keys', { headers: bearer(key) })).status, 403);
    assert.equal(
      (await server.request('POST', '/api/v1/auth/logout', { headers: bearer(session) })).status,
      204,
    );
    const after = await server.request('GET', '/api/v1/keys', { headers: bearer(session) });
    assert.equal(after.status, 401);
    assert.equal(after.json.code, 'invalid_session');
  });

  test('a session ends at its stored end, even behind a token that says later (a leaked signing secret)', async () => {
    const { session } = await walletAccount(server, 0);
    const claims = decodeJwt(session);
    const secret = new TextEncoder().encode('a-secret-of-this-test-only-0123456789');
    const sessions = new Sessions(server.deps.store, secret, () => server.clock.now());
    const longer = await new SignJWT({ chn: 'rest' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(claims.iss as string)
      .setSubject(claims.sub as string)
      .setJti(claims.jti as string)
      .setExpirationTime(Math.floor(server.clock.now() / 1000) + 30 * 24 * 3600)
      .sign(secret);
    assert.equal(
      (await sessions.verify(longer)).sessionId,
      claims.jti,
      'the forged token names a live session',
    );
    server.clock.advance(SESSION_TTL_MS);
    await assert.rejects(sessions.verify(longer), (error: AppError) => {
      assert.equal(error.code, 'invalid_session');
      assert.match(error.message, /expired/);
      return true;
    });
  });

  test("the session cookie works only from this service's own origin for anything but reads", async () => {
    const { session } = await walletAccount(server, 0);
    const own = server.origin;
    const cookie = { cookie: `tmd_session=${session}`, 'content-type': 'text/plain' };
    // A page of another origin (a same-site subdomain sends the SameSite=Strict cookie too).
    for (const origin of ['https://evil.example', 'http://sub.127.0.0.1.nip.io', 'null']) {
      const forged = await server.request('POST', '/api/v1/keys', {
        headers: { ...cookie, origin },
        raw: '',
      });
      assert.equal(forged.status, 403, origin);
      assert.equal(forged.json.code, 'forbidden');
      assert.match(forged.json.detail, /another origin/);
      assert.match(forged.headers.get('ratelimit') ?? '', /"ip";/, 'counted against the IP fence');
    }
    const keysBefore = (await server.request('GET', '/api/v1/keys', { headers: bearer(session) })).json;
    // Its own pages, and clients that send no Origin (curl, the CLI), are served.
    const ownPage = await server.request('POST', '/api/v1/keys', {
      headers: { ...cookie, origin: own },
      raw: '',
    });
    assert.equal(ownPage.status, 201, ownPage.text);
    assert.equal((await server.request('POST', '/api/v1/keys', { headers: cookie, raw: '' })).status, 201);
    // Reads are not forgeries, and a Bearer session from anywhere is the caller's own choice.
    const read = await server.request('GET', '/api/v1/me', {
      headers: { ...cookie, origin: 'https://evil.example' },
    });
    assert.equal(read.status, 200);
    const bearerSession = await server.request('POST', '/api/v1/keys', {
      headers: { ...bearer(session), origin: 'https://evil.example' },
      body: {},
    });
    assert.equal(bearerSession.status, 201, bearerSession.text);
    const keysAfter = (await server.request('GET', '/api/v1/keys', { headers: bearer(session) })).json;
    assert.equal(keysAfter.data.length, keysBefore.data.length + 3, 'no key came of the forged requests');
  });

  test('a session cookie that no longer works never locks a client out of logging in again', async () => {
    const { session, email, password } = await walletAccount(server, 0);
    await server.request('POST', '/api/v1/auth/logout', { headers: bearer(session) });
    const cookie = { cookie: `tmd_session=${session}`, 'x-forwarded-for': '203.0.113.77' };
    const login = await server.request('POST', '/api/v1/auth/login', {
      headers: cookie,
      body: { email, password },
    });
    assert.equal(login.status, 200, login.text);
    assert.equal((await server.request('POST', '/api/v1/auth/sandbox', { headers: cookie })).status, 201);
    assert.equal((await server.request('GET', '/api/v1/catalog', { headers: cookie })).status, 200);
    // Where a credential is needed, the 401 also tells the browser to drop the cookie.
    for (const [method, path] of [
      ['GET', '/api/v1/me'],
      ['POST', '/api/v1/auth/logout'],
    ] as const) {
      const res = await server.request(method, path, { headers: cookie });
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.equal(res.json.code, 'invalid_session');
      assert.match(res.headers.get('set-cookie') ?? '', /^tmd_session=; .*Max-Age=0/);
    }
    // An explicit header is the client's own choice: a bad one is still refused where it is read.
    const stale = await server.request('GET', '/api/v1/catalog', { headers: bearer(session) });
    assert.equal(stale.status, 401);
    assert.equal(stale.headers.get('set-cookie'), null);
  });

  test('the session cookie holds a session only: garbage or a key in it is invalid_session, and cleared', async () => {
    const { key } = await walletAccount(server, 10);
    for (const value of ['garbage', key, 'a.b']) {
      const res = await server.request('GET', '/api/v1/me', { headers: { cookie: `tmd_session=${value}` } });
      assert.equal(res.status, 401, `${value}: ${res.text}`);
      assert.equal(res.json.code, 'invalid_session', value);
      assert.match(res.headers.get('set-cookie') ?? '', /^tmd_session=; .*Max-Age=0/);
    }
    assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(key) })).status, 200);
  });

  test('issuance and login read no credential: an expired key sent along does not stop them', async () => {
    const expired = await sandboxKey(server, '203.0.113.78');
    server.clock.advance(73 * HOUR);
    const res = await server.request('POST', '/api/v1/auth/sandbox', {
      headers: { ...bearer(expired), 'x-forwarded-for': '203.0.113.78' },
    });
    assert.equal(res.status, 201, res.text);
  });

  test('a live key with an expiry stops at that instant', async () => {
    const { session } = await walletAccount(server, 10);
    const expiresAt = new Date(server.clock.now() + HOUR).toISOString();
    const created = await server.request('POST', '/api/v1/keys', {
      headers: bearer(session),
      body: { name: 'short', expires_at: expiresAt },
    });
    assert.equal(created.status, 201);
    server.clock.advance(HOUR);
    const res = await server.request('GET', '/api/v1/me', { headers: bearer(created.json.key) });
    assert.equal(res.status, 401);
    assert.equal(res.json.code, 'key_expired');
  });

  test('an expiry may be written with an offset: it is that instant, given back in UTC', async () => {
    const { session } = await walletAccount(server, 10);
    const at = server.clock.now() + 2 * HOUR;
    const local = new Date(at + HOUR).toISOString().replace('.000Z', '+01:00');
    const created = await server.request('POST', '/api/v1/keys', {
      headers: bearer(session),
      body: { name: 'offset', expires_at: local },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(Date.parse(created.json.expires_at), at);
    const local2 = await server.request('POST', '/api/v1/keys', {
      headers: bearer(session),
      body: { expires_at: '2027-01-01T00:00:00' },
    });
    assert.equal(local2.status, 400, 'a time without its zone is refused: never the server local time');
    const past9999 = await server.request('POST', '/api/v1/keys', {
      headers: bearer(session),
      body: { expires_at: '9999-12-31T23:59:59-23:59' },
    });
    assert.equal(past9999.status, 400, 'an offset cannot carry an expiry past the year 9999');
  });

  test('a Terminal session pays the 35% surcharge after the discount', async () => {
    const { email, password } = await walletAccount(server, 100);
    const login = await server.request('POST', '/api/v1/auth/login', {
      body: { email, password, client: 'terminal' },
    });
    assert.equal(login.status, 200);
    const res = await server.request('GET', P0_COST5, { headers: bearer(login.json.token) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-token-cost'), '6.75');
    assert.equal(res.headers.get('x-request-tokens'), '6.75');
    assert.equal(res.headers.get('x-request-cost-eur'), '0.675');
    assert.equal(res.headers.get('x-credits-remaining'), '93.25');
  });

  test('missing credentials are 401 missing_credentials with a Bearer challenge', async () => {
    const res = await server.request('GET', P0_COST5);
    assert.equal(res.status, 401);
    assert.equal(res.json.code, 'missing_credentials');
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer realm=/);
  });
});
