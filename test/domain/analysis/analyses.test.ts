/**
 * analyses.ts: the Workbench put together from its three capabilities (the library, runs and the
 * assistant) sharing one library, with the chat planner in the built-in planner's place when given.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Analyses, type AnalysesDeps } from '../../../src/domain/analysis/analyses.ts';
import { Assistant } from '../../../src/domain/analysis/assistant.ts';
import { BuiltInPlanner } from '../../../src/domain/analysis/built-in-planner.ts';
import { AnalysisLibrary } from '../../../src/domain/analysis/library.ts';
import type { Planner } from '../../../src/domain/analysis/planner.ts';
import { AnalysisRuns } from '../../../src/domain/analysis/runs.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { M, testCaller } from '../harness.ts';
import { compare } from './fixtures.ts';

describe('the Workbench', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  /** A Workbench over the test server's store, reads and clock, as deps.ts wires it. */
  const workbench = (chatPlanner: Planner | null = null) => {
    const { store, dataReads, catalog, config, pricing } = server.deps;
    const deps: AnalysesDeps = {
      store,
      reads: dataReads,
      meter: { store, pricing, now: server.clock.now },
      catalog,
      config,
      now: server.clock.now,
      builtInPlanner: new BuiltInPlanner(catalog),
      chatPlanner,
    };
    return new Analyses(deps);
  };

  test('has a library, runs and an assistant; the built-in planner answers without a chat model', () => {
    const analyses = workbench();
    assert.ok(analyses.library instanceof AnalysisLibrary);
    assert.ok(analyses.runs instanceof AnalysisRuns);
    assert.ok(analyses.assistant instanceof Assistant);
    assert.equal(analyses.assistant.plannerName, 'built-in');
  });

  test('with a chat planner, the assistant asks it instead', () => {
    const chat: Planner = { name: 'chat', plan: async () => assert.fail('not planned here') };
    assert.equal(workbench(chat).assistant.plannerName, 'chat');
  });

  test('runs read from the same library: an analysis saved through it runs, metered', async () => {
    const analyses = workbench();
    const { caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const saved = await analyses.library.create(caller, { name: 'shared', spec: compare });
    const result = await analyses.runs.run(caller, 'wb-1', saved.id);
    assert.equal(result.analysisId, saved.id);
    assert.equal(result.burnedMicros, 4n * M);
    assert.deepEqual(
      result.reads.map((r) => r.requestId),
      ['wb-1.aapl', 'wb-1.msft'],
    );
  });

  test("the assistant saves into the same library, and its run counts as the account's run", async () => {
    const analyses = workbench();
    const { account, caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const answer = await analyses.assistant.ask(caller, 'wb-2', 'compare AAPL and MSFT closes', {
      save: true,
    });
    assert.equal(answer.kind, 'analysis');
    if (answer.kind !== 'analysis') return;
    assert.ok(answer.analysis);
    assert.deepEqual(await analyses.library.get(caller, answer.analysis.id), answer.analysis);
    assert.equal(await server.deps.store.countAnalysisRuns(account.id, 0), 1);
    assert.equal((await analyses.runs.estimate(caller, { spec: compare })).fairUse.runs_today, 1);
  });
});
