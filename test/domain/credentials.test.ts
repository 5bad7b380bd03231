import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ServiceFile } from '../../src/config.ts';
import {
  Credentials,
  LOGIN_GUESSES_PER_IP,
  SIGNUP_GRANT_IDEMPOTENCY_KEY,
} from '../../src/domain/credentials.ts';
import { looksLikeKey } from '../../src/domain/keys.ts';
import { hashPassword } from '../../src/domain/passwords.ts';
import { Sessions } from '../../src/domain/sessions.ts';
import { MemoryLimiter } from '../../src/limits/memory-limiter.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { appError, memoryStore, serviceConfig, T0 } from './support.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let store: SqliteStore;
let now = T0;
let config: ServiceFile;
let credentials: Credentials;

before(async () => {
  store = await memoryStore();
  config = serviceConfig();
  const sessions = new Sessions(
    store,
    new TextEncoder().encode('unit-secret-unit-secret-unit-secret-0123'),
    () => now,
  );
  credentials = new Credentials({
    store,
    limiter: new MemoryLimiter(),
    sessions,
    config,
    now: () => now,
    ipSalt: 'salt',
  });
});
after(() => store.close());

test('a sandbox key: tmd_sbx_, 72 hours, a wallet of its own granted 2500 tokens', async () => {
  now = T0;
  const issued = await credentials.issueSandbox('192.0.2.1');
  assert.equal(looksLikeKey(issued.secret), true);
  assert.ok(issued.secret.startsWith('tmd_sbx_'));
  assert.equal(issued.grantMicros, 2_500_000_000n);
  assert.deepEqual(
    [issued.record.kind, issued.record.accountId, issued.record.expiresAt, issued.record.createdAt],
    ['sandbox', null, T0 + 72 * HOUR, T0],
  );
  assert.equal((await store.getWallet(issued.record.walletId))?.balanceMicros, 2_500_000_000n);
});

test('3 sandbox keys per client IP in 24 hours, then 429 issuance_limited with Retry-After', async () => {
  now = T0;
  await credentials.issueSandbox('198.51.100.7');
  await credentials.issueSandbox('198.51.100.7');
  await credentials.issueSandbox('198.51.100.7');
  await assert.rejects(
    credentials.issueSandbox('198.51.100.7'),
    (error: {
      code: string;
      status: number;
      headers: Record<string, string>;
      extras: { retry_after: number };
    }) => {
      assert.deepEqual([error.code, error.status], ['issuance_limited', 429]);
      assert.equal(error.headers['retry-after'], String(error.extras.retry_after));
      assert.ok(error.extras.retry_after > 0 && error.extras.retry_after <= 86_400);
      return true;
    },
  );
  await credentials.issueSandbox('198.51.100.8');
});

test('switched off, sandbox issuance is 403 forbidden', async () => {
  config.sandbox.enabled = false;
  await assert.rejects(credentials.issueSandbox('192.0.2.9'), appError('forbidden', 403));
  config.sandbox.enabled = true;
});

test('registering makes the account with its 10000-token grant and a 30-day public-test key', async () => {
  now = T0;
  const first = await credentials.registerPublicTest(
    ' New@Example.com ',
    'correct horse battery',
    '203.0.113.1',
  );
  assert.deepEqual(
    [first.created, first.rotated, first.grantCredited, first.balanceMicros],
    [true, false, true, 10_000_000_000n],
  );
  assert.equal(first.account.email, 'new@example.com');
  assert.equal(first.account.publicTestStartedAt, T0);
  assert.deepEqual([first.record.kind, first.record.expiresAt], ['public_test', T0 + 30 * DAY]);
  assert.equal(credentials.publicTestWindowEnd(first.account), T0 + 90 * DAY);
  const [grant] = await store.listEntries(first.account.walletId);
  assert.equal(grant?.idempotencyKey, SIGNUP_GRANT_IDEMPOTENCY_KEY);
});

test('the same email again is 409 account_exists; rotate_key with its password replaces the key, no new grant', async () => {
  now = T0 + DAY;
  await assert.rejects(
    credentials.registerPublicTest('new@example.com', 'correct horse battery', '203.0.113.2'),
    appError('account_exists', 409),
  );
  await assert.rejects(
    credentials.registerPublicTest('new@example.com', 'wrong password', '203.0.113.2', true),
    appError('invalid_login', 401),
  );
  const again = await credentials.registerPublicTest(
    'new@example.com',
    'correct horse battery',
    '203.0.113.2',
    true,
  );
  assert.deepEqual([again.created, again.rotated, again.grantCredited], [false, true, false]);
  assert.equal(again.balanceMicros, 10_000_000_000n);
  const keys = await store.listKeys(again.account.id);
  assert.deepEqual(keys.map((k) => k.revokedAt === null).sort(), [false, true]);
});

test('after the 90-day window registering is 403 public_test_window_closed; so after ends_at', async () => {
  now = T0 + 90 * DAY;
  await assert.rejects(
    credentials.registerPublicTest('new@example.com', 'correct horse battery', '203.0.113.3', true),
    (error: { code: string; extras: unknown }) => {
      assert.equal(error.code, 'public_test_window_closed');
      assert.deepEqual(error.extras, { closed_at: '2027-02-19T15:00:00.000Z' });
      return true;
    },
  );
  config.pricing.free_public_test.ends_at = '2026-11-01T00:00:00Z';
  await assert.rejects(
    credentials.registerPublicTest('late@example.com', 'correct horse battery', '203.0.113.3'),
    appError('public_test_window_closed'),
  );
  config.pricing.free_public_test.ends_at = null;
  now = T0;
});

test('a login issues a session; a wrong password is 401 invalid_login, and 5 of them throttle (429)', async () => {
  now = T0;
  const made = await store.createAccount(
    {
      id: 'acc_l',
      email: 'login@example.com',
      passwordHash: await hashPassword('right password'),
      walletId: 'wal_l',
      createdAt: T0,
      publicTestStartedAt: null,
    },
    '2026-11',
  );
  const { session, account } = await credentials.login(
    'LOGIN@example.com',
    'right password',
    'terminal',
    '192.0.2.50',
  );
  assert.deepEqual([session.accountId, account.id], [made.id, made.id]);
  for (let i = 0; i < 5; i++) {
    await assert.rejects(
      credentials.login('login@example.com', 'wrong', 'rest', `192.0.2.${60 + i}`),
      appError('invalid_login', 401),
    );
  }
  await assert.rejects(
    credentials.login('login@example.com', 'right password', 'rest', '192.0.2.70'),
    appError('login_throttled', 429),
  );
  await assert.rejects(
    credentials.login('nobody@example.com', 'x', 'rest', '192.0.2.71'),
    appError('invalid_login', 401),
  );
  assert.equal(LOGIN_GUESSES_PER_IP, 4);
  await credentials.logout(session.id);
  assert.notEqual((await store.getSession(session.id))?.revokedAt, null);
});

test('live keys: named, optionally expiring in the future; revoked only on their own account', async () => {
  now = T0;
  const owner = (await store.getAccount('acc_l')) ?? assert.fail('no account');
  const issued = await credentials.createLiveKey(owner, 'ci', T0 + DAY);
  assert.deepEqual(
    [issued.record.kind, issued.record.name, issued.record.expiresAt, issued.record.walletId],
    ['live', 'ci', T0 + DAY, 'wal_l'],
  );
  assert.ok(issued.secret.startsWith('tmd_live_'));
  await assert.rejects(credentials.createLiveKey(owner, null, T0), appError('invalid_request', 400));
  const stranger = { ...owner, id: 'acc_other' };
  await assert.rejects(credentials.revokeKey(stranger, issued.record.id), appError('not_found', 404));
  const revoked = await credentials.revokeKey(owner, issued.record.id);
  assert.equal(revoked.revokedAt, T0);
});
