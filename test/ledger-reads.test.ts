/** The wallet's ledger says what each burn paid for: the dataset, the key (or session) and the channel. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { rpc, toolCall } from './helpers/mcp.ts';
import { bearer, startServer, type TestServer, walletAccount } from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server.close();
});

test('each burn names its read; a credit names none', async () => {
  const { key, keyId, session } = await walletAccount(server, 100);
  const rest = await server.request('GET', '/api/v1/data/equities/stock-prices?limit=1', {
    headers: bearer(key),
  });
  assert.equal(rest.status, 200, rest.text);
  const mcp = await rpc(
    server,
    bearer(key),
    toolCall('read_dataset', { dataset: 'rates/fed-h15-series', limit: 1 }),
  );
  assert.equal(mcp.status, 200, mcp.text);
  const bySession = await server.request('GET', '/api/v1/data/cot/legacy-futures?limit=1', {
    headers: bearer(session),
  });
  assert.equal(bySession.status, 200, bySession.text);

  const ledger = await server.request('GET', '/api/v1/me/ledger', { headers: bearer(session) });
  assert.equal(ledger.status, 200, ledger.text);
  const entries = ledger.json.data as { kind: string; request_id: string | null; read: unknown }[];
  const burns = entries.filter((e) => e.kind === 'burn');
  assert.deepEqual(
    burns.map((e) => e.read),
    [
      { dataset: 'cot/legacy-futures', key_id: null, channel: 'rest' },
      { dataset: 'rates/fed-h15-series', key_id: keyId, channel: 'mcp' },
      { dataset: 'equities/stock-prices', key_id: keyId, channel: 'rest' },
    ],
  );
  assert.equal(burns[2]?.request_id, rest.headers.get('x-request-id'));
  const credit = entries.find((e) => e.kind === 'topup');
  assert.equal(credit?.read, null);
});
