import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DOW30, recipeDatasets, recipes, tonightWindow, validTimeZone } from '../../src/domain/recipes.ts';
import { stockPriceRow } from '../helpers/rows.ts';
import { fundedAccount, startDeps, type TestDeps } from './services.ts';
import { appError, caller, keyRecord, T0 } from './support.ts';

let t: TestDeps;
let walletId: string;
let accountId: string;

before(async () => {
  t = await startDeps();
  const made = await fundedAccount(t, 10);
  walletId = made.walletId;
  accountId = made.id;
  const rows = DOW30.flatMap((symbol, i) => [
    stockPriceRow(symbol, '2026-11-19', 100 + i),
    stockPriceRow(symbol, '2026-11-20', 101.5 + i),
  ]).filter((row) => !(row.symbol === 'WMT' && row.date === '2026-11-19'));
  await t.deps.datasets.loadRows(recipeDatasets.dow30, 'date', rows, 'import');
});
after(() => t.close());

async function me() {
  const wallet = (await t.deps.store.getWallet(walletId)) ?? assert.fail('no wallet');
  const account = (await t.deps.store.getAccount(accountId)) ?? assert.fail('no account');
  return caller('live', { key: keyRecord({ accountId, walletId }), account, wallet });
}

test('two recipes, each reading one P0 dataset at list cost 2', () => {
  assert.deepEqual(
    recipes.map((r) => [r.name, r.reads, t.deps.recipes.listCost(r.name)]),
    [
      ['dow30-sandbox-smoke', ['equities/stock-prices'], 2],
      ['calendar-tonight', ['calendar/events'], 2],
    ],
  );
  assert.throws(() => t.deps.recipes.info('nope'), appError('recipe_not_found', 404));
});

test('the tonight window runs to the next 06:00 in the zone, across a DST change', () => {
  assert.equal(validTimeZone('Europe/Berlin'), true);
  assert.equal(validTimeZone('Mars/Olympus'), false);
  const evening = Date.parse('2026-03-28T20:00:00Z');
  assert.deepEqual(tonightWindow(evening, 'Europe/Berlin'), {
    from: evening,
    until: Date.parse('2026-03-29T04:00:00Z'),
  });
  const early = Date.parse('2026-11-21T03:00:00Z');
  assert.deepEqual(tonightWindow(early, 'UTC'), { from: early, until: Date.parse('2026-11-21T06:00:00Z') });
});

test('an estimate prices one run and does not charge it', async () => {
  const estimate = await t.deps.recipes.estimate(await me(), 'dow30-sandbox-smoke');
  assert.deepEqual(
    [
      estimate.target,
      estimate.listCost,
      estimate.costMicros,
      estimate.balanceMicros,
      estimate.balanceAfterMicros,
      estimate.refusal,
    ],
    ['recipe:dow30-sandbox-smoke', 2, 2_000_000n, 10_000_000n, 8_000_000n, null],
  );
});

test('dow30 gives each constituent its latest close and change, charged once 2 tokens', async () => {
  const result = await t.deps.recipes.run(await me(), 'req_recipe_1', 'dow30-sandbox-smoke', {});
  assert.deepEqual(result.cost, {
    costMicros: 2_000_000n,
    burnedMicros: 2_000_000n,
    balanceMicros: 8_000_000n,
    outcome: 'charged',
  });
  const value = result.value as unknown as {
    count: number;
    sample: boolean;
    constituents: {
      symbol: string;
      date: string;
      close: number;
      previous_close: number | null;
      change: number | null;
      change_pct: number | null;
    }[];
  };
  assert.equal(value.count, 30);
  assert.equal(value.sample, false);
  assert.deepEqual(value.constituents[0], {
    symbol: 'AAPL',
    date: '2026-11-20',
    close: 101.5,
    previous_close: 100,
    change: 1.5,
    change_pct: 1.5,
  });
  assert.deepEqual(value.constituents.at(-1), {
    symbol: 'WMT',
    date: '2026-11-20',
    close: 130.5,
    previous_close: null,
    change: null,
    change_pct: null,
  });
  const [burn] = await t.deps.store.listEntriesPage(walletId, { beforeId: null, limit: 1 });
  assert.deepEqual([burn?.kind, burn?.amountMicros, burn?.requestId], ['burn', -2_000_000n, 'req_recipe_1']);
});

test('calendar-tonight answers its window in the zone; a bad zone or parameter is 400 and burns nothing', async () => {
  t.clock.t = T0;
  const result = await t.deps.recipes.run(await me(), 'req_recipe_2', 'calendar-tonight', {
    tz: 'Asia/Tokyo',
  });
  const value = result.value as unknown as { tz: string; from: string; until: string; count: number };
  assert.deepEqual(
    [value.tz, value.from, value.until],
    ['Asia/Tokyo', '2026-11-21T15:00:00.000Z', '2026-11-21T21:00:00.000Z'],
  );
  assert.equal(result.cost.burnedMicros, 2_000_000n);
  await assert.rejects(
    t.deps.recipes.run(await me(), 'req_recipe_3', 'calendar-tonight', { tz: 'Mars/Olympus' }),
    appError('invalid_request', 400),
  );
  await assert.rejects(
    t.deps.recipes.run(await me(), 'req_recipe_4', 'dow30-sandbox-smoke', { tz: 'UTC' }),
    (error: Error & { code: string }) => {
      assert.equal(error.code, 'invalid_request');
      assert.equal(error.message, 'The recipe dow30-sandbox-smoke takes no parameter "tz" (it takes: none).');
      return true;
    },
  );
  assert.equal((await t.deps.store.getWallet(walletId))?.balanceMicros, 6_000_000n);
});
