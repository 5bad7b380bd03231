import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Authenticator, looksLikeSession } from '../../src/domain/auth.ts';
import { newKey } from '../../src/domain/keys.ts';
import { Sessions } from '../../src/domain/sessions.ts';
import type { KeyKind } from '../../src/store/port.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { appError, keyRecord, knownTokens, memoryStore, T0 } from './support.ts';

const DAY = 86_400_000;
const ACCESS_TOKEN = 'a'.repeat(43);
let store: SqliteStore;
let sessions: Sessions;
let now = T0;
let publicTestEnd: number | null = null;
let auth: Authenticator;

async function issue(id: string, kind: KeyKind, fields: { expiresAt?: number | null } = {}) {
  const key = newKey(kind);
  await store.insertKey(
    keyRecord({ id, kind, digest: key.digest, accountId: 'acc_a', walletId: 'wal_a', ...fields }),
  );
  return key.secret;
}

before(async () => {
  store = await memoryStore();
  await store.createAccount(
    {
      id: 'acc_a',
      email: 'a@example.com',
      passwordHash: null,
      walletId: 'wal_a',
      createdAt: T0,
      publicTestStartedAt: null,
    },
    '2026-11',
  );
  sessions = new Sessions(
    store,
    new TextEncoder().encode('unit-secret-unit-secret-unit-secret-0123'),
    () => now,
  );
  auth = new Authenticator(
    store,
    sessions,
    () => now,
    () => publicTestEnd,
    knownTokens({ [ACCESS_TOKEN]: 'key_oauth' }),
  );
});
after(() => store.close());

test('a key reads as its kind, key, account and wallet on the face it came through', async () => {
  const secret = await issue('key_live', 'live');
  const caller = await auth.authenticate(secret, 'mcp');
  assert.equal(caller.kind, 'live');
  assert.equal(caller.key?.id, 'key_live');
  assert.equal(caller.account?.id, 'acc_a');
  assert.deepEqual(caller.wallet, {
    id: 'wal_a',
    accountId: 'acc_a',
    balanceMicros: 0n,
    burnMonth: '2026-11',
    burnMonthMicros: 0n,
  });
  assert.equal(caller.channel, 'mcp');
  assert.equal(caller.expiresAt, null);
});

test('junk, unknown and wrongly shaped keys are 401 invalid_key', async () => {
  await assert.rejects(auth.authenticate('tmd_live_short', 'rest'), appError('invalid_key', 401));
  await assert.rejects(auth.authenticate(newKey('live').secret, 'rest'), appError('invalid_key', 401));
  await assert.rejects(auth.authenticate('hello', 'rest'), appError('invalid_key', 401));
});

test('a revoked key is 401 key_revoked; an expired one 401 key_expired with the instant', async () => {
  const revoked = await issue('key_revoked', 'live');
  await store.revokeKey('key_revoked', T0);
  await assert.rejects(auth.authenticate(revoked, 'rest'), appError('key_revoked', 401));
  const expiring = await issue('key_sbx', 'sandbox', { expiresAt: T0 + 3 * DAY });
  assert.equal((await auth.authenticate(expiring, 'rest')).expiresAt, T0 + 3 * DAY);
  now = T0 + 3 * DAY;
  await assert.rejects(auth.authenticate(expiring, 'rest'), (error: { code: string; extras: unknown }) => {
    assert.equal(error.code, 'key_expired');
    assert.deepEqual(error.extras, { expired_at: '2026-11-24T15:00:00.000Z' });
    return true;
  });
  now = T0;
});

test("a public-test key stops at the public test's end when that comes first", async () => {
  const secret = await issue('key_fpt', 'public_test', { expiresAt: T0 + 30 * DAY });
  publicTestEnd = T0 + DAY;
  assert.equal((await auth.authenticate(secret, 'rest')).expiresAt, T0 + DAY);
  now = T0 + DAY;
  await assert.rejects(auth.authenticate(secret, 'rest'), appError('key_expired'));
  now = T0;
  publicTestEnd = null;
});

test('a Terminal session reads from the Terminal whatever the face; a REST one takes the face', async () => {
  const terminal = await sessions.issue('acc_a', 'terminal');
  assert.equal(looksLikeSession(terminal.token), true);
  const caller = await auth.authenticate(terminal.token, 'rest');
  assert.deepEqual(
    {
      kind: caller.kind,
      key: caller.key,
      account: caller.account?.id,
      channel: caller.channel,
      sessionId: caller.sessionId,
    },
    { kind: 'session', key: null, account: 'acc_a', channel: 'terminal', sessionId: terminal.session.id },
  );
  const rest = await sessions.issue('acc_a', 'rest');
  assert.equal((await auth.authenticate(rest.token, 'mcp')).channel, 'mcp');
  assert.equal(looksLikeSession('a.b'), false);
});

test('an OAuth access token reads as its connection key, on MCP only', async () => {
  const key = newKey('live');
  await store.insertKey(
    keyRecord({ id: 'key_oauth', digest: key.digest, accountId: 'acc_a', walletId: 'wal_a' }),
  );
  const caller = await auth.authenticate(ACCESS_TOKEN, 'mcp');
  assert.equal(caller.key?.id, 'key_oauth');
  await assert.rejects(auth.authenticate(ACCESS_TOKEN, 'rest'), appError('invalid_token', 401));
  await assert.rejects(auth.authenticate('b'.repeat(43), 'mcp'), appError('invalid_token', 401));
  await store.revokeKey('key_oauth', T0);
  await assert.rejects(auth.authenticate(ACCESS_TOKEN, 'mcp'), (error: Error & { code: string }) => {
    assert.equal(error.code, 'invalid_token');
    assert.match(error.message, /revoked on the account's Keys page/);
    return true;
  });
});
