import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { MailMessage } from '../../src/domain/mail.ts';
import { PasswordResets, RESET_PAGE } from '../../src/domain/password-resets.ts';
import { hashPassword, verifyPassword } from '../../src/domain/passwords.ts';
import { Sessions } from '../../src/domain/sessions.ts';
import { MemoryLimiter } from '../../src/limits/memory-limiter.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { appError, memoryStore, serviceConfig, T0 } from './support.ts';

const ORIGIN = 'https://tmd.example';
let store: SqliteStore;
let now = T0;
const mail: MailMessage[] = [];
let resets: PasswordResets;

function tokenOf(message: MailMessage | undefined): string {
  const link = message?.text.split('\n').find((line) => line.startsWith(ORIGIN)) ?? assert.fail('no link');
  const url = new URL(link);
  assert.equal(url.pathname, RESET_PAGE);
  return url.searchParams.get('token') ?? assert.fail('no token');
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

before(async () => {
  store = await memoryStore();
  await store.createAccount(
    {
      id: 'acc_r',
      email: 'reset@example.com',
      passwordHash: await hashPassword('old password'),
      walletId: 'wal_r',
      createdAt: T0,
      publicTestStartedAt: null,
    },
    '2026-11',
  );
  resets = new PasswordResets({
    store,
    limiter: new MemoryLimiter(),
    mailer: { send: async (message) => void mail.push(message) },
    config: serviceConfig(),
    now: () => now,
    ipSalt: 'salt',
    onMailFailure: (error) => assert.fail(String(error)),
  });
});
after(() => store.close());

test('an account is mailed one link that works for 30 minutes; only its digest is stored', async () => {
  now = T0;
  await resets.request(' RESET@example.com ', '192.0.2.1', ORIGIN);
  await settle();
  assert.equal(mail.length, 1);
  const [message] = mail;
  assert.deepEqual([message?.to, message?.subject], ['reset@example.com', 'Reset your password']);
  assert.match(message?.text ?? '', /The link works once, until 2026-11-21 15:30 UTC:/);
  const token = tokenOf(message);
  assert.match(token, /^[A-Za-z0-9_-]{43}$/);
  const stored = await store.findPasswordReset(createHash('sha256').update(token).digest('hex'));
  assert.deepEqual(
    [stored?.accountId, stored?.createdAt, stored?.expiresAt, stored?.usedAt],
    ['acc_r', T0, T0 + 30 * 60_000, null],
  );
});

test('an unknown email gets the same answer and no mail', async () => {
  const before = mail.length;
  await resets.request('nobody@example.com', '192.0.2.2', ORIGIN);
  await settle();
  assert.equal(mail.length, before);
});

test('the link sets the password once and ends every session; used again it is 400', async () => {
  now = T0;
  const sessions = new Sessions(
    store,
    new TextEncoder().encode('unit-secret-unit-secret-unit-secret-0123'),
    () => now,
  );
  const { session } = await sessions.issue('acc_r', 'terminal');
  const token = tokenOf(mail[0]);
  assert.deepEqual(await resets.confirm(token, 'new password'), { sessionsEnded: 1 });
  const account = await store.getAccount('acc_r');
  assert.equal(await verifyPassword('new password', account?.passwordHash ?? ''), true);
  assert.notEqual((await store.getSession(session.id))?.revokedAt, null);
  await assert.rejects(resets.confirm(token, 'another password'), (error: Error & { code: string }) => {
    assert.equal(error.code, 'invalid_reset_token');
    assert.equal(
      error.message,
      'This password-reset link has already been used. Ask for a new link: "Forgot password?" on the sign-in page.',
    );
    return true;
  });
  await assert.rejects(resets.confirm('not-a-token', 'x'), appError('invalid_reset_token', 400));
});

test('a link expires 30 minutes after it was asked for', async () => {
  now = T0 + 3_600_000;
  await resets.request('reset@example.com', '192.0.2.3', ORIGIN);
  await settle();
  const token = tokenOf(mail.at(-1));
  now += 30 * 60_000;
  await assert.rejects(resets.confirm(token, 'new password'), (error: Error & { code: string }) => {
    assert.equal(error.code, 'invalid_reset_token');
    assert.match(error.message, /expired at 2026-11-21T16:30:00.000Z/);
    return true;
  });
});

test('3 requests per email an hour, then 429 password_reset_limited with Retry-After', async () => {
  now = T0 + 10 * 3_600_000;
  for (let i = 0; i < 3; i++) await resets.request('limit@example.com', `198.51.100.${i}`, ORIGIN);
  await assert.rejects(
    resets.request('limit@example.com', '198.51.100.9', ORIGIN),
    (error: { code: string; status: number; headers: Record<string, string> }) => {
      assert.deepEqual([error.code, error.status], ['password_reset_limited', 429]);
      assert.equal(error.headers['retry-after'], '3600');
      return true;
    },
  );
});

test('without a mailer, reset is 503 password_reset_unavailable', async () => {
  const off = new PasswordResets({
    store,
    limiter: new MemoryLimiter(),
    mailer: null,
    config: serviceConfig(),
    now: () => now,
    ipSalt: 'salt',
    onMailFailure: () => {},
  });
  await assert.rejects(
    off.request('reset@example.com', '192.0.2.1', ORIGIN),
    appError('password_reset_unavailable', 503),
  );
});
