/**
 * The Workbench over HTTP: who may use it, the composer's analyses (save, open, rename, duplicate,
 * delete), the estimate before a run and the ledger after it, reuse of a paid result, CSV export, fair
 * use, and the assistant's built-in planner. A Terminal session pays the Terminal price (×1.35).
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { AnalysisSpec } from '../src/domain/analysis/spec.ts';
import type { DebitInput } from '../src/store/port.ts';
import { adminRequest, balanceOf, freshIp, operatorAccount } from './helpers/operator.ts';
import {
  assertLedgerBalanced,
  bearer,
  publicTestKey,
  sandboxKey,
  startServer,
  TestClock,
  type TestServer,
} from './helpers/server.ts';

const compare: AnalysisSpec = {
  series: [
    { id: 'aapl', dataset: 'stocks/prices', entity: { symbol: 'AAPL' }, field: 'close', label: 'AAPL close' },
    { id: 'msft', dataset: 'stocks/prices', entity: { symbol: 'MSFT' }, field: 'close', label: 'MSFT close' },
  ],
  steps: [
    { op: 'pct_change', input: 'aapl', as: 'aapl_ret' },
    { op: 'pct_change', input: 'msft', as: 'msft_ret' },
    { op: 'correlation', inputs: ['aapl_ret', 'msft_ret'], as: 'corr' },
  ],
  outputs: [
    { kind: 'line', values: ['aapl', 'msft'] },
    { kind: 'table', values: ['corr'] },
    { kind: 'stats', values: ['aapl'] },
  ],
};

/** A Workbench account (assigned by the operator) with a Terminal session. */
async function workbench(server: TestServer, pkg = 'workbench') {
  const account = await operatorAccount(server, { pkg });
  const login = await server.request('POST', '/api/v1/auth/login', {
    body: { email: account.email, password: account.password, client: 'terminal' },
    headers: { 'x-forwarded-for': freshIp() },
  });
  assert.equal(login.status, 200, login.text);
  return { ...account, terminal: login.json.token as string };
}

async function usageOf(server: TestServer, accountId: string) {
  return server.deps.store.listUsage({ accountId }, null, 100);
}

/** The account's runs and questions counted toward today's runs_per_day. */
async function runsToday(server: TestServer, accountId: string) {
  return server.deps.store.countAnalysisRuns(accountId, Date.UTC(2026, 10, 21));
}

describe('who may use the Workbench', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  // Every balance equals the sum of its entries after every scenario.
  afterEach(() => assertLedgerBalanced(server));
  after(async () => {
    await assertLedgerBalanced(server);
    await server.close();
  });

  test('a Pro account is refused with 403 analysis_not_entitled, naming the package that brings it', async () => {
    const pro = await workbench(server, 'pro');
    for (const [method, path, body] of [
      ['GET', '/api/v1/analyses', undefined],
      ['POST', '/api/v1/analyses', { name: 'x', spec: compare }],
      ['POST', '/api/v1/assistant/ask', { question: 'compare AAPL and MSFT' }],
    ] as const) {
      const res = await server.request(method, path, { headers: bearer(pro.terminal), body });
      assert.equal(res.status, 403, res.text);
      assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.equal(res.json.code, 'analysis_not_entitled');
      assert.deepEqual(res.json.packages, ['workbench']);
      assert.match(res.json.detail, /Workbench package; this account has the Pro package/);
    }
    assert.equal(await balanceOf(server, pro.terminal), '150000');
  });

  test('sandbox and public-test keys never reach it', async () => {
    for (const key of [await sandboxKey(server), (await publicTestKey(server)).key]) {
      const res = await server.request('POST', '/api/v1/assistant/ask', {
        headers: bearer(key),
        body: { question: 'compare AAPL and MSFT' },
      });
      assert.equal(res.status, 403, res.text);
      assert.equal(res.json.code, 'analysis_not_entitled');
    }
  });

  test("a Workbench account's wallet key may use it too, at the REST price (no Terminal surcharge)", async () => {
    const wb = await workbench(server);
    const created = await server.request('POST', '/api/v1/analyses', {
      headers: bearer(wb.key),
      body: { name: 'by key', spec: compare },
    });
    assert.equal(created.status, 201, created.text);
    const run = await server.request('POST', `/api/v1/analyses/${created.json.id}/run`, {
      headers: bearer(wb.key),
    });
    assert.equal(run.status, 200, run.text);
    assert.equal(run.json.tokens_burned, '4');
    const usage = await usageOf(server, wb.id);
    assert.deepEqual(
      usage.map((u) => [u.channel, u.keyId, u.burnedMicros]),
      [
        ['rest', wb.keyId, 2_000_000n],
        ['rest', wb.keyId, 2_000_000n],
      ],
    );
  });

  test('an operator grants it by assigning the Workbench package', async () => {
    const account = await workbench(server, 'pro');
    assert.equal(
      (await server.request('GET', '/api/v1/analyses', { headers: bearer(account.terminal) })).status,
      403,
    );
    const assigned = await adminRequest(server, 'PUT', `/api/v1/admin/accounts/${account.id}/package`, {
      body: { package: 'workbench' },
    });
    assert.equal(assigned.status, 200, assigned.text);
    const res = await server.request('GET', '/api/v1/analyses', { headers: bearer(account.terminal) });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { data: [], meta: { count: 0, planner: 'built-in' } });
  });
});

describe('the composer', () => {
  let server: TestServer;
  let wb: Awaited<ReturnType<typeof workbench>>;
  let id: string;
  before(async () => {
    server = await startServer();
    wb = await workbench(server);
  });
  // Every balance equals the sum of its entries after every scenario.
  afterEach(() => assertLedgerBalanced(server));
  after(async () => {
    await assertLedgerBalanced(server);
    await server.close();
  });

  test('saves an analysis; nothing is read or charged', async () => {
    const res = await server.request('POST', '/api/v1/analyses', {
      headers: bearer(wb.terminal),
      body: { name: 'AAPL vs MSFT', spec: compare },
    });
    assert.equal(res.status, 201, res.text);
    id = res.json.id;
    assert.match(id, /^ana_/);
    assert.equal(res.json.name, 'AAPL vs MSFT');
    assert.deepEqual(res.json.spec, compare);
    assert.equal(res.json.planner, null);
    assert.equal((await usageOf(server, wb.id)).length, 0);
  });

  test('the estimate lists every read at the Terminal price (2 tokens × 1.35) and the total', async () => {
    const res = await server.request('GET', `/api/v1/analyses/${id}/estimate`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.json.reads.map((r: { series: string; token_cost: string }) => [r.series, r.token_cost]),
      [
        ['aapl', '2.7'],
        ['msft', '2.7'],
      ],
    );
    assert.equal(res.json.tokens_burned, '5.4');
    assert.equal(res.json.balance, '250000');
    assert.equal(res.json.balance_after, '249994.6');
    assert.equal(res.json.would_refuse, null);
    assert.equal(res.json.confirm_required, false);
    assert.deepEqual(res.json.fair_use, {
      runs_per_day: 100,
      runs_today: 0,
      reads_per_run: 20,
      reuse_minutes: 15,
      confirm_above_tokens: 50,
    });
  });

  test('a run burns exactly the estimate: one Terminal-channel read per series, each in the ledger', async () => {
    const res = await server.request('POST', `/api/v1/analyses/${id}/run`, {
      headers: { ...bearer(wb.terminal), 'x-request-id': 'req-run-1' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.tokens_burned, '5.4');
    assert.equal(res.json.reused_from, null);
    assert.deepEqual(
      res.json.reads.map((r: { request_id: string; tokens_burned: string }) => [
        r.request_id,
        r.tokens_burned,
      ]),
      [
        ['req-run-1.aapl', '2.7'],
        ['req-run-1.msft', '2.7'],
      ],
    );
    assert.equal(await balanceOf(server, wb.terminal), '249994.6');
    const usage = (await usageOf(server, wb.id)).reverse();
    assert.deepEqual(
      usage.map((u) => [u.requestId, u.dataset, u.channel, u.outcome, u.burnedMicros]),
      [
        ['req-run-1.aapl', 'stocks/prices', 'terminal', 'charged', 2_700_000n],
        ['req-run-1.msft', 'stocks/prices', 'terminal', 'charged', 2_700_000n],
      ],
    );
    const burns = (await server.deps.store.listEntries(wb.walletId)).filter((e) => e.kind === 'burn');
    assert.deepEqual(
      burns.map((e) => [e.requestId, e.amountMicros]),
      [
        ['req-run-1.aapl', -2_700_000n],
        ['req-run-1.msft', -2_700_000n],
      ],
    );
    const [line, table, stats] = res.json.outputs;
    assert.equal(line.kind, 'line');
    assert.deepEqual(
      line.series.map((s: { name: string }) => s.name),
      ['AAPL close', 'MSFT close'],
    );
    assert.equal(line.series[0].x.length, res.json.reads[0].rows);
    assert.deepEqual(table.columns, ['', 'aapl_ret', 'msft_ret']);
    assert.equal(table.rows[0][1], 1);
    assert.equal(stats.rows[0].count, res.json.reads[0].rows);
    assert.equal(stats.rows[0].last, line.series[0].y.at(-1));
    await assertLedgerBalanced(server);
  });

  test('a rerun with unchanged inputs reuses the paid result and says so; fresh reads again', async () => {
    const reused = await server.request('POST', `/api/v1/analyses/${id}/run`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(reused.status, 200, reused.text);
    assert.equal(reused.json.tokens_burned, '0');
    assert.equal(reused.json.reused_from.tokens_burned, '5.4');
    assert.equal(await balanceOf(server, wb.terminal), '249994.6');
    const fresh = await server.request('POST', `/api/v1/analyses/${id}/run`, {
      headers: bearer(wb.terminal),
      body: { fresh: true },
    });
    assert.equal(fresh.json.tokens_burned, '5.4');
    assert.equal(fresh.json.reused_from, null);
    assert.equal(await balanceOf(server, wb.terminal), '249989.2');
  });

  test('past reuse_minutes a rerun reads again', async () => {
    server.clock.advance(16 * 60_000);
    const res = await server.request('POST', `/api/v1/analyses/${id}/run`, { headers: bearer(wb.terminal) });
    assert.equal(res.json.tokens_burned, '5.4');
    assert.equal(await balanceOf(server, wb.terminal), '249983.8');
  });

  test('the result exports as CSV: the series on their dates, then the correlation and the statistics', async () => {
    const res = await server.request('GET', `/api/v1/analyses/${id}/result.csv`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="AAPL-vs-MSFT.csv"');
    const [series, corr, stats] = res.text.split('\r\n\r\n');
    assert.match(series ?? '', /^date,AAPL close,MSFT close\r\n2026-/);
    assert.match(corr ?? '', /^,aapl_ret,msft_ret\r\naapl_ret,1,/);
    assert.match(stats ?? '', /^name,count,first_date,last_date,mean,std,min,max,last\r\nAAPL close,/);
  });

  test('rename, edit, duplicate, list and delete', async () => {
    const renamed = await server.request('PATCH', `/api/v1/analyses/${id}`, {
      headers: bearer(wb.terminal),
      body: { name: 'Two closes' },
    });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.json.name, 'Two closes');
    server.clock.advance(1000);
    const copy = await server.request('POST', `/api/v1/analyses/${id}/duplicate`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(copy.status, 201, copy.text);
    assert.equal(copy.json.name, 'Two closes (copy)');
    assert.notEqual(copy.json.id, id);
    const edited = await server.request('PATCH', `/api/v1/analyses/${copy.json.id}`, {
      headers: bearer(wb.terminal),
      body: { spec: { ...compare, steps: [], outputs: [{ kind: 'line', values: ['aapl'] }] } },
    });
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.json.spec.steps.length, 0);
    const list = await server.request('GET', '/api/v1/analyses', { headers: bearer(wb.terminal) });
    assert.deepEqual(
      list.json.data.map((a: { name: string }) => a.name),
      ['Two closes (copy)', 'Two closes'],
    );
    const deleted = await server.request('DELETE', `/api/v1/analyses/${copy.json.id}`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(deleted.status, 204);
    const gone = await server.request('GET', `/api/v1/analyses/${copy.json.id}`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(gone.status, 404);
    assert.equal(gone.json.code, 'not_found');
  });

  test("another account cannot open, run or delete this account's analysis", async () => {
    const other = await workbench(server);
    for (const [method, path] of [
      ['GET', `/api/v1/analyses/${id}`],
      ['POST', `/api/v1/analyses/${id}/run`],
      ['DELETE', `/api/v1/analyses/${id}`],
      ['GET', `/api/v1/analyses/${id}/result.csv`],
    ] as const) {
      const res = await server.request(method, path, { headers: bearer(other.terminal) });
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
    }
    assert.equal((await usageOf(server, other.id)).length, 0);
  });

  test('a spec the catalog cannot run is refused before any read: 400 naming each problem, 404 for a dataset', async () => {
    const bad = await server.request('POST', '/api/v1/analyses', {
      headers: bearer(wb.terminal),
      body: {
        name: 'bad',
        spec: {
          series: [{ id: 'a', dataset: 'stocks/prices', entity: { ticker: 'AAPL' }, field: 'symbol' }],
          steps: [{ op: 'rolling_mean', input: 'b', window: 5, as: 'a_ma' }],
          outputs: [{ kind: 'line', values: ['nothing'] }],
        },
      },
    });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json.code, 'invalid_request');
    assert.deepEqual(
      bad.json.errors.map((e: { path: string }) => e.path),
      ['series.0.entity.ticker', 'series.0.field', 'steps.0', 'outputs.0.values.0'],
    );
    const missing = await server.request('POST', '/api/v1/analyses/estimate', {
      headers: bearer(wb.terminal),
      body: { spec: { ...compare, series: [{ ...compare.series[0], dataset: 'stocks/pricez' }] } },
    });
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.json.code, 'dataset_not_found');
  });
});

describe('fair use and refusals', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: (c) => {
        const sku = c.pricing.commercial_skus.find((s) => s.id === 'workbench');
        if (sku) sku.fair_use = { runs_per_day: 2, reads_per_run: 2, reuse_minutes: 0 };
      },
    });
  });
  // Every balance equals the sum of its entries after every scenario.
  afterEach(() => assertLedgerBalanced(server));
  after(async () => {
    await assertLedgerBalanced(server);
    await server.close();
  });

  test('past runs_per_day: 429 fair_use_limit with Retry-After to 00:00 UTC; nothing read', async () => {
    const wb = await workbench(server);
    const created = await server.request('POST', '/api/v1/analyses', {
      headers: bearer(wb.terminal),
      body: { name: 'two', spec: compare },
    });
    for (let i = 0; i < 2; i++) {
      const ok = await server.request('POST', `/api/v1/analyses/${created.json.id}/run`, {
        headers: bearer(wb.terminal),
      });
      assert.equal(ok.status, 200, ok.text);
    }
    const before = await balanceOf(server, wb.terminal);
    const refused = await server.request('POST', `/api/v1/analyses/${created.json.id}/run`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.json.code, 'fair_use_limit');
    assert.equal(refused.json.limit, 'runs_per_day');
    // The test clock stands at 2026-11-21T15:00:00Z: nine hours to midnight.
    assert.equal(refused.headers.get('retry-after'), String(9 * 3600));
    assert.equal(refused.json.retry_after, 9 * 3600);
    assert.equal(await balanceOf(server, wb.terminal), before);
    const ask = await server.request('POST', '/api/v1/assistant/ask', {
      headers: bearer(wb.terminal),
      body: { question: 'AAPL close' },
    });
    assert.equal(ask.status, 429);
    const estimate = await server.request('GET', `/api/v1/analyses/${created.json.id}/estimate`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(estimate.json.would_refuse, 'fair_use_limit');
    assert.equal(estimate.json.fair_use.runs_today, 2);
    server.clock.advance(9 * 3600_000);
    const tomorrow = await server.request('POST', `/api/v1/analyses/${created.json.id}/run`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(tomorrow.status, 200, tomorrow.text);
  });

  test('more reads than reads_per_run: 429 fair_use_limit naming the limit, before any read', async () => {
    const wb = await workbench(server);
    const three = {
      ...compare,
      series: [
        ...compare.series,
        { id: 'nvda', dataset: 'stocks/prices', entity: { symbol: 'NVDA' }, field: 'close' },
      ],
    };
    const created = await server.request('POST', '/api/v1/analyses', {
      headers: bearer(wb.terminal),
      body: { name: 'three', spec: three },
    });
    const refused = await server.request('POST', `/api/v1/analyses/${created.json.id}/run`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.json.code, 'fair_use_limit');
    assert.equal(refused.json.limit, 'reads_per_run');
    assert.equal((await usageOf(server, wb.id)).length, 0);
  });

  test('a wallet that cannot pay the whole run: 402 before the first read', async () => {
    // 5 tokens, and the Workbench granted without its monthly credit: the run costs 5.4 from the Terminal.
    const account = await operatorAccount(server, { tokens: 5 });
    await server.deps.store.updateAccount(account.id, { packageId: 'workbench' });
    const login = await server.request('POST', '/api/v1/auth/login', {
      body: { email: account.email, password: account.password, client: 'terminal' },
      headers: { 'x-forwarded-for': freshIp() },
    });
    const created = await server.request('POST', '/api/v1/analyses', {
      headers: bearer(login.json.token),
      body: { name: 'two', spec: compare },
    });
    const refused = await server.request('POST', `/api/v1/analyses/${created.json.id}/run`, {
      headers: bearer(login.json.token),
    });
    assert.equal(refused.status, 402, refused.text);
    assert.equal(refused.json.code, 'insufficient_tokens');
    assert.equal(refused.json.required_tokens, '5.4');
    assert.equal((await usageOf(server, account.id)).length, 0);
  });
});

describe('the assistant (built-in planner)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  // Every balance equals the sum of its entries after every scenario.
  afterEach(() => assertLedgerBalanced(server));
  after(async () => {
    await assertLedgerBalanced(server);
    await server.close();
  });

  test('answers with an analysis, saved when asked to, its result and what it cost', async () => {
    const wb = await workbench(server);
    const res = await server.request('POST', '/api/v1/assistant/ask', {
      headers: { ...bearer(wb.terminal), 'x-request-id': 'req-ask-1' },
      body: { question: 'rebase AAPL and MSFT to 100 from 2026-10-15', save: true },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.kind, 'analysis');
    assert.equal(res.json.planner, 'built-in');
    assert.equal(res.json.tokens_burned, '5.4');
    assert.equal(res.json.reads, 2);
    assert.match(
      res.json.explanation,
      /rebased to 100 .* It made 2 metered reads \(\d+ observations\) and burned 5\.4 tokens\./,
    );
    assert.equal(res.json.analysis.planner, 'built-in');
    assert.equal(res.json.analysis.transcript[0].content, 'rebase AAPL and MSFT to 100 from 2026-10-15');
    const line = res.json.result.outputs[0];
    assert.equal(line.series[0].y[0], 100);
    assert.equal(line.series[0].x[0] >= '2026-10-15', true);
    assert.equal(await balanceOf(server, wb.terminal), '249994.6');
    const usage = await usageOf(server, wb.id);
    assert.deepEqual(
      usage.map((u) => u.channel),
      ['terminal', 'terminal'],
    );
    assert.deepEqual(usage.map((u) => u.requestId).sort(), ['req-ask-1.a.aapl', 'req-ask-1.a.msft']);
    const saved = await server.request('GET', `/api/v1/analyses/${res.json.analysis.id}`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(saved.status, 200);
    // Its result is the analysis's: a rerun now reuses it, and it exports.
    const rerun = await server.request('POST', `/api/v1/analyses/${res.json.analysis.id}/run`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(rerun.json.tokens_burned, '0');
    assert.ok(rerun.json.reused_from);
    const csv = await server.request('GET', `/api/v1/analyses/${res.json.analysis.id}/result.csv`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(csv.status, 200);
  });

  test('asks back with candidates and reads nothing when a name is ambiguous', async () => {
    const wb = await workbench(server);
    const res = await server.request('POST', '/api/v1/assistant/ask', {
      headers: bearer(wb.terminal),
      body: { question: 'compare APPL and MSFT' },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, {
      kind: 'clarify',
      planner: 'built-in',
      reason: 'ask_back',
      message: 'No symbol or series APPL in the catalog. Did you mean AAPL?',
      candidates: [{ label: 'AAPL', value: 'AAPL' }],
      tokens_burned: '0',
      reads: 0,
    });
    assert.equal((await usageOf(server, wb.id)).length, 0);
    assert.equal(await runsToday(server, wb.id), 0, 'a question asked back is not a run of the day');
  });

  test('an answer is saved only on request; saved later, a rerun reuses the paid result', async () => {
    const wb = await workbench(server);
    const res = await server.request('POST', '/api/v1/assistant/ask', {
      headers: bearer(wb.terminal),
      body: { question: 'compare AAPL and MSFT closes since 2026-10-01' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.kind, 'analysis');
    assert.equal(res.json.analysis, null);
    assert.equal(res.json.result.analysis_id, null);
    assert.equal(res.json.name, 'compare AAPL and MSFT closes since 2026-10-01');
    assert.deepEqual(
      res.json.spec.series.map((s: { id: string; from: string }) => [s.id, s.from]),
      [
        ['aapl', '2026-10-01'],
        ['msft', '2026-10-01'],
      ],
    );
    assert.equal(res.json.tokens_burned, '5.4');
    const list = await server.request('GET', '/api/v1/analyses', { headers: bearer(wb.terminal) });
    assert.equal(list.json.meta.count, 0);
    const saved = await server.request('POST', '/api/v1/analyses', {
      headers: bearer(wb.terminal),
      body: { name: res.json.name, spec: res.json.spec },
    });
    assert.equal(saved.status, 201, saved.text);
    const rerun = await server.request('POST', `/api/v1/analyses/${saved.json.id}/run`, {
      headers: bearer(wb.terminal),
    });
    assert.equal(rerun.json.tokens_burned, '0');
    assert.equal(rerun.json.reused_from.run_id, res.json.result.run_id);
  });

  test('a forecast is declined plainly: nothing read, charged or counted as a run', async () => {
    const wb = await workbench(server);
    const before = await balanceOf(server, wb.terminal);
    for (const question of [
      'what will AAPL close at next week',
      'forecast MSFT',
      'predict the 10-year yield',
    ]) {
      const res = await server.request('POST', '/api/v1/assistant/ask', {
        headers: bearer(wb.terminal),
        body: { question },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.kind, 'clarify', question);
      assert.equal(res.json.reason, 'forecast');
      assert.match(
        res.json.message,
        /^The assistant charts and computes on past data only: it does not forecast/,
      );
      assert.equal(res.json.tokens_burned, '0');
      assert.equal(res.json.reads, 0);
    }
    assert.equal(await balanceOf(server, wb.terminal), before);
    assert.equal((await usageOf(server, wb.id)).length, 0);
    assert.equal(await runsToday(server, wb.id), 0);
  });

  test('a question it does not answer charges nothing, is not a run, and says what it can do', async () => {
    const wb = await workbench(server);
    for (const [question, reason, message] of [
      [
        'which Dow stock rose most last month',
        'unsupported',
        /does not rank stocks .* Name the ones to compare/,
      ],
      ['what is the weather in Paris', 'unsupported', /I could not find a dataset series .* I can answer/],
    ] as const) {
      const res = await server.request('POST', '/api/v1/assistant/ask', {
        headers: bearer(wb.terminal),
        body: { question },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.kind, 'clarify');
      assert.equal(res.json.reason, reason);
      assert.match(res.json.message, message);
      assert.equal(res.json.tokens_burned, '0');
    }
    assert.equal((await usageOf(server, wb.id)).length, 0);
    assert.equal(await runsToday(server, wb.id), 0);
  });

  test('"since January" and "since 2020" are honoured, and the answer says where the data starts later', async () => {
    const wb = await workbench(server);
    for (const [question, from] of [
      ['AAPL since January', '2026-01-01'],
      ['AAPL since 2020', '2020-01-01'],
    ] as const) {
      const res = await server.request('POST', '/api/v1/assistant/ask', {
        headers: bearer(wb.terminal),
        body: { question },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.spec.series[0].from, from);
      // The sample data starts 2026-09-22: both are shown from then, and the answer says so.
      assert.equal(res.json.result.reads[0].first_date, '2026-09-22');
      const note = `The data for AAPL close starts 2026-09-22; showing from then (asked from ${from}).`;
      assert.deepEqual(res.json.result.notes, [note]);
      assert.ok(res.json.explanation.includes(note), res.json.explanation);
    }
  });

  test('the estimate of a question prices its reads for this caller and reads, charges and counts nothing', async () => {
    const wb = await workbench(server);
    const question = 'rebase AAPL and MSFT to 100 from 2026-10-15';
    const estimate = await server.request('POST', '/api/v1/assistant/estimate', {
      headers: bearer(wb.terminal),
      body: { question },
    });
    assert.equal(estimate.status, 200, estimate.text);
    assert.equal(estimate.json.kind, 'estimate');
    assert.equal(estimate.json.planner, 'built-in');
    assert.match(estimate.json.explanation, /^Reads AAPL close and MSFT close/);
    // Two reads of stocks/prices (2 tokens) at the Terminal price.
    assert.deepEqual(
      estimate.json.estimate.reads.map((r: { series: string; tokens_burned: string }) => [
        r.series,
        r.tokens_burned,
      ]),
      [
        ['aapl', '2.7'],
        ['msft', '2.7'],
      ],
    );
    assert.equal(estimate.json.estimate.tokens_burned, '5.4');
    assert.equal(estimate.json.estimate.would_refuse, null);
    assert.equal((await usageOf(server, wb.id)).length, 0);
    assert.equal(await runsToday(server, wb.id), 0);
    const asked = await server.request('POST', '/api/v1/assistant/ask', {
      headers: bearer(wb.terminal),
      body: { question },
    });
    assert.equal(asked.json.tokens_burned, estimate.json.estimate.tokens_burned);
    for (const [q, reason] of [
      ['forecast AAPL', 'forecast'],
      ['compare APPL and MSFT', 'ask_back'],
    ] as const) {
      const res = await server.request('POST', '/api/v1/assistant/estimate', {
        headers: bearer(wb.terminal),
        body: { question: q },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.kind, 'clarify');
      assert.equal(res.json.reason, reason);
    }
    const pro = await workbench(server, 'pro');
    const refused = await server.request('POST', '/api/v1/assistant/estimate', {
      headers: bearer(pro.terminal),
      body: { question },
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.code, 'analysis_not_entitled');
  });
});

describe('an impossible date or range is a 400 or a question back, never a 500, and charges nothing', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  // Every balance equals the sum of its entries after every scenario.
  afterEach(() => assertLedgerBalanced(server));
  after(async () => {
    await assertLedgerBalanced(server);
    await server.close();
  });

  const impossible = (from: string): AnalysisSpec => ({
    ...compare,
    series: compare.series.map((s) => ({ ...s, from })),
  });

  test('the assistant asks back on an impossible date and reads, charges and saves nothing', async () => {
    const wb = await workbench(server);
    const before = await balanceOf(server, wb.terminal);
    for (const [question, message] of [
      ['AAPL since 2024-13-45', /There is no date 2024-13-45/],
      ['yield curve on 2024-02-30', /There is no date 2024-02-30/],
      ['AAPL last 99999999999 years', /The last 99999999999 years reach back/],
    ] as const) {
      const res = await server.request('POST', '/api/v1/assistant/ask', {
        headers: bearer(wb.terminal),
        body: { question },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.kind, 'clarify');
      assert.match(res.json.message, message);
      assert.equal(res.json.tokens_burned, '0');
      assert.equal(res.json.reads, 0);
    }
    assert.equal(await balanceOf(server, wb.terminal), before);
    assert.equal((await usageOf(server, wb.id)).length, 0);
    const list = await server.request('GET', '/api/v1/analyses', { headers: bearer(wb.terminal) });
    assert.equal(list.status, 200, list.text);
    assert.equal(list.json.meta.count, 0);
  });

  test('save, edit and estimate with an impossible date: 400 invalid_request naming the field', async () => {
    const wb = await workbench(server);
    const saved = await server.request('POST', '/api/v1/analyses', {
      headers: bearer(wb.terminal),
      body: { name: 'ok', spec: compare },
    });
    assert.equal(saved.status, 201, saved.text);
    for (const [method, path, body] of [
      ['POST', '/api/v1/analyses', { name: 'bad', spec: impossible('2024-13-45') }],
      ['PATCH', `/api/v1/analyses/${saved.json.id}`, { spec: impossible('2024-02-30') }],
      ['POST', '/api/v1/analyses/estimate', { spec: impossible('2024-13-45') }],
    ] as const) {
      const res = await server.request(method, path, { headers: bearer(wb.terminal), body });
      assert.equal(res.status, 400, `${method} ${path}: ${res.text}`);
      assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.equal(res.json.code, 'invalid_request');
      assert.match(res.text, /is not a real date/);
    }
    const list = await server.request('GET', '/api/v1/analyses', { headers: bearer(wb.terminal) });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.json.data.map((a: { name: string }) => a.name),
      ['ok'],
    );
    assert.equal((await usageOf(server, wb.id)).length, 0);
  });

  test('a stored analysis that no longer parses is left out of the list and named, not a 500', async () => {
    const wb = await workbench(server);
    const saved = await server.request('POST', '/api/v1/analyses', {
      headers: bearer(wb.terminal),
      body: { name: 'ok', spec: compare },
    });
    await server.deps.store.createAnalysis({
      id: 'ana_broken',
      accountId: wb.id,
      name: 'broken',
      spec: JSON.stringify(impossible('2024-13-45')),
      transcript: null,
      planner: null,
      createdAt: 0,
      updatedAt: 0,
    });
    const list = await server.request('GET', '/api/v1/analyses', { headers: bearer(wb.terminal) });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.json.data.map((a: { id: string }) => a.id),
      [saved.json.id],
    );
    assert.equal(list.json.meta.count, 1);
    assert.deepEqual(list.json.meta.unreadable, [{ id: 'ana_broken', name: 'broken' }]);
    const one = await server.request('GET', '/api/v1/analyses/ana_broken', { headers: bearer(wb.terminal) });
    assert.equal(one.status, 400, one.text);
    assert.equal(one.json.code, 'invalid_request');
  });
});

describe('an early_bird account: a run is refused only where its reads would be', () => {
  let server: TestServer;
  before(async () => {
    // Made in December 2025, before the early_bird cohort cutoff (2026-01-01).
    server = await startServer({ clock: new TestClock(Date.parse('2025-12-15T10:00:00Z')) });
  });
  // Every balance equals the sum of its entries after every scenario.
  afterEach(() => assertLedgerBalanced(server));
  after(async () => {
    await assertLedgerBalanced(server);
    await server.close();
  });

  test('with 1 token the estimate and the run serve every read grandfathered at zero burn, as a single read', async () => {
    const account = await operatorAccount(server, { tokens: 1 });
    const set = await adminRequest(server, 'PUT', `/api/v1/admin/accounts/${account.id}/early-bird`, {
      body: { early_bird: true },
    });
    assert.equal(set.status, 200, set.text);
    server.clock.t = Date.parse('2026-11-21T15:00:00Z');
    await server.deps.store.updateAccount(account.id, { packageId: 'workbench' });
    const login = await server.request('POST', '/api/v1/auth/login', {
      body: { email: account.email, password: account.password, client: 'terminal' },
      headers: { 'x-forwarded-for': freshIp() },
    });
    const session = bearer(login.json.token);
    const single = await server.request('GET', '/api/v1/estimate?dataset=stocks/prices', {
      headers: session,
    });
    assert.equal(single.status, 200, single.text);
    assert.equal(single.json.tokens_burned, '0');
    const estimate = await server.request('POST', '/api/v1/analyses/estimate', {
      headers: session,
      body: { spec: compare },
    });
    assert.equal(estimate.status, 200, estimate.text);
    assert.equal(estimate.json.would_refuse, null);
    assert.equal(estimate.json.tokens_burned, '0');
    assert.deepEqual(
      estimate.json.reads.map((r: { tokens_burned: string }) => r.tokens_burned),
      ['0', '0'],
    );
    const created = await server.request('POST', '/api/v1/analyses', {
      headers: session,
      body: { name: 'grandfathered', spec: compare },
    });
    const run = await server.request('POST', `/api/v1/analyses/${created.json.id}/run`, { headers: session });
    assert.equal(run.status, 200, run.text);
    assert.equal(run.json.tokens_burned, '0');
    assert.deepEqual(
      (await usageOf(server, account.id)).map((u) => [u.outcome, u.burnedMicros]),
      [
        ['grandfathered', 0n],
        ['grandfathered', 0n],
      ],
    );
    assert.equal(await balanceOf(server, login.json.token), '1');
  });
});

describe("a run against the key's spending caps: all of it or nothing", () => {
  let server: TestServer;
  /** Runs before a debit goes to the store: here, another read by the same key racing with a run. */
  let beforeDebit: ((input: DebitInput) => Promise<void>) | null = null;
  before(async () => {
    server = await startServer({
      wrapStore: (store) =>
        new Proxy(store, {
          get(target, property, receiver) {
            if (property === 'debit') {
              return async (input: DebitInput) => {
                await beforeDebit?.(input);
                return target.debit(input);
              };
            }
            const value = Reflect.get(target, property, receiver);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
    });
  });
  // Every balance equals the sum of its entries after every scenario.
  afterEach(() => assertLedgerBalanced(server));
  after(async () => {
    await assertLedgerBalanced(server);
    await server.close();
  });

  const four: AnalysisSpec = {
    series: ['AAPL', 'MSFT', 'NVDA', 'TSLA'].map((symbol) => ({
      id: symbol.toLowerCase(),
      dataset: 'stocks/prices',
      entity: { symbol },
      field: 'close',
    })),
    steps: [],
    outputs: [{ kind: 'line', values: ['aapl', 'msft', 'nvda', 'tsla'] }],
  };

  test('a run whose total passes the daily cap is refused by its estimate and before any read', async () => {
    const wb = await workbench(server);
    await server.deps.store.setKeyCaps(wb.keyId, { dailyCapMicros: 5_000_000n });
    const estimate = await server.request('POST', '/api/v1/analyses/estimate', {
      headers: bearer(wb.key),
      body: { spec: four },
    });
    assert.equal(estimate.status, 200, estimate.text);
    assert.equal(estimate.json.tokens_burned, '8');
    assert.equal(estimate.json.would_refuse, 'spending_cap_reached');
    const created = await server.request('POST', '/api/v1/analyses', {
      headers: bearer(wb.key),
      body: { name: 'four', spec: four },
    });
    const before = await server.deps.store.listEntries(wb.walletId);
    const refused = await server.request('POST', `/api/v1/analyses/${created.json.id}/run`, {
      headers: bearer(wb.key),
    });
    assert.equal(refused.status, 402, refused.text);
    assert.equal(refused.json.code, 'spending_cap_reached');
    assert.equal(refused.json.required_tokens, '8');
    assert.equal((await usageOf(server, wb.id)).length, 0);
    assert.deepEqual(await server.deps.store.listEntries(wb.walletId), before);
  });

  test('a run refused after some reads (a racing read took the cap) refunds them: no net charge', async () => {
    const wb = await workbench(server);
    await server.deps.store.setKeyCaps(wb.keyId, { dailyCapMicros: 5_000_000n });
    const created = await server.request('POST', '/api/v1/analyses', {
      headers: bearer(wb.key),
      body: { name: 'two', spec: compare },
    });
    const balance = await balanceOf(server, wb.key);
    beforeDebit = async (input) => {
      if (input.usage.requestId !== 'run-raced.msft') return;
      beforeDebit = null;
      const raced = await server.request('GET', '/api/v1/data/stocks/prices?limit=1', {
        headers: { ...bearer(wb.key), 'x-request-id': 'raced-read' },
      });
      assert.equal(raced.status, 200, raced.text);
    };
    const refused = await server.request('POST', `/api/v1/analyses/${created.json.id}/run`, {
      headers: { ...bearer(wb.key), 'x-request-id': 'run-raced' },
    });
    assert.equal(refused.status, 402, refused.text);
    assert.equal(refused.json.code, 'spending_cap_reached');
    assert.match(refused.json.detail, /The run's 1 read already charged \(2 tokens\) was refunded\./);
    const entries = (await server.deps.store.listEntries(wb.walletId)).filter(
      (e) => e.kind !== 'monthly_credit',
    );
    assert.deepEqual(
      entries.map((e) => [e.kind, e.amountMicros, e.requestId]).sort(),
      [
        ['burn', -2_000_000n, 'raced-read'],
        ['burn', -2_000_000n, 'run-raced.aapl'],
        ['refund', 2_000_000n, 'run-raced.aapl'],
      ].sort(),
    );
    // Only the racing read, served, stays charged; the run's read is given back.
    assert.equal(Number(await balanceOf(server, wb.key)), Number(balance) - 2);
    const usage = await usageOf(server, wb.id);
    assert.deepEqual(
      usage.map((u) => [u.requestId, u.outcome, u.burnedMicros]).sort(),
      [
        ['raced-read', 'charged', 2_000_000n],
        ['run-raced.aapl', 'charged', 2_000_000n],
        ['run-raced.aapl', 'refunded', -2_000_000n],
      ].sort(),
    );
  });
});
