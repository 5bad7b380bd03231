import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Connections, type PendingConsent } from '../../src/domain/connections.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { account, appError, caller, knownTokens, memoryStore, T0 } from './support.ts';

const consent = (uid: string): PendingConsent => ({
  uid,
  clientId: 'https://client.example/meta.json',
  clientName: 'Example Client',
  redirectUri: 'https://client.example:8443/callback',
  scopes: ['read'],
  resource: 'https://tmd.example/mcp/jsonrpc',
  expiresAt: T0 + 600_000,
});

let store: SqliteStore;
const server = knownTokens({}, { uid_1: consent('uid_1'), uid_2: consent('uid_2'), uid_3: consent('uid_3') });
let connections: Connections;
const session = caller('session', { account: account({ id: 'acc_c', walletId: 'wal_c' }) });

before(async () => {
  store = await memoryStore();
  await store.createAccount(
    {
      id: 'acc_c',
      email: 'c@example.com',
      passwordHash: null,
      walletId: 'wal_c',
      createdAt: T0,
      publicTestStartedAt: null,
    },
    '2026-11',
  );
  connections = new Connections(store, server, () => T0);
});
after(() => store.close());

test('without an OAuth server connections are off: 404 not_found', async () => {
  const off = new Connections(store, null, () => T0);
  assert.equal(off.enabled, false);
  assert.equal(connections.enabled, true);
  await assert.rejects(off.pending('uid_1'), appError('not_found', 404));
});

test('a pending sign-in is found by its uid; an unknown one is 404 not_found', async () => {
  assert.deepEqual(await connections.pending('uid_1'), consent('uid_1'));
  await assert.rejects(connections.pending('uid_none'), appError('not_found', 404));
});

test('approving makes a live key with the caps, named for the client, and the connection', async () => {
  const { redirectTo, view } = await connections.approve(session, 'uid_1', {
    dailyCapMicros: 10_000_000n,
    monthlyCapMicros: null,
  });
  assert.equal(redirectTo, 'https://client.example/callback?code=uid_1');
  assert.deepEqual(server.approved, [`uid_1:${view.key.id}`]);
  assert.deepEqual(view.connection, {
    keyId: view.key.id,
    accountId: 'acc_c',
    clientId: 'https://client.example/meta.json',
    clientName: 'Example Client',
    redirectHost: 'client.example:8443',
    createdAt: T0,
  });
  assert.deepEqual(
    { ...view.key, id: 'id', digest: 'digest' },
    {
      id: 'id',
      kind: 'live',
      digest: 'digest',
      displayPrefix: 'OAuth',
      name: 'Example Client',
      accountId: 'acc_c',
      walletId: 'wal_c',
      createdAt: T0,
      expiresAt: null,
      revokedAt: null,
      dailyCapMicros: 10_000_000n,
      monthlyCapMicros: null,
    },
  );
  assert.deepEqual(await store.getKey(view.key.id), view.key);
  assert.deepEqual(await connections.list(session), [view]);
});

test('denying sends the client back refused and makes nothing', async () => {
  const before = (await connections.list(session)).length;
  assert.equal(
    await connections.deny(session, 'uid_2'),
    'https://client.example/callback?error=access_denied',
  );
  assert.deepEqual(server.denied, ['uid_2']);
  assert.equal((await connections.list(session)).length, before);
  await assert.rejects(connections.deny(session, 'uid_none'), appError('not_found'));
});

test('a credential without an account is 403 forbidden', async () => {
  const sandbox = caller('sandbox');
  await assert.rejects(
    connections.approve(sandbox, 'uid_3', { dailyCapMicros: null, monthlyCapMicros: null }),
    appError('forbidden', 403),
  );
  await assert.rejects(connections.deny(sandbox, 'uid_3'), appError('forbidden', 403));
  await assert.rejects(connections.list(sandbox), appError('forbidden', 403));
});
