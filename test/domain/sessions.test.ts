import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { SESSION_TTL_MS, Sessions } from '../../src/domain/sessions.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { appError, memoryStore, T0 } from './support.ts';

const secret = new TextEncoder().encode('unit-secret-unit-secret-unit-secret-0123');
let store: SqliteStore;
let now = T0;
let sessions: Sessions;

before(async () => {
  store = await memoryStore();
  await store.createAccount(
    {
      id: 'acc_s',
      email: 's@example.com',
      passwordHash: null,
      walletId: 'wal_s',
      createdAt: T0,
      publicTestStartedAt: null,
    },
    '2026-11',
  );
  sessions = new Sessions(store, secret, () => now);
});
after(() => store.close());

test('a session is an HS256 JWT for 12 hours, stored, and verifies to its claims', async () => {
  now = T0;
  const { token, session } = await sessions.issue('acc_s', 'terminal');
  assert.equal(SESSION_TTL_MS, 43_200_000);
  assert.deepEqual(decodeProtectedHeader(token), { alg: 'HS256', typ: 'JWT' });
  const claims = decodeJwt(token);
  assert.deepEqual(claims, {
    chn: 'terminal',
    iss: 'token-metered-data',
    sub: 'acc_s',
    jti: session.id,
    iat: T0 / 1000,
    exp: (T0 + SESSION_TTL_MS) / 1000,
  });
  assert.deepEqual(await store.getSession(session.id), session);
  assert.deepEqual(await sessions.verify(token), {
    sessionId: session.id,
    accountId: 'acc_s',
    channel: 'terminal',
    expiresAt: T0 + SESSION_TTL_MS,
  });
});

test('an expired, revoked, forged or unknown session is 401 invalid_session', async () => {
  now = T0;
  const { token, session } = await sessions.issue('acc_s', 'rest');
  assert.equal((await sessions.verify(token)).channel, 'rest');
  now = T0 + SESSION_TTL_MS;
  await assert.rejects(sessions.verify(token), appError('invalid_session', 401));
  now = T0;
  await sessions.revoke(session.id);
  await assert.rejects(
    sessions.verify(token),
    (e: Error) => e.message === 'The session has ended (logged out).',
  );
  await assert.rejects(sessions.verify(`${token}x`), appError('invalid_session', 401));
  const other = new TextEncoder().encode('another-secret-another-secret-another-01');
  const { token: foreign } = await new Sessions(store, other, () => now).issue('acc_s', 'rest');
  await assert.rejects(sessions.verify(foreign), appError('invalid_session'));
  const unknown = await new SignJWT({ chn: 'rest' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('token-metered-data')
    .setSubject('acc_s')
    .setJti('ses_none')
    .setIssuedAt(T0 / 1000)
    .setExpirationTime(T0 / 1000 + 60)
    .sign(secret);
  await assert.rejects(sessions.verify(unknown), appError('invalid_session'));
});

test("the stored end holds even when a token's own exp says later", async () => {
  now = T0;
  const { session } = await sessions.issue('acc_s', 'rest');
  const longer = await new SignJWT({ chn: 'rest' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('token-metered-data')
    .setSubject('acc_s')
    .setJti(session.id)
    .setIssuedAt(T0 / 1000)
    .setExpirationTime(T0 / 1000 + 10 * SESSION_TTL_MS)
    .sign(secret);
  now = T0 + SESSION_TTL_MS + 1;
  await assert.rejects(
    sessions.verify(longer),
    (e: Error) => e.message === 'The session has expired: log in again.',
  );
});
