/** The atomic check-and-debit: concurrency can neither overdraw a wallet nor charge a read twice. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  assertLedgerBalanced,
  bearer,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

let server: TestServer;
before(async () => {
  // Limits are not what this file tests: room for the concurrency it needs.
  server = await startServer({
    config: (c) => {
      for (const tier of c.pricing.loyalty_tiers) tier.rate_limit = 100_000;
      c.limits.wallet.concurrent = 1000;
    },
  });
});
after(() => server.close());

test('200 concurrent reads of cost 5 on a 100-token wallet: exactly 20 served, 180 refused, balance 0', async () => {
  const { key, account } = await walletAccount(server, 100);
  const path = '/api/v1/data/cftc/legacy_futures-facts?limit=1';
  const results = await Promise.all(
    Array.from({ length: 200 }, () => server.request('GET', path, { headers: bearer(key) })),
  );
  const served = results.filter((r) => r.status === 200);
  const refused = results.filter((r) => r.status === 402);
  assert.equal(served.length, 20);
  assert.equal(refused.length, 180);
  for (const r of refused) assert.equal(r.json.code, 'insufficient_tokens');
  const remaining = served.map((r) => Number(r.headers.get('x-credits-remaining'))).sort((a, b) => a - b);
  assert.deepEqual(
    remaining,
    Array.from({ length: 20 }, (_, i) => i * 5),
    'each served read saw its own balance',
  );
  const wallet = await server.deps.store.getWallet(account.walletId);
  assert.equal(wallet?.balanceMicros, 0n);
  const entries = await server.deps.store.listEntries(account.walletId);
  assert.equal(entries.filter((e) => e.kind === 'burn').length, 20);
  assert.ok(
    entries.every((e) => e.balanceAfterMicros >= 0n),
    'never negative',
  );
  const usage = await server.deps.store.listUsage({ accountId: account.id }, null, 500);
  assert.equal(usage.length, 20, 'one usage event per served read, none for refusals');
  await assertLedgerBalanced(server);
});
