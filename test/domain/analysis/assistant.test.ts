/**
 * assistant.ts: a question answered with an analysis (run, explained, saved on request) or asked back;
 * a question not answered charges nothing: the reads its planner made are refunded and its run released.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Assistant } from '../../../src/domain/analysis/assistant.ts';
import type { Planner, PlannerTools } from '../../../src/domain/analysis/planner.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { entriesOf, M, testCaller, usageOf } from '../harness.ts';
import { compare } from './fixtures.ts';

describe('the assistant', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  const assistant = () => server.deps.analyses.assistant;
  const runsOf = (accountId: string) => server.deps.store.countAnalysisRuns(accountId, 0);

  /** The assistant with another planner in the chat model's place. */
  const withPlanner = (plan: (tools: PlannerTools) => ReturnType<Planner['plan']>) =>
    new Assistant({
      ...server.deps,
      reads: server.deps.dataReads,
      meter: { store: server.deps.store, pricing: server.deps.pricing, now: server.clock.now },
      library: server.deps.analyses.library,
      runs: server.deps.analyses.runs,
      builtInPlanner: { name: 'built-in', plan: async () => assert.fail('not the built-in planner') },
      chatPlanner: { name: 'chat', plan: (_question, tools) => plan(tools) },
    });

  test('the built-in planner answers when no chat model is configured', () => {
    assert.equal(assistant().plannerName, 'built-in');
  });

  test('a question answered: its analysis run at the caller price, explained, counted as a run', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const answer = await assistant().ask(caller, 'q1', 'compare AAPL and MSFT closes');
    assert.equal(answer.kind, 'analysis');
    if (answer.kind !== 'analysis') return;
    assert.deepEqual(
      [answer.planner, answer.reads, answer.burnedMicros, answer.analysis],
      ['built-in', 2, 4n * M, null],
    );
    assert.deepEqual(
      answer.spec.series.map((s) => s.entity),
      [{ symbol: 'AAPL' }, { symbol: 'MSFT' }],
    );
    assert.match(answer.explanation, /It made 2 metered reads \(\d+ observations\) and burned 4 tokens\.$/);
    assert.deepEqual(
      (await entriesOf(server, account.walletId)).map(([kind, amount]) => [kind, amount]),
      [
        ['burn', -2n * M],
        ['burn', -2n * M],
      ],
    );
    assert.equal(await runsOf(account.id), 1);
  });

  test('with save, the answered analysis is saved to the library with its planner', async () => {
    const { caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const answer = await assistant().ask(caller, 'q2', 'compare AAPL and MSFT closes', { save: true });
    assert.ok(answer.kind === 'analysis' && answer.analysis);
    assert.equal(answer.result.analysisId, answer.analysis.id);
    const { analyses } = await server.deps.analyses.library.list(caller);
    assert.deepEqual(
      analyses.map((a) => [a.id, a.planner]),
      [[answer.analysis.id, 'built-in']],
    );
  });

  test('a forecast is declined before any planner: nothing read, charged or counted', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const answer = await assistant().ask(caller, 'q3', 'forecast the AAPL close next month');
    assert.deepEqual(answer.kind === 'clarify' && [answer.reason, answer.reads, answer.burnedMicros], [
      'forecast',
      0,
      0n,
    ]);
    assert.deepEqual(await entriesOf(server, account.walletId), []);
    assert.equal(await runsOf(account.id), 0);
  });

  test("a question asked back refunds the planner's reads and releases its run", async () => {
    const { account, caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const asked = await withPlanner(async (tools) => {
      await tools.read('stocks/prices', { filters: { symbol: 'AAPL' }, limit: 1 });
      await tools.read('stocks/prices', { filters: { symbol: 'MSFT' }, limit: 1 });
      return { kind: 'clarify', message: 'Which close?', candidates: [], transcript: [] };
    }).ask(caller, 'q4', 'something vague');
    assert.deepEqual(asked, {
      kind: 'clarify',
      planner: 'chat',
      reason: 'ask_back',
      message: 'Which close? (The 2 reads made while planning were refunded.)',
      candidates: [],
      burnedMicros: 0n,
      reads: 2,
    });
    assert.deepEqual(await entriesOf(server, account.walletId), [
      ['burn', -2n * M, 'q4.t1'],
      ['burn', -2n * M, 'q4.t2'],
      ['refund', 2n * M, 'q4.t1'],
      ['refund', 2n * M, 'q4.t2'],
    ]);
    assert.equal(await runsOf(account.id), 0);
  });

  test('an analysis the planner already ran is not read twice when it answers with it', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const answer = await withPlanner(async (tools) => {
      await tools.runAnalysis(compare);
      return { kind: 'analysis', name: 'two', spec: compare, explanation: 'Two closes.', transcript: [] };
    }).ask(caller, 'q5', 'two closes');
    assert.ok(answer.kind === 'analysis');
    assert.deepEqual([answer.reads, answer.burnedMicros], [2, 4n * M]);
    assert.deepEqual(
      (await usageOf(server, account.id)).map(([id]) => id),
      ['q5.r1.aapl', 'q5.r1.msft'],
    );
  });

  test('a question that fails refunds every read it was charged for and says so', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    await assert.rejects(
      withPlanner(async (tools) => {
        await tools.read('stocks/prices', { limit: 1 });
        await tools.read('stocks/nope', { limit: 1 });
        return assert.fail('the second read is refused');
      }).ask(caller, 'q6', 'anything'),
      (error: { code: string; message: string }) => {
        assert.equal(error.code, 'dataset_not_found');
        assert.match(error.message, /The question's 1 read already charged \(2 tokens\) was refunded\.$/);
        return true;
      },
    );
    assert.deepEqual(await entriesOf(server, account.walletId), [
      ['burn', -2n * M, 'q6.t1'],
      ['refund', 2n * M, 'q6.t1'],
    ]);
  });

  test('estimateQuestion() plans without reading: the cost of the analysis it would run', async () => {
    const { account, caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const estimate = await assistant().estimateQuestion(caller, 'compare AAPL and MSFT closes');
    assert.ok(estimate.kind === 'estimate');
    assert.deepEqual([estimate.estimate.burnMicros, estimate.estimate.refusal], [4n * M, null]);
    assert.deepEqual(await entriesOf(server, account.walletId), []);
    assert.equal(await runsOf(account.id), 0);
    const chat = await withPlanner(async () => assert.fail('not planned')).estimateQuestion(caller, 'x');
    assert.equal(chat.kind, 'unavailable');
  });
});
