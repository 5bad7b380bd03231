/**
 * export.ts: an export is charged once through meter() (never grandfathered) for each started 1,000 rows,
 * and a failed stream is given back through the one refund operation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { exportUnits } from '../../src/domain/export.ts';
import type { AppError } from '../../src/errors.ts';
import { H15, h15Rows } from '../helpers/h15.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { entriesOf, M, testCaller, usageOf } from './harness.ts';

describe('export', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.deps.store.loadRows(H15, 'date', h15Rows(2001), 'import');
  });
  after(() => server.close());

  test('exportUnits() counts started blocks of 1,000 rows, at least one', () => {
    assert.deepEqual([0, 1, 1000, 1001, 2001].map(exportUnits), [1, 1, 1, 2, 3]);
  });

  test('start() charges the whole export once: 3 blocks of a 5-token dataset are 15 tokens', async () => {
    const { account, caller } = await testCaller(server, { tokens: 100, pkg: 'pro' });
    const started = await server.deps.exports.start(caller, 'export-1', H15);
    assert.deepEqual([started.value.rows, started.value.units, started.value.entry.key], [2001, 3, H15]);
    assert.deepEqual(started.cost, {
      costMicros: 15n * M,
      burnedMicros: 15n * M,
      balanceMicros: 85n * M,
      outcome: 'charged',
    });
    assert.deepEqual(await entriesOf(server, account.walletId), [['burn', -15n * M, 'export-1']]);
  });

  test('refund() gives the export back as one refund entry and the reversal of its usage event', async () => {
    const { account, caller } = await testCaller(server, { tokens: 100, pkg: 'pro' });
    const started = await server.deps.exports.start(caller, 'export-2', H15);
    await server.deps.exports.refund(caller, started, 'export-2', 'stream failed');
    assert.deepEqual(await entriesOf(server, account.walletId), [
      ['burn', -15n * M, 'export-2'],
      ['refund', 15n * M, 'export-2'],
    ]);
    assert.deepEqual(await usageOf(server, account.id), [
      ['export-2', `export:${H15}`, 'charged', 15n * M],
      ['export-2', `export:${H15}`, 'refunded', -15n * M],
    ]);
    const entries = await server.deps.store.listEntries(account.walletId);
    assert.equal(entries.at(-1)?.memo, 'refund: stream failed');
    assert.equal(entries.at(-1)?.balanceAfterMicros, 100n * M);
  });

  test('an account whose package lacks bulk_export, or a sandbox key, is refused before any charge', async () => {
    const { account, caller } = await testCaller(server, { tokens: 100 });
    await assert.rejects(server.deps.exports.start(caller, 'export-3', H15), (error: AppError) => {
      assert.equal(error.code, 'forbidden');
      assert.match(error.message, /this account's package does not include it/);
      return true;
    });
    const sandbox = await testCaller(server, { tokens: 100, pkg: 'pro', kind: 'sandbox' });
    await assert.rejects(server.deps.exports.start(sandbox.caller, 'export-4', H15), { code: 'forbidden' });
    assert.deepEqual(await entriesOf(server, account.walletId), []);
    assert.deepEqual(await entriesOf(server, sandbox.account.walletId), []);
  });
});
