import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { summarizeUsage, usageScope } from '../../src/domain/usage-summary.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { account, caller, keyRecord, memoryStore, T0, usage } from './support.ts';

const DAY = 86_400_000;
let store: SqliteStore;
let accountId: string;
let walletId: string;

before(async () => {
  store = await memoryStore();
  const made = await store.createAccount(
    {
      id: 'acc_u',
      email: 'u@example.com',
      passwordHash: null,
      walletId: 'wal_u',
      createdAt: T0,
      publicTestStartedAt: null,
    },
    '2026-11',
  );
  accountId = made.id;
  walletId = made.walletId;
  await store.credit({ walletId, kind: 'topup', amountMicros: 1_000_000_000n, at: T0 - 3 * DAY });
  const read = (at: number, dataset: string, channel: 'rest' | 'mcp' | 'terminal', burned: bigint) =>
    store.debit({
      walletId,
      amountMicros: burned,
      month: '2026-11',
      usage: usage({ walletId, accountId, at, dataset, channel, costMicros: burned, burnedMicros: burned }),
    });
  await read(T0 - 2 * DAY, 'equities/stock-prices', 'rest', 2_000_000n);
  await read(T0 - 2 * DAY + 1000, 'equities/stock-prices', 'terminal', 2_700_000n);
  await read(T0, 'macro/fed-h15-series', 'mcp', 5_000_000n);
  await read(T0 + 1000, 'calendar/events', 'rest', 1_000_000n);
  await read(T0 - 30 * DAY, 'equities/stock-prices', 'rest', 9_000_000n);
});

after(() => store.close());

test('an account sees its account, a sandbox key only itself, a caller with neither nothing', () => {
  assert.deepEqual(usageScope(caller('live')), { accountId: 'acc_1' });
  assert.deepEqual(usageScope(caller('sandbox')), { keyId: 'key_1' });
  assert.equal(usageScope(caller('session', { account: null, key: null })), null);
});

test('the last three UTC days are summed per day and channel, top datasets by burn, nothing older', async () => {
  const who = caller('live', { account: account({ id: accountId }) });
  const summary = await summarizeUsage(store, who, T0, 3);
  assert.deepEqual(summary, {
    since: Date.parse('2026-11-19T00:00:00Z'),
    days: [
      {
        date: '2026-11-19',
        burnedMicros: { rest: 2_000_000n, mcp: 0n, terminal: 2_700_000n },
        reads: { rest: 1, mcp: 0, terminal: 1 },
      },
      {
        date: '2026-11-20',
        burnedMicros: { rest: 0n, mcp: 0n, terminal: 0n },
        reads: { rest: 0, mcp: 0, terminal: 0 },
      },
      {
        date: '2026-11-21',
        burnedMicros: { rest: 1_000_000n, mcp: 5_000_000n, terminal: 0n },
        reads: { rest: 1, mcp: 1, terminal: 0 },
      },
    ],
    top: [
      { dataset: 'macro/fed-h15-series', burnedMicros: 5_000_000n, reads: 1 },
      { dataset: 'equities/stock-prices', burnedMicros: 4_700_000n, reads: 2 },
      { dataset: 'calendar/events', burnedMicros: 1_000_000n, reads: 1 },
    ],
    partial: false,
  });
  const topOne = await summarizeUsage(store, who, T0, 3, 1);
  assert.deepEqual(
    topOne.top.map((d) => d.dataset),
    ['macro/fed-h15-series'],
  );
});

test('a credential with no usage scope is 403 forbidden', async () => {
  await assert.rejects(
    summarizeUsage(store, caller('session', { account: null, key: null }), T0, 7),
    (error: { code: string; status: number }) => error.code === 'forbidden' && error.status === 403,
  );
  const stranger = caller('sandbox', { key: keyRecord({ id: 'key_none', kind: 'sandbox' }) });
  const empty = await summarizeUsage(store, stranger, T0, 1);
  assert.deepEqual(empty.top, []);
  assert.equal(empty.days.length, 1);
});
