/**
 * refunds.ts: the one ledger operation that gives a charge back, used by exports and analysis runs: a
 * refund entry with the charge's request id, and the reversal of its usage event dated with the charge.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type MeterDeps, type MeteredItem, meter } from '../../src/domain/metering.ts';
import { chargeOf, refund, refundAll } from '../../src/domain/refunds.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { entriesOf, M, testCaller, usageOf } from './harness.ts';

const item: MeteredItem = { label: 'stocks/prices', listCost: 2, p0: false };
const DAY_MS = 86_400_000;

describe('refunds', () => {
  let server: TestServer;
  let deps: MeterDeps;
  before(async () => {
    server = await startServer();
    deps = { store: server.deps.store, pricing: server.deps.pricing, now: server.clock.now };
  });
  after(() => server.close());

  const served = async () => ({ value: null, rows: 1 });

  test('chargeOf() is a read as its usage event recorded it, list cost in micros', () => {
    assert.deepEqual(
      chargeOf('r', 'export:stocks/prices', 6, { costMicros: 6n * M, burnedMicros: 5n * M }, 7),
      {
        requestId: 'r',
        label: 'export:stocks/prices',
        listCostMicros: 6n * M,
        costMicros: 6n * M,
        burnedMicros: 5n * M,
        chargedAt: 7,
      },
    );
  });

  test('refund() gives a charge back: a refund entry and the usage reversed, dated with the charge', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10 });
    const chargedAt = server.clock.now();
    const metered = await meter(deps, caller, 'charged-1', 'stocks/prices', [item], served);
    // Refunded the next day: the key's caps and the month's burn give back the day it was charged.
    server.clock.advance(DAY_MS);
    const charge = chargeOf('charged-1', 'stocks/prices', 2, metered.cost, chargedAt);
    assert.equal(await refund(deps, caller, charge, 'the test failed'), 2n * M);
    assert.deepEqual(await entriesOf(server, account.walletId), [
      ['burn', -2n * M, 'charged-1'],
      ['refund', 2n * M, 'charged-1'],
    ]);
    const refundEntry = (await server.deps.store.listEntries(account.walletId)).find(
      (e) => e.kind === 'refund',
    );
    assert.equal(refundEntry?.memo, 'refund: the test failed');
    assert.equal(refundEntry?.balanceAfterMicros, 10n * M);
    assert.deepEqual(await usageOf(server, account.id), [
      ['charged-1', 'stocks/prices', 'charged', 2n * M],
      ['charged-1', 'stocks/prices', 'refunded', -2n * M],
    ]);
    const events = await server.deps.store.listUsage({ accountId: account.id }, null, 10);
    const reversal = events.find((e) => e.outcome === 'refunded');
    assert.deepEqual(
      [reversal?.at, reversal?.listCostMicros, reversal?.costMicros, reversal?.rows, reversal?.keyId],
      [chargedAt, -2n * M, -2n * M, 0, account.keyId],
    );
    assert.equal(await server.deps.store.keyBurnedSince(account.keyId, chargedAt - DAY_MS), 0n);
  });

  test('a charge that burned nothing is not refunded: no entry is written', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10 });
    const charge = chargeOf('free-1', 'stocks/prices', 2, { costMicros: 2n * M, burnedMicros: 0n }, 0);
    assert.equal(await refund(deps, caller, charge, 'nothing to give back'), 0n);
    assert.deepEqual(await entriesOf(server, account.walletId), []);
  });

  test('refundAll() gives back each charge and counts those it refunded', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10 });
    const at = server.clock.now();
    const a = await meter(deps, caller, 'run.a', 'stocks/prices', [item], served);
    const b = await meter(deps, caller, 'run.b', 'stocks/prices', [item], served);
    const refunded = await refundAll(
      deps,
      caller,
      [
        chargeOf('run.a', 'stocks/prices', 2, a.cost, at),
        chargeOf('run.b', 'stocks/prices', 2, b.cost, at),
        chargeOf('run.c', 'stocks/prices', 2, { costMicros: 2n * M, burnedMicros: 0n }, at),
      ],
      'run failed',
    );
    assert.deepEqual(refunded, { reads: 2, micros: 4n * M });
    assert.deepEqual(await entriesOf(server, account.walletId), [
      ['burn', -2n * M, 'run.a'],
      ['burn', -2n * M, 'run.b'],
      ['refund', 2n * M, 'run.a'],
      ['refund', 2n * M, 'run.b'],
    ]);
  });
});
