/**
 * views/analyses.ts: saved analyses, estimates, runs and the assistant's answers as clients see them,
 * presented from what the real Workbench returns; each view passes its own schema.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  analysisOut,
  askOut,
  presentAnalysis,
  presentAsk,
  presentEstimate,
  presentQuestionEstimate,
  presentRun,
  questionEstimateOut,
  runEstimateOut,
  runResultOut,
} from '../../src/views/analyses.ts';
import { compare } from '../domain/analysis/fixtures.ts';
import { testCaller } from '../domain/harness.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const FAIR_USE = { runs_per_day: 100, reads_per_run: 20, reuse_minutes: 15, confirm_above_tokens: 50 };

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(() => server.close());

const workbench = () => server.deps.analyses;
const pricing = () => server.deps.pricing;
const nowIso = () => new Date(server.clock.now()).toISOString();
const readOf = (series: string, symbol: string) => ({
  series,
  dataset: 'stocks/prices',
  entity: { symbol },
  field: 'close',
  token_cost: '2',
  tokens_burned: '2',
});

describe('saved analyses and estimates', () => {
  test('a saved analysis: its spec as saved, times as ISO 8601', async () => {
    const { caller } = await testCaller(server, { pkg: 'workbench' });
    const saved = await workbench().library.create(caller, { name: 'two closes', spec: compare });
    const view = presentAnalysis(saved);
    assert.deepEqual(view, {
      id: saved.id,
      name: 'two closes',
      spec: compare,
      planner: null,
      transcript: null,
      created_at: nowIso(),
      updated_at: nowIso(),
    });
    assert.deepEqual(analysisOut.parse(view), view);
  });

  test('an estimate: every figure as a token string, and the refusal a run would meet', async () => {
    const { caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const view = presentEstimate(pricing(), await workbench().runs.estimate(caller, { spec: compare }));
    assert.deepEqual(view, {
      reads: [readOf('aapl', 'AAPL'), readOf('msft', 'MSFT')],
      token_cost: '4',
      tokens_burned: '4',
      cost_eur: '0.4',
      balance: '10',
      balance_after: '6',
      confirm_required: false,
      would_refuse: null,
      refusal_detail: null,
      reuse: null,
      fair_use: { ...FAIR_USE, runs_today: 0 },
    });
    assert.deepEqual(runEstimateOut.parse(view), view);

    const short = await testCaller(server, { tokens: 3, pkg: 'workbench' });
    const refused = presentEstimate(
      pricing(),
      await workbench().runs.estimate(short.caller, { spec: compare }),
    );
    assert.equal(refused.would_refuse, 'insufficient_tokens');
    assert.equal(refused.refusal_detail, 'This run costs 4 tokens and the wallet holds 3.');
    assert.equal(refused.balance_after, '3');
    assert.equal(runEstimateOut.safeParse(refused).success, true);
  });
});

describe('runs', () => {
  test('a run and its reuse: reads with their request ids, what was burned, the result reused', async () => {
    const { caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const saved = await workbench().library.create(caller, { name: 'run me', spec: compare });
    const result = await workbench().runs.run(caller, 'vrun-1', saved.id);
    const view = presentRun(pricing(), result);
    const readView = (series: string) => {
      const r = result.reads.find((x) => x.series === series);
      assert.ok(r);
      return {
        series,
        dataset: 'stocks/prices',
        request_id: `vrun-1.${series}`,
        rows: r.rows,
        truncated: false,
        first_date: r.firstDate,
        last_date: r.lastDate,
        token_cost: '2',
        tokens_burned: '2',
      };
    };
    assert.deepEqual(view, {
      run_id: result.runId,
      analysis_id: saved.id,
      started_at: nowIso(),
      reads: [readView('aapl'), readView('msft')],
      tokens_burned: '4',
      cost_eur: '0.4',
      outputs: result.outputs,
      problems: [],
      notes: result.notes,
      reused_from: null,
    });
    assert.ok(result.reads.every((r) => r.rows > 0));
    assert.deepEqual(runResultOut.parse(view), view);

    const again = presentRun(pricing(), await workbench().runs.run(caller, 'vrun-2', saved.id));
    assert.deepEqual(again.reused_from, { run_id: result.runId, started_at: nowIso(), tokens_burned: '4' });
    assert.equal(again.tokens_burned, '0');
    assert.equal(again.cost_eur, '0');
    assert.deepEqual(runResultOut.parse(again), again);
  });
});

describe("the assistant's answers", () => {
  test('an answered question: the analysis, its run and everything the question burned', async () => {
    const { caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const answer = await workbench().assistant.ask(caller, 'vq-1', 'compare AAPL and MSFT closes');
    assert.equal(answer.kind, 'analysis');
    if (answer.kind !== 'analysis') return;
    const view = presentAsk(pricing(), answer);
    assert.deepEqual(view, {
      kind: 'analysis',
      planner: 'built-in',
      explanation: answer.explanation,
      name: answer.name,
      spec: answer.spec,
      analysis: null,
      result: presentRun(pricing(), answer.result),
      tokens_burned: '4',
      reads: 2,
    });
    assert.equal(view.result.tokens_burned, '4');
    assert.deepEqual(askOut.parse(view), view);
  });

  test('a declined question: the reason and message, nothing burned or read', async () => {
    const { caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const view = presentAsk(pricing(), await workbench().assistant.ask(caller, 'vq-2', 'forecast MSFT'));
    assert.deepEqual(
      { ...view, message: '' },
      {
        kind: 'clarify',
        planner: 'built-in',
        reason: 'forecast',
        message: '',
        candidates: [],
        tokens_burned: '0',
        reads: 0,
      },
    );
    assert.match(
      view.kind === 'clarify' ? view.message : '',
      /^The assistant charts and computes on past data only/,
    );
    assert.deepEqual(askOut.parse(view), view);
  });

  test("a question's estimate: the analysis it would run, priced; unavailable passes through", async () => {
    const { caller } = await testCaller(server, { tokens: 10, pkg: 'workbench' });
    const question = await workbench().assistant.estimateQuestion(caller, 'compare AAPL and MSFT closes');
    assert.equal(question.kind, 'estimate');
    if (question.kind !== 'estimate') return;
    const view = presentQuestionEstimate(pricing(), question);
    assert.deepEqual(view, {
      kind: 'estimate',
      planner: 'built-in',
      name: question.name,
      spec: question.spec,
      explanation: question.explanation,
      estimate: presentEstimate(pricing(), question.estimate),
    });
    assert.equal(view.kind === 'estimate' && view.estimate.tokens_burned, '4');
    assert.deepEqual(questionEstimateOut.parse(view), view);
    const unavailable = { kind: 'unavailable' as const, planner: 'chat', message: 'Known once answered.' };
    assert.deepEqual(presentQuestionEstimate(pricing(), unavailable), unavailable);
  });
});
