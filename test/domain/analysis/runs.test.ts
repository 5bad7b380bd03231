/**
 * runs.ts: a run is estimated by metering's forecast of its reads and refused before any read (the
 * wallet, the key's caps, fair use); it reads each series once, reuses a paid result, and refunds its
 * reads when it fails after them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AnalysisRuns } from '../../../src/domain/analysis/runs.ts';
import type { DataReads } from '../../../src/domain/reads.ts';
import { AppError } from '../../../src/errors.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { entriesOf, M, testCaller, usageOf } from '../harness.ts';
import { compare, three } from './fixtures.ts';

const runsOf = (server: TestServer) => server.deps.analyses.runs;
const DEFAULT_FAIR_USE = {
  runs_per_day: 100,
  reads_per_run: 20,
  reuse_minutes: 15,
  confirm_above_tokens: 50,
};

describe('runs of analyses', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  const runs = () => server.deps.analyses.runs;
  const save = async (caller: Parameters<AnalysisRuns['run']>[0], name = 'two') =>
    (await server.deps.analyses.library.create(caller, { name, spec: compare })).id;

  test('estimate() prices each read as metering does, at the caller price, and burns nothing', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const estimate = await runs().estimate(caller, { spec: compare });
    const read = (series: string, symbol: string) => ({
      series,
      dataset: 'stocks/prices',
      entity: { symbol },
      field: 'close',
      costMicros: 2n * M,
      burnMicros: 2n * M,
    });
    assert.deepEqual(estimate, {
      reads: [read('aapl', 'AAPL'), read('msft', 'MSFT')],
      costMicros: 4n * M,
      burnMicros: 4n * M,
      balanceMicros: 10n * M,
      balanceAfterMicros: 6n * M,
      confirmRequired: false,
      refusal: null,
      fairUse: { ...DEFAULT_FAIR_USE, runs_today: 0 },
      reuse: null,
    });
    assert.deepEqual(await entriesOf(server, account.walletId), []);
  });

  test('a wallet that cannot pay the whole run is refused before the first read', async () => {
    const { account, caller } = await testCaller(server, { tokens: 3, pkg: 'workbench' });
    const estimate = await runs().estimate(caller, { spec: compare });
    assert.equal(estimate.refusal?.message, 'This run costs 4 tokens and the wallet holds 3.');
    assert.equal(estimate.balanceAfterMicros, 3n * M);
    const id = await save(caller);
    await assert.rejects(runs().run(caller, 'short', id), (error: AppError) => {
      assert.equal(error.code, 'insufficient_tokens');
      assert.deepEqual(error.extras, { required_tokens: '4', balance: '3' });
      return true;
    });
    assert.deepEqual(await entriesOf(server, account.walletId), []);
    assert.equal(await server.deps.store.countAnalysisRuns(account.id, 0), 0);
  });

  test('run() makes one metered read per series; a rerun reuses the paid result and burns nothing', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const id = await save(caller);
    const result = await runs().run(caller, 'run-1', id);
    assert.deepEqual(
      result.reads.map((r) => [r.series, r.requestId, r.costMicros, r.burnedMicros]),
      [
        ['aapl', 'run-1.aapl', 2n * M, 2n * M],
        ['msft', 'run-1.msft', 2n * M, 2n * M],
      ],
    );
    assert.deepEqual([result.analysisId, result.burnedMicros, result.reusedFrom], [id, 4n * M, null]);
    assert.deepEqual(await entriesOf(server, account.walletId), [
      ['burn', -2n * M, 'run-1.aapl'],
      ['burn', -2n * M, 'run-1.msft'],
    ]);
    const again = await runs().run(caller, 'run-2', id);
    assert.deepEqual(again.reusedFrom, {
      runId: result.runId,
      startedAt: result.startedAt,
      burnedMicros: 4n * M,
    });
    assert.equal(again.burnedMicros, 0n);
    assert.deepEqual(again.outputs, result.outputs);
    assert.equal((await runs().estimate(caller, { id })).reuse?.runId, result.runId);
    assert.equal((await entriesOf(server, account.walletId)).length, 2);
    // `fresh` reads again.
    const fresh = await runs().run(caller, 'run-3', id, { fresh: true });
    assert.equal(fresh.burnedMicros, 4n * M);
    assert.equal(await server.deps.store.countAnalysisRuns(account.id, 0), 2);
  });

  test('resultCsv() is the latest result as CSV, and 404 before the first run', async () => {
    const { caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const id = await save(caller, 'csv');
    await assert.rejects(runs().resultCsv(caller, id), {
      code: 'not_found',
      message: `Analysis ${id} has no result yet: run it first.`,
    });
    await runs().run(caller, 'csv-run', id);
    const { name, csv } = await runs().resultCsv(caller, id);
    assert.equal(name, 'csv');
    assert.match(csv.split('\n')[0] ?? '', /^date,/);
  });

  test('a run that fails after a read refunds it: one refund entry, the run recorded failed', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const id = await save(caller, 'fails');
    const reads = server.deps.reads;
    const failing = {
      read: async (...args: Parameters<DataReads['read']>) => {
        if (args[1].endsWith('.msft')) throw new AppError('service_unavailable', 'The store went away.');
        return reads.read(...args);
      },
    } as unknown as DataReads;
    const runsFailing = new AnalysisRuns({
      ...server.deps,
      reads: failing,
      meter: { store: server.deps.store, pricing: server.deps.pricing, now: server.clock.now },
      library: server.deps.analyses.library,
    });
    await assert.rejects(runsFailing.run(caller, 'fail', id), (error: AppError) => {
      assert.equal(error.code, 'service_unavailable');
      assert.equal(
        error.message,
        "The store went away. The run's 1 read already charged (2 tokens) was refunded.",
      );
      assert.equal(error.extras.refunded_tokens, '2');
      return true;
    });
    assert.deepEqual(await entriesOf(server, account.walletId), [
      ['burn', -2n * M, 'fail.aapl'],
      ['refund', 2n * M, 'fail.aapl'],
    ]);
    assert.deepEqual(await usageOf(server, account.id), [
      ['fail.aapl', 'stocks/prices', 'charged', 2n * M],
      ['fail.aapl', 'stocks/prices', 'refunded', -2n * M],
    ]);
  });
});

describe('runs within fair use', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: (config) => {
        const sku = config.pricing.commercial_skus.find((s) => s.id === 'workbench');
        assert.ok(sku);
        sku.fair_use = { runs_per_day: 1, reads_per_run: 2, reuse_minutes: 0, confirm_above_tokens: 3 };
      },
    });
  });
  after(() => server.close());

  test('more reads than one run may make: 429 reads_per_run, before anything is read', async () => {
    const { caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const estimate = await runsOf(server).estimate(caller, { spec: three });
    assert.equal(estimate.refusal?.code, 'fair_use_limit');
    assert.equal(estimate.refusal?.message, 'This analysis makes 3 reads; one run may make 2.');
    assert.deepEqual(estimate.refusal?.extras, { limit: 'reads_per_run', value: 2 });
    assert.equal(estimate.confirmRequired, true);
  });

  test("the day's runs used: 429 runs_per_day until the next UTC day, nothing charged", async () => {
    const { account, caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const id = (await server.deps.analyses.library.create(caller, { name: 'two', spec: compare })).id;
    await runsOf(server).run(caller, 'day-1', id);
    const estimate = await runsOf(server).estimate(caller, { id });
    assert.equal(estimate.fairUse.runs_today, 1);
    assert.deepEqual(estimate.refusal?.extras, {
      limit: 'runs_per_day',
      value: 1,
      retry_after: 9 * 3600,
      reset_at: '2026-11-22T00:00:00.000Z',
    });
    await assert.rejects(runsOf(server).run(caller, 'day-2', id), { code: 'fair_use_limit' });
    assert.equal((await entriesOf(server, account.walletId)).length, 2);
  });
});
