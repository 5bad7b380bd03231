/**
 * metering.ts: estimate() and estimateReads() forecast what meter() then does (the same costs, the
 * same refusals in the same order), and meter() debits once and records the usage event.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BUY_PATH } from '../../src/domain/billing.ts';
import {
  estimate,
  estimateReads,
  type MeterDeps,
  type MeteredItem,
  meter,
} from '../../src/domain/metering.ts';
import { AppError } from '../../src/errors.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { callerOf, entriesOf, M, testCaller, usageOf } from './harness.ts';

const item: MeteredItem = { label: 'stocks/prices', listCost: 2, p0: false };
const twoReads = [
  { target: 'stocks/prices', items: [item] },
  { target: 'stocks/prices', items: [item] },
];

describe('metering', () => {
  let server: TestServer;
  let deps: MeterDeps;
  before(async () => {
    server = await startServer();
    deps = { store: server.deps.store, pricing: server.deps.pricing, now: server.clock.now };
  });
  after(() => server.close());

  test('estimate() prices one read and the balance after it, and burns nothing', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10 });
    const forecast = await estimate(deps, caller, 'stocks/prices', [item]);
    assert.deepEqual(forecast, {
      target: 'stocks/prices',
      listCost: 2,
      costMicros: 2n * M,
      burnMicros: 2n * M,
      entitled: true,
      balanceMicros: 10n * M,
      balanceAfterMicros: 8n * M,
      refusal: null,
    });
    assert.deepEqual(await entriesOf(server, account.walletId), []);
  });

  test('a Terminal session is priced with the surcharge: 2 tokens list cost 2.7', async () => {
    const { caller } = await testCaller(server, { tokens: 10, kind: 'session' });
    const forecast = await estimate(deps, caller, 'stocks/prices', [item]);
    assert.equal(forecast.costMicros, 2_700_000n);
    assert.equal(forecast.balanceAfterMicros, 7_300_000n);
  });

  test('estimate() forecasts the insufficient_tokens that meter() then answers, with nothing charged', async () => {
    const { account, caller } = await testCaller(server, { tokens: 1 });
    const forecast = await estimate(deps, caller, 'stocks/prices', [item]);
    assert.equal(forecast.refusal?.code, 'insufficient_tokens');
    assert.deepEqual(forecast.refusal?.extras, { required_tokens: '2', balance: '1', buy_url: BUY_PATH });
    assert.equal(forecast.balanceAfterMicros, 1n * M);
    let produced = false;
    await assert.rejects(
      meter(deps, caller, 'short-1', 'stocks/prices', [item], async () => {
        produced = true;
        return { value: null, rows: 0 };
      }),
      (error: AppError) => {
        assert.equal(error.code, 'insufficient_tokens');
        assert.deepEqual(error.extras, forecast.refusal?.extras);
        return true;
      },
    );
    assert.equal(produced, false);
    assert.deepEqual(await entriesOf(server, account.walletId), []);
    assert.deepEqual(await usageOf(server, account.id), []);
  });

  test('meter() debits the burn once, records a charged usage event and returns the balance after', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10 });
    const metered = await meter(deps, caller, 'read-1', 'stocks/prices', [item], async () => ({
      value: 'the page',
      rows: 3,
    }));
    assert.deepEqual(metered, {
      value: 'the page',
      cost: { costMicros: 2n * M, burnedMicros: 2n * M, balanceMicros: 8n * M, outcome: 'charged' },
    });
    assert.deepEqual(await entriesOf(server, account.walletId), [['burn', -2n * M, 'read-1']]);
    assert.deepEqual(await usageOf(server, account.id), [['read-1', 'stocks/prices', 'charged', 2n * M]]);
  });

  test('estimateReads() adds up reads made in turn and checks the whole burn against the wallet', async () => {
    const { caller } = await testCaller(server, { tokens: 10 });
    const forecast = await estimateReads(deps, caller, twoReads);
    const one = { target: 'stocks/prices', listCost: 2, costMicros: 2n * M, burnMicros: 2n * M };
    assert.deepEqual(forecast, {
      reads: [one, one],
      costMicros: 4n * M,
      burnMicros: 4n * M,
      balanceMicros: 10n * M,
      refusal: null,
    });
  });

  test('estimateReads() refuses a run the wallet cannot pay in full, though it could pay one read', async () => {
    const { caller } = await testCaller(server, { tokens: 3 });
    const forecast = await estimateReads(deps, caller, twoReads);
    assert.ok(forecast.refusal instanceof AppError);
    assert.equal(forecast.refusal.code, 'insufficient_tokens');
    assert.equal(forecast.refusal.message, 'This run costs 4 tokens and the wallet holds 3.');
    assert.deepEqual(forecast.refusal.extras, { required_tokens: '4', balance: '3' });
    assert.equal(forecast.burnMicros, 4n * M);
  });

  test("estimateReads() serves an early_bird session's reads the wallet no longer covers at zero burn", async () => {
    const { account } = await testCaller(server, { tokens: 3 });
    await server.deps.store.updateAccount(account.id, { plan: 'early_bird' });
    const caller = await callerOf(server, account, { kind: 'session' });
    const forecast = await estimateReads(deps, caller, twoReads);
    // 2.7 each from the Terminal: the first fits in 3 tokens, the second no longer does.
    assert.deepEqual(
      forecast.reads.map((r) => [r.costMicros, r.burnMicros]),
      [
        [2_700_000n, 2_700_000n],
        [2_700_000n, 0n],
      ],
    );
    assert.equal(forecast.burnMicros, 2_700_000n);
    assert.equal(forecast.refusal, null);
    // Exports are not grandfathered: the same reads without it are refused.
    const bulk = await estimateReads(deps, caller, twoReads, { grandfather: false });
    assert.equal(bulk.refusal?.code, 'insufficient_tokens');
  });

  test("estimateReads() checks the key's daily cap against the whole burn, not read by read", async () => {
    const { account } = await testCaller(server, { tokens: 10 });
    await server.deps.store.setKeyCaps(account.keyId, { dailyCapMicros: 3n * M });
    const caller = await callerOf(server, account);
    assert.equal((await estimate(deps, caller, 'stocks/prices', [item])).refusal, null);
    const forecast = await estimateReads(deps, caller, twoReads);
    assert.equal(forecast.refusal?.code, 'spending_cap_reached');
    assert.equal(forecast.refusal?.extras.cap_tokens, '3');
    assert.equal(forecast.refusal?.extras.required_tokens, '4');
  });

  test('estimateReads() refuses a read a sandbox key is not entitled to, first', async () => {
    const { caller } = await testCaller(server, { tokens: 10, kind: 'sandbox' });
    const forecast = await estimateReads(deps, caller, twoReads);
    assert.equal(forecast.refusal?.code, 'not_entitled');
    assert.equal(forecast.burnMicros, 0n);
  });
});
