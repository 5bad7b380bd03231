import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Accounts } from '../../src/domain/accounts.ts';
import { makePricing } from '../../src/domain/pricing.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import {
  account,
  appError,
  caller,
  keyRecord,
  memoryStore,
  serviceConfig,
  T0,
  usage,
  wallet,
} from './support.ts';

const config = serviceConfig();
let store: SqliteStore;
let accounts: Accounts;
const me = caller('live', {
  key: keyRecord({ id: 'key_a', accountId: 'acc_a', walletId: 'wal_a' }),
  account: account({ id: 'acc_a', walletId: 'wal_a' }),
  wallet: wallet({ id: 'wal_a', accountId: 'acc_a' }),
});

/** Debits a read of `micros` by key_a at `at`, with its usage event. */
const read = (micros: bigint, at: number, dataset = 'equities/stock-prices') =>
  store.debit({
    walletId: 'wal_a',
    amountMicros: micros,
    month: '2026-11',
    usage: usage({
      walletId: 'wal_a',
      accountId: 'acc_a',
      keyId: 'key_a',
      at,
      dataset,
      costMicros: micros,
      burnedMicros: micros,
    }),
  });

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
  await store.insertKey(keyRecord({ id: 'key_a', accountId: 'acc_a', walletId: 'wal_a' }));
  await store.credit({
    walletId: 'wal_a',
    kind: 'topup',
    amountMicros: 1_000_000_000n,
    at: T0 - 1000,
    idempotencyKey: 'operator:seed',
  });
  await read(600_000_000n, T0 - 500);
  await read(2_000_000n, T0 - 400, 'calendar/events');
  await read(2_700_000n, T0 - 300);
  accounts = new Accounts({ store, pricing: makePricing(config), now: () => T0, config });
});
after(() => store.close());

test('a snapshot reads the wallet now: balance, month burn, tier, the next tier and limits', async () => {
  const snapshot = await accounts.snapshot(me);
  assert.equal(snapshot.wallet.balanceMicros, 395_300_000n);
  assert.equal(snapshot.burnedMicros, 604_700_000n);
  assert.equal(snapshot.tier.name, 'Analyst');
  assert.equal(snapshot.next?.tier.name, 'Strategist');
  assert.equal(snapshot.next?.tokensNeededMicros, 1_395_300_000n);
  assert.deepEqual(snapshot.limits, { per_minute: 72, per_day: null, concurrent: 20, ip_fence: false });
  assert.deepEqual(snapshot.entitlements, {
    bulk_export: false,
    analysis_assistant: false,
    mcp_included: true,
    spending_caps: false,
  });
  assert.equal(snapshot.publicTestWindowEnd, null);
});

test('a sandbox key is shown no next tier and no entitlements', async () => {
  const snapshot = await accounts.snapshot(
    caller('sandbox', { wallet: wallet({ id: 'wal_a', accountId: null }) }),
  );
  assert.equal(snapshot.tier.name, 'Recruit');
  assert.equal(snapshot.next, null);
  assert.equal(snapshot.entitlements, null);
});

test('the low-balance threshold is set and cleared; negative is 400, without an account 403', async () => {
  await accounts.setLowBalance(me, 50_000_000n);
  assert.equal((await accounts.current(me)).account?.lowBalanceMicros, 50_000_000n);
  await accounts.setLowBalance(me, null);
  assert.equal((await accounts.current(me)).account?.lowBalanceMicros, null);
  await assert.rejects(accounts.setLowBalance(me, -1n), appError('invalid_request', 400));
  await assert.rejects(accounts.setLowBalance(caller('sandbox'), 1n), appError('forbidden', 403));
});

test('usage pages newest first with a cursor; a cursor it did not give is 400 invalid_cursor', async () => {
  const first = await accounts.usage(me, undefined, 2);
  assert.deepEqual(
    first.events.map((e) => e.costMicros),
    [2_700_000n, 2_000_000n],
  );
  assert.equal(first.nextCursor, first.events[1]?.id);
  const second = await accounts.usage(me, first.nextCursor ?? undefined, 2);
  assert.deepEqual(
    second.events.map((e) => e.costMicros),
    [600_000_000n],
  );
  assert.equal(second.nextCursor, null);
  for (const bad of ['0', 'abc', '-1', '1'.repeat(19)]) {
    await assert.rejects(accounts.usage(me, bad, 2), appError('invalid_cursor', 400));
  }
  await assert.rejects(
    accounts.usage(caller('session', { account: null, key: null }), undefined, 2),
    appError('forbidden'),
  );
});

test('the usage summary is of the same events', async () => {
  const summary = await accounts.usageSummary(me, 1);
  assert.deepEqual(summary.top, [
    { dataset: 'equities/stock-prices', burnedMicros: 602_700_000n, reads: 2 },
    { dataset: 'calendar/events', burnedMicros: 2_000_000n, reads: 1 },
  ]);
});

test("an account's keys, each with its burn this month; no account, no keys (403)", async () => {
  assert.deepEqual(
    (await accounts.keys(me)).map((k) => k.id),
    ['key_a'],
  );
  const withUsage = await accounts.keysWithUsage(me);
  assert.deepEqual(
    withUsage.map((k) => [k.key.id, k.burnedThisMonthMicros]),
    [['key_a', 604_700_000n]],
  );
  await assert.rejects(accounts.keys(caller('sandbox')), appError('forbidden', 403));
});

test('a ledger page is newest first, with the balance and the read behind each burn', async () => {
  const page = await accounts.ledgerPage(me, { beforeId: null, limit: 2 });
  assert.deepEqual(
    page.entries.map((e) => [e.kind, e.amountMicros, e.balanceAfterMicros]),
    [
      ['burn', -2_700_000n, 395_300_000n],
      ['burn', -2_000_000n, 398_000_000n],
    ],
  );
  assert.equal(page.more, true);
  assert.equal(page.balanceMicros, 395_300_000n);
  assert.deepEqual(
    page.entries.map((e) => page.reads.get(e.requestId ?? '')?.dataset),
    ['equities/stock-prices', 'calendar/events'],
  );
  const older = await accounts.ledgerPage(me, { beforeId: page.entries[1]?.id ?? null, limit: 5 });
  assert.deepEqual(
    older.entries.map((e) => e.kind),
    ['burn', 'topup'],
  );
  assert.equal(older.more, false);
  assert.equal(older.balanceMicros, 395_300_000n, 'the balance is the newest entry’s, on every page');
  assert.equal(older.reads.size, 1, 'a credit has no read');
});
