/** MCP reads are metered by the same code path as REST: same charge, same ledger entry, same entitlement and limits. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MICROS_PER_TOKEN, tokensToMicros } from '../src/domain/money.ts';
import { utcMonth } from '../src/domain/pricing.ts';
import type { AccountRecord } from '../src/store/port.ts';
import { refusalOf, rpc, toolCall, walletSnapshot } from './helpers/mcp.ts';
import {
  assertLedgerBalanced,
  bearer,
  publicTestKey,
  sandboxKey,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await assertLedgerBalanced(server);
  await server.close();
});

/** Tokens this account burned earlier this month (so it reads at a discounted tier), as a real burn. */
async function burnedEarlier(account: AccountRecord, tokens: number): Promise<void> {
  const now = server.clock.now();
  const amount = tokensToMicros(tokens);
  const debit = await server.deps.store.debit({
    walletId: account.walletId,
    amountMicros: amount,
    month: utcMonth(now),
    usage: {
      requestId: `earlier-${account.id}`,
      keyId: null,
      accountId: account.id,
      walletId: account.walletId,
      dataset: 'equities/stock-prices',
      channel: 'rest',
      listCostMicros: amount,
      costMicros: amount,
      burnedMicros: amount,
      outcome: 'charged',
      rows: 0,
      at: now,
    },
  });
  assert.ok(debit.ok);
}

describe('parity with REST', () => {
  test('two identical accounts reading the same page through REST and MCP burn the same micro-tokens and write the same entries', async () => {
    const viaRest = await walletAccount(server, 1000);
    const viaMcp = await walletAccount(server, 1000);
    // 600 tokens burned this month: level 2 (Analyst, 2 % off), so the discount path is compared too.
    await burnedEarlier(viaRest.account, 600);
    await burnedEarlier(viaMcp.account, 600);

    const rest = await server.request('GET', '/api/v1/data/cftc/legacy_futures-facts?limit=5&sort=asc', {
      headers: bearer(viaRest.key),
    });
    const mcp = await rpc(
      server,
      bearer(viaMcp.key),
      toolCall('read_dataset', { dataset: 'cftc/legacy_futures-facts', limit: 5, sort: 'asc' }),
    );
    assert.equal(rest.status, 200, rest.text);
    assert.equal(mcp.status, 200, mcp.text);
    const result = mcp.json.result;
    assert.equal(result.isError, undefined, mcp.text);

    for (const name of ['x-token-cost', 'x-request-tokens', 'x-request-cost-eur', 'x-credits-remaining']) {
      assert.equal(mcp.headers.get(name), rest.headers.get(name), name);
    }
    assert.equal(rest.headers.get('x-token-cost'), '4.9');
    assert.deepEqual(result._meta['tmd.example/cost'], {
      token_cost: '4.9',
      tokens_burned: '4.9',
      cost_eur: '0.49',
      request_tokens: '4.9',
      request_cost_eur: '0.49',
      credits_remaining: '395.1',
      list_cost: '5',
      outcome: 'charged',
    });
    assert.deepEqual(result.structuredContent.data, rest.json.data, 'the same rows');
    assert.deepEqual(result.structuredContent.meta, rest.json.meta, 'the same meta');

    const restLedger = await walletSnapshot(server, viaRest.account.walletId, viaRest.account.id);
    const mcpLedger = await walletSnapshot(server, viaMcp.account.walletId, viaMcp.account.id);
    assert.deepEqual(mcpLedger, restLedger);
    assert.deepEqual(mcpLedger.entries.at(-1), { kind: 'burn', amountMicros: -4_900_000n });

    const [restUsage] = await server.deps.store.listUsage({ accountId: viaRest.account.id }, null, 1);
    const [mcpUsage] = await server.deps.store.listUsage({ accountId: viaMcp.account.id }, null, 1);
    assert.ok(restUsage && mcpUsage);
    assert.equal(restUsage.channel, 'rest');
    assert.equal(mcpUsage.channel, 'mcp', 'the channel is recorded');
    const same = (u: typeof restUsage) => [
      u.dataset,
      u.listCostMicros,
      u.costMicros,
      u.burnedMicros,
      u.outcome,
      u.rows,
    ];
    assert.deepEqual(same(mcpUsage), same(restUsage));
    assert.equal(
      mcpUsage.requestId,
      mcp.headers.get('x-request-id'),
      'the usage event names the HTTP request',
    );
  });

  test('a Terminal session keeps its surcharge through MCP (5 tokens × 1.35)', async () => {
    const holder = await walletAccount(server, 100);
    const login = await server.request('POST', '/api/v1/auth/login', {
      body: { email: holder.email, password: holder.password, client: 'terminal' },
    });
    assert.equal(login.status, 200, login.text);
    const res = await rpc(
      server,
      bearer(login.json.token),
      toolCall('read_dataset', { dataset: 'rates/treasury-yield-series', limit: 1 }),
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-token-cost'), '6.75');
    assert.equal(res.json.result._meta['tmd.example/cost'].credits_remaining, '93.25');
    const [usage] = await server.deps.store.listUsage({ accountId: holder.account.id }, null, 1);
    assert.equal(usage?.channel, 'terminal');
  });
});

describe('entitlement', () => {
  test('a public-test key reads a P0 dataset through MCP with zero burn and the notional cost in _meta', async () => {
    const fpt = await publicTestKey(server);
    const account = (await server.deps.store.getAccount(fpt.accountId)) as AccountRecord;
    const before = await walletSnapshot(server, account.walletId, account.id);
    const res = await rpc(
      server,
      bearer(fpt.key),
      toolCall('read_dataset', { dataset: 'rates/treasury-yield-series', limit: 2 }),
    );
    assert.equal(res.status, 200, res.text);
    const result = res.json.result;
    assert.equal(result.isError, undefined);
    assert.deepEqual(result._meta['tmd.example/cost'], {
      token_cost: '5',
      tokens_burned: '0',
      cost_eur: '0',
      request_tokens: '0',
      request_cost_eur: '0',
      credits_remaining: '10000',
      list_cost: '5',
      outcome: 'notional',
    });
    assert.equal(
      result.content[1].text,
      'Cost: 5 tokens (list 5, notional: a public-test key burns nothing on P0 reads); burned 0 tokens = 0 EUR; 10000 tokens left.',
    );
    assert.equal(res.headers.get('x-token-cost'), '5', 'X-Token-Cost is always set, notional here');
    assert.equal(res.headers.get('x-request-tokens'), '0');
    const after = await walletSnapshot(server, account.walletId, account.id);
    assert.deepEqual(after.entries, before.entries, 'no ledger entry');
    assert.equal(after.balanceMicros, 10_000n * MICROS_PER_TOKEN);
    const [usage] = await server.deps.store.listUsage({ accountId: account.id }, null, 1);
    assert.deepEqual([usage?.channel, usage?.outcome, usage?.costMicros], ['mcp', 'notional', 5_000_000n]);
  });

  test('a public-test key is refused a non-P0 read with not_entitled, burning nothing', async () => {
    const fpt = await publicTestKey(server);
    const account = (await server.deps.store.getAccount(fpt.accountId)) as AccountRecord;
    const before = await walletSnapshot(server, account.walletId, account.id);
    const res = await rpc(
      server,
      bearer(fpt.key),
      toolCall('read_dataset', { dataset: 'corporate/financial-statements', limit: 1 }),
    );
    assert.equal(res.status, 200, 'a refused tool call is a tool result, not an HTTP error');
    const result = res.json.result;
    const problem = refusalOf(result);
    assert.equal(problem.code, 'not_entitled');
    assert.equal(problem.status, 402);
    assert.equal(problem.dataset, 'corporate/financial-statements');
    assert.equal(problem.type, '/manual/errors#not_entitled');
    assert.equal(problem.request_id, res.headers.get('x-request-id'));
    assert.match(result.content[0].text, /^Refused: not_entitled \(402\)\. .* Nothing was charged\.$/);
    assert.equal(res.headers.get('x-token-cost'), null, 'no cost headers on a refusal');
    assert.deepEqual(await walletSnapshot(server, account.walletId, account.id), before);

    const rest = await server.request('GET', '/api/v1/data/corporate/financial-statements?limit=1', {
      headers: bearer(fpt.key),
    });
    const { request_id: _restId, ...restProblem } = rest.json;
    const { request_id: _mcpId, ...mcpProblem } = problem;
    assert.deepEqual(mcpProblem, restProblem, 'the same problem fields as REST');

    const estimate = await rpc(
      server,
      bearer(fpt.key),
      toolCall('estimate_cost', { dataset: 'corporate/financial-statements' }),
    );
    assert.equal(estimate.json.result.structuredContent.would_refuse, 'not_entitled');
    assert.equal(estimate.json.result.structuredContent.entitled, false);
  });

  test('a sandbox key is refused a non-P0 read and runs a P0 recipe from its own wallet', async () => {
    const key = await sandboxKey(server);
    const refused = await rpc(
      server,
      bearer(key),
      toolCall('read_dataset', { dataset: 'open-data/owid-grapher' }),
    );
    assert.equal(refusalOf(refused.json.result).code, 'not_entitled');
    const recipe = await rpc(server, bearer(key), toolCall('run_recipe', { recipe: 'dow30-sandbox-smoke' }));
    assert.equal(recipe.json.result.isError, undefined, recipe.text);
    assert.equal(recipe.headers.get('x-credits-remaining'), '2498');
  });

  test('a wallet that cannot cover the read is refused with insufficient_tokens and the figures', async () => {
    const poor = await walletAccount(server, 3);
    const before = await walletSnapshot(server, poor.account.walletId, poor.account.id);
    const estimate = await rpc(
      server,
      bearer(poor.key),
      toolCall('estimate_cost', { dataset: 'cftc/legacy_futures-facts' }),
    );
    assert.equal(estimate.json.result.structuredContent.would_refuse, 'insufficient_tokens');
    const res = await rpc(
      server,
      bearer(poor.key),
      toolCall('read_dataset', { dataset: 'cftc/legacy_futures-facts', limit: 1 }),
    );
    const problem = refusalOf(res.json.result);
    assert.deepEqual(
      [problem.code, problem.status, problem.required_tokens, problem.balance],
      ['insufficient_tokens', 402, '5', '3'],
    );
    assert.deepEqual(await walletSnapshot(server, poor.account.walletId, poor.account.id), before);
  });
});

describe('limits', () => {
  test("one key's per-minute budget is shared: 40 REST reads plus 20 MCP calls exhaust a 60/min limit", async () => {
    const { account, key } = await walletAccount(server, 1000);
    for (let i = 1; i <= 40; i++) {
      const res = await server.request('GET', '/api/v1/data/equities/stock-prices?limit=1', {
        headers: bearer(key),
      });
      assert.equal(res.status, 200, `REST read ${i}: ${res.text}`);
    }
    for (let i = 1; i <= 20; i++) {
      const res = await rpc(
        server,
        bearer(key),
        toolCall('read_dataset', { dataset: 'equities/stock-prices', limit: 1 }, i),
      );
      assert.equal(res.status, 200, `MCP call ${i}`);
      assert.equal(res.json.result.isError, undefined, `MCP call ${i}: ${res.text}`);
    }
    const before = await walletSnapshot(server, account.walletId, account.id);

    const mcp = await rpc(
      server,
      bearer(key),
      toolCall('read_dataset', { dataset: 'equities/stock-prices', limit: 1 }, 61),
    );
    assert.equal(mcp.status, 200, mcp.text);
    assert.equal(mcp.json.id, 61);
    const limited = refusalOf(mcp.json.result);
    assert.equal(limited.code, 'rate_limited');
    assert.equal(limited.status, 429);
    assert.equal(mcp.headers.get('retry-after'), String(limited.retry_after));
    assert.match(mcp.json.result.content[0].text, /Retry in \d+ s\. Nothing was charged\.$/);

    const rest = await server.request('GET', '/api/v1/data/equities/stock-prices?limit=1', {
      headers: bearer(key),
    });
    assert.equal(rest.status, 429);
    assert.equal(rest.json.code, 'rate_limited');

    assert.deepEqual(
      await walletSnapshot(server, account.walletId, account.id),
      before,
      'refusals burn nothing',
    );
    assert.equal(before.balanceMicros, (1000n - 60n * 2n) * MICROS_PER_TOKEN);
    const usage = await server.deps.store.listUsage({ accountId: account.id }, null, 100);
    assert.deepEqual(
      [usage.filter((u) => u.channel === 'rest').length, usage.filter((u) => u.channel === 'mcp').length],
      [40, 20],
    );
  });
});
