import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  connectionOut,
  pendingConsentOut,
  presentConnection,
  presentPendingConsent,
} from '../../src/views/connections.ts';
import { keyRecord, T0 } from '../domain/support.ts';

test('a pending sign-in shows where the client is sent back, by its host', () => {
  const view = presentPendingConsent({
    uid: 'uid_1',
    clientId: 'https://client.example/meta.json',
    clientName: 'Example Client',
    redirectUri: 'https://client.example:8443/callback?x=1',
    scopes: ['read'],
    resource: 'https://tmd.example/mcp/jsonrpc',
    expiresAt: T0 + 600_000,
  });
  assert.deepEqual(view, {
    client_id: 'https://client.example/meta.json',
    client_name: 'Example Client',
    redirect_uri: 'https://client.example:8443/callback?x=1',
    redirect_host: 'client.example:8443',
    scopes: ['read'],
    resource: 'https://tmd.example/mcp/jsonrpc',
    expires_at: '2026-11-21T15:10:00.000Z',
  });
  assert.deepEqual(pendingConsentOut.parse(view), view);
});

test('a connection shows its client and the key it reads as', () => {
  const view = presentConnection(
    {
      connection: {
        keyId: 'key_1',
        accountId: 'acc_1',
        clientId: 'client-1',
        clientName: 'Example Client',
        redirectHost: 'client.example',
        createdAt: T0,
      },
      key: keyRecord({ name: 'Example Client', monthlyCapMicros: 100_000_000n }),
    },
    T0,
  );
  assert.deepEqual(view, {
    client_id: 'client-1',
    client_name: 'Example Client',
    redirect_host: 'client.example',
    connected_at: '2026-11-21T15:00:00.000Z',
    key: {
      id: 'key_1',
      kind: 'live',
      prefix: 'tmd_live_abcd…',
      name: 'Example Client',
      created_at: '2026-11-21T15:00:00.000Z',
      expires_at: null,
      revoked_at: null,
      status: 'active',
      spending_caps: { daily: null, monthly: '100' },
    },
  });
  assert.deepEqual(connectionOut.parse(view), view);
});
