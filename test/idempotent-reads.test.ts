/**
 * Reads that are safe to retry, on both stores: the same Idempotency-Key from the same credential gets
 * the first answer again (the same rows and cost headers) and is charged nothing, also when 64 retries
 * arrive at once; the key on another request is refused 422; a refused read is not kept; after 24
 * hours, or from another credential, the key is new.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freshDatabase, type TestDatabase } from './helpers/backends.ts';
import { rpc } from './helpers/mcp.ts';
import {
  assertLedgerBalanced,
  bearer,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

const PATH = '/api/v1/data/equities/stock-prices?symbol=AAPL&limit=5';

async function burns(server: TestServer, walletId: string): Promise<number> {
  return (await server.deps.store.listEntries(walletId)).filter((e) => e.kind === 'burn').length;
}

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`${backend}: a retried read with its Idempotency-Key is answered again and charged once`, async (t) => {
    let db: TestDatabase | null = null;
    if (backend === 'postgres') {
      const made = await freshDatabase();
      if ('skip' in made) return t.skip(made.skip);
      db = made;
    }
    const server = await startServer({
      env: db ? { DATABASE_URL: db.url } : {},
      config: (config) => {
        config.limits.wallet.concurrent = 1_000;
        for (const tier of config.pricing.loyalty_tiers) tier.rate_limit = 100_000;
      },
    });
    try {
      const { key, account } = await walletAccount(server, 100);
      const headers = { ...bearer(key), 'idempotency-key': 'retry-1' };
      const first = await server.request('GET', PATH, { headers });
      assert.equal(first.status, 200, first.text);
      const again = await server.request('GET', PATH, { headers });
      assert.equal(again.status, 200);
      assert.equal(again.text, first.text, 'the same rows and meta');
      assert.equal(again.headers.get('x-token-cost'), first.headers.get('x-token-cost'));
      assert.equal(again.headers.get('x-credits-remaining'), first.headers.get('x-credits-remaining'));
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(first.headers.get('idempotent-replayed'), null);
      assert.equal(await burns(server, account.walletId), 1);

      // The key on another request: refused, nothing charged.
      const other = await server.request('GET', `${PATH}&sort=asc`, { headers });
      assert.deepEqual([other.status, other.json.code], [422, 'idempotency_key_reused']);
      assert.equal(await burns(server, account.walletId), 1);

      // 64 at once with a new key: one read, one charge, one answer.
      const burst = await Promise.all(
        Array.from({ length: 64 }, () =>
          server.request('GET', PATH, { headers: { ...bearer(key), 'idempotency-key': 'burst' } }),
        ),
      );
      assert.ok(
        burst.every((r) => r.status === 200),
        JSON.stringify(burst.find((r) => r.status !== 200)?.json),
      );
      assert.equal(new Set(burst.map((r) => r.text)).size, 1);
      assert.equal(await burns(server, account.walletId), 2);

      // Another credential of the same account: its own keys.
      const otherKey = (await server.deps.operator.createKey(account.id, 'two', null)).secret;
      const mine = await server.request('GET', PATH, {
        headers: { ...bearer(otherKey), 'idempotency-key': 'retry-1' },
      });
      assert.equal(mine.status, 200, mine.text);
      assert.equal(mine.headers.get('idempotent-replayed'), null);
      assert.equal(await burns(server, account.walletId), 3);

      // After 24 hours the key is new again.
      server.clock.advance(24 * 3_600_000 + 1);
      const later = await server.request('GET', PATH, { headers });
      assert.equal(later.status, 200, later.text);
      assert.equal(later.headers.get('idempotent-replayed'), null);
      assert.equal(await burns(server, account.walletId), 4);
      await assertLedgerBalanced(server);
    } finally {
      await server.close();
      await db?.drop();
    }
  });
}

test('a refused read is not kept: after a top-up the same key reads; a bad key is a 400', async () => {
  const server = await startServer();
  try {
    const { key, account } = await walletAccount(server, 0);
    const headers = { ...bearer(key), 'idempotency-key': 'topup-then-retry' };
    const refused = await server.request('GET', PATH, { headers });
    assert.equal(refused.status, 402);
    await server.deps.store.credit({
      walletId: account.walletId,
      kind: 'topup',
      amountMicros: 10_000_000n,
      at: Date.now(),
    });
    const served = await server.request('GET', PATH, { headers });
    assert.equal(served.status, 200, served.text);
    assert.equal(served.headers.get('idempotent-replayed'), null);
    const bad = await server.request('GET', PATH, {
      headers: { ...bearer(key), 'idempotency-key': 'has space' },
    });
    assert.deepEqual([bad.status, bad.json.code], [400, 'invalid_request']);
    await assertLedgerBalanced(server);
  } finally {
    await server.close();
  }
});

test('MCP: read_dataset with _meta.idempotency_key is answered again and charged once', async () => {
  const server = await startServer();
  try {
    const { key, account } = await walletAccount(server, 100);
    const headers = { ...bearer(key), accept: 'application/json, text/event-stream' };
    const call = (id: number, idempotencyKey: string, args: Record<string, unknown>) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'read_dataset', arguments: args, _meta: { idempotency_key: idempotencyKey } },
    });
    const args = { dataset: 'equities/stock-prices', filters: { symbol: 'AAPL' }, limit: 3 };
    const first = await rpc(server, headers, call(1, 'mcp-1', args));
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json.result.isError, undefined, first.text);
    const again = await rpc(server, headers, call(2, 'mcp-1', args));
    assert.equal(again.json.id, 2, 'the answer is to the retry');
    assert.deepEqual(again.json.result, first.json.result, 'the same rows, text and cost');
    assert.equal(again.headers.get('x-token-cost'), first.headers.get('x-token-cost'));
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(await burns(server, account.walletId), 1);
    const other = await rpc(server, headers, call(3, 'mcp-1', { ...args, limit: 4 }));
    assert.equal(other.json.result.isError, true);
    assert.match(other.json.result.content[0].text, /idempotency_key_reused/);
    assert.equal(await burns(server, account.walletId), 1);
    await assertLedgerBalanced(server);
  } finally {
    await server.close();
  }
});
