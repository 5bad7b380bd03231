import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { priceList } from '../../src/domain/price-list.ts';
import { makePricing } from '../../src/domain/pricing.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { caller, memoryStore, serviceConfig, stockPrices, T0, tinyCatalog, wallet } from './support.ts';

const config = serviceConfig();
let store: SqliteStore;

before(async () => {
  store = await memoryStore();
  await store.createAccount(
    {
      id: 'acc_p',
      email: 'p@example.com',
      passwordHash: null,
      walletId: 'wal_p',
      createdAt: T0,
      publicTestStartedAt: null,
    },
    '2026-11',
  );
});
after(() => store.close());

const deps = () => ({
  store,
  datasets: store,
  pricing: makePricing(config),
  catalog: tinyCatalog(config),
  now: () => T0,
});
const summary = (lines: Awaited<ReturnType<typeof priceList>>['lines']) =>
  lines.map((l) => [l.entry.key, l.terminalMicros, l.apiKeyMicros, l.entitled, l.source]);

test('each key is priced for the Terminal and for an API key at the tier the wallet has now', async () => {
  const list = await priceList(
    deps(),
    caller('live', { wallet: wallet({ id: 'wal_p', accountId: 'acc_p' }) }),
  );
  assert.equal(list.tier.name, 'Recruit');
  assert.deepEqual(summary(list.lines), [
    ['equities/prices', 2_700_000n, 2_000_000n, true, null],
    ['research/prices', 2_700_000n, 2_000_000n, true, null],
  ]);
});

test('the wallet is read afresh: a burn that reached a tier discounts the list', async () => {
  await store.credit({ walletId: 'wal_p', kind: 'topup', amountMicros: 600_000_000n, at: T0 });
  await store.debit({
    walletId: 'wal_p',
    amountMicros: 500_000_000n,
    month: '2026-11',
    usage: {
      requestId: 'req_p',
      keyId: null,
      accountId: 'acc_p',
      walletId: 'wal_p',
      dataset: 'equities/prices',
      channel: 'rest',
      listCostMicros: 500_000_000n,
      costMicros: 500_000_000n,
      burnedMicros: 500_000_000n,
      outcome: 'charged',
      rows: 1,
      at: T0,
    },
  });
  const stale = caller('session', { wallet: wallet({ id: 'wal_p', accountId: 'acc_p' }) });
  const list = await priceList(deps(), stale);
  assert.equal(list.tier.name, 'Analyst');
  assert.deepEqual(summary(list.lines)[0], ['equities/prices', 2_646_000n, 1_960_000n, true, null]);
});

test('a sandbox key is entitled to P0 keys only; loaded rows name their source', async () => {
  await store.loadRows(stockPrices.key, 'date', [{ date: '2026-01-02', symbol: 'MSFT', close: 1 }], 'import');
  const list = await priceList(
    deps(),
    caller('sandbox', { wallet: wallet({ id: 'wal_none', accountId: null }) }),
  );
  assert.deepEqual(summary(list.lines), [
    ['equities/prices', 2_700_000n, 2_000_000n, true, 'import'],
    ['research/prices', 2_700_000n, 2_000_000n, false, 'import'],
  ]);
});
