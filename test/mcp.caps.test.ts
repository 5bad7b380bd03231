/**
 * MCP over spending caps and early_bird: estimate_cost predicts what read_dataset then does, and a
 * refusal or a grandfathered read leaves the ledger as REST would.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { connectClient, refusalOf, rpc, toolCall, walletSnapshot } from './helpers/mcp.ts';
import { adminRequest, login, type OperatorAccount, operatorAccount } from './helpers/operator.ts';
import { assertLedgerBalanced, bearer, startServer, TestClock, type TestServer } from './helpers/server.ts';

/** P0, list cost 5: a live key burns 5 tokens per read. */
const COST5 = 'cftc/legacy_futures-facts';
/** Not P0, list cost 2. */
const COST2 = 'maritime/vessel-positions';
const NOW = Date.parse('2026-11-21T15:00:00Z');

// biome-ignore lint/suspicious/noExplicitAny: tool results are asserted field by field
type Loose = any;

let server: TestServer;
/** Made in December 2025, before the cohort cutoff, and set early_bird. */
let early: OperatorAccount;

before(async () => {
  server = await startServer({ clock: new TestClock(Date.parse('2025-12-15T10:00:00Z')), listen: true });
  early = await operatorAccount(server);
  const set = await adminRequest(server, 'PUT', `/api/v1/admin/accounts/${early.id}/early-bird`, {
    body: { early_bird: true },
  });
  assert.equal(set.status, 200, set.text);
  server.clock.t = NOW;
});
afterEach(() => {
  server.clock.t = NOW;
  return assertLedgerBalanced(server);
});
after(() => server.close());

async function cappedPartner(caps: Record<string, unknown>): Promise<OperatorAccount> {
  const partner = await operatorAccount(server, { pkg: 'partner' });
  const set = await server.request('PATCH', `/api/v1/keys/${partner.keyId}`, {
    headers: bearer(partner.session),
    body: caps,
  });
  assert.equal(set.status, 200, set.text);
  return partner;
}

async function estimate(credential: string, dataset: string): Promise<Loose> {
  const res = await rpc(server, bearer(credential), toolCall('estimate_cost', { dataset }));
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.result.isError, undefined, res.text);
  return res.json.result;
}

function read(credential: string, dataset: string) {
  return rpc(server, bearer(credential), toolCall('read_dataset', { dataset, limit: 1 }));
}

describe('spending caps through MCP', () => {
  test('reads burn up to a daily cap; estimate_cost then says spending_cap_reached and read_dataset is refused with the cap fields, burning nothing', async () => {
    const partner = await cappedPartner({ daily_tokens: 10 });
    for (let i = 1; i <= 2; i++) {
      const below = await estimate(partner.key, COST5);
      assert.equal(below.structuredContent.would_refuse, null, `below the cap (${i})`);
      assert.equal(below.structuredContent.tokens_burned, '5');
      assert.match(below.content[0].text, /It would burn 5 tokens \(0\.5 EUR\), leaving /);
      const served = await read(partner.key, COST5);
      assert.equal(served.json.result.isError, undefined, served.text);
      assert.equal(served.headers.get('x-request-tokens'), '5');
    }

    const at = await estimate(partner.key, COST5);
    const balance = at.structuredContent.balance;
    assert.deepEqual(at.structuredContent, {
      list_cost: '5',
      token_cost: '5',
      tokens_burned: '5',
      cost_eur: '0.5',
      entitled: true,
      target: COST5,
      balance,
      balance_after: balance,
      would_refuse: 'spending_cap_reached',
      refusal_detail:
        "This key's daily spending cap of 10 tokens is reached: it burned 10 today (UTC) and this request costs 5. The cap resets at 2026-11-22T00:00:00.000Z.",
      spending_cap: {
        period: 'day',
        cap_tokens: '10',
        spent_tokens: '10',
        reset_at: '2026-11-22T00:00:00.000Z',
      },
    });
    assert.equal(
      at.content[0].text,
      `${COST5}: costs you 5 tokens (list 5). It would be refused (402 spending_cap_reached). This key's daily spending cap of 10 tokens is reached: it burned 10 today (UTC) and this request costs 5. The cap resets at 2026-11-22T00:00:00.000Z. Nothing was burned.`,
    );

    const before = await walletSnapshot(server, partner.walletId, partner.id);
    const refused = await read(partner.key, COST5);
    assert.equal(refused.status, 200, 'a refused tool call is a tool result, not an HTTP error');
    const result = refused.json.result;
    // The problem itself is REST's (test/spending-caps.test.ts holds it field by field); compared below.
    const problem = refusalOf(result);
    assert.equal(problem.code, 'spending_cap_reached');
    assert.equal(problem.status, 402);
    assert.equal(problem.spent_tokens, '10');
    assert.equal(problem.request_id, refused.headers.get('x-request-id'));
    assert.match(
      result.content[0].text,
      /^Refused: spending_cap_reached \(402\)\. .* Nothing was charged\.$/,
    );
    assert.equal(refused.headers.get('x-request-tokens'), null, 'no cost headers on a refusal');
    const afterRefusal = await walletSnapshot(server, partner.walletId, partner.id);
    assert.deepEqual(afterRefusal, before, 'balance, ledger entries and usage events unchanged');
    assert.equal(afterRefusal.entries.filter((e) => e.kind === 'burn').length, 2);

    const rest = await server.request('GET', `/api/v1/data/${COST5}?limit=1`, {
      headers: bearer(partner.key),
    });
    const { request_id: _restId, ...restProblem } = rest.json;
    const { request_id: _mcpId, ...mcpProblem } = problem;
    assert.deepEqual(mcpProblem, restProblem, 'the same problem fields as REST');

    const session = await estimate(partner.session, COST5);
    assert.equal(session.structuredContent.would_refuse, null, 'a cap is on the key, not on the account');

    server.clock.t = Date.parse('2026-11-22T00:00:00Z');
    const nextDay = await estimate(partner.key, COST5);
    assert.equal(nextDay.structuredContent.would_refuse, null, 'the cap resets at reset_at');
  });

  test('estimate_cost refuses a read that would pass the cap before the cap is reached, and admits a cheaper one', async () => {
    const partner = await cappedPartner({ daily_tokens: '7.5' });
    assert.equal((await read(partner.key, COST5)).json.result.isError, undefined);
    const over = await estimate(partner.key, COST5);
    assert.equal(over.structuredContent.would_refuse, 'spending_cap_reached');
    assert.match(over.content[0].text, /cap of 7\.5 tokens is reached: it burned 5 today \(UTC\)/);
    const refused = await read(partner.key, COST5);
    assert.equal(refusalOf(refused.json.result).code, 'spending_cap_reached');
    assert.equal(refusalOf(refused.json.result).spent_tokens, '5');

    const cheap = await estimate(partner.key, COST2);
    assert.equal(cheap.structuredContent.would_refuse, null, '5 + 2 fits under 7.5');
    const served = await read(partner.key, COST2);
    assert.equal(served.json.result.isError, undefined, served.text);
    assert.equal(served.headers.get('x-request-tokens'), '2');
  });

  test('with both caps reached estimate_cost names the monthly one, as the refusal does', async () => {
    const partner = await cappedPartner({ daily_tokens: 5, monthly_tokens: 5 });
    assert.equal((await read(partner.key, COST5)).json.result.isError, undefined);
    const both = await estimate(partner.key, COST5);
    assert.equal(both.structuredContent.would_refuse, 'spending_cap_reached');
    assert.match(
      both.content[0].text,
      /monthly spending cap of 5 tokens is reached: it burned 5 this month \(UTC\) .* resets at 2026-12-01T00:00:00\.000Z\./,
    );
    const refused = await read(partner.key, COST5);
    assert.equal(refusalOf(refused.json.result).period, 'month');
  });

  test('the SDK client accepts spending_cap_reached against the advertised output schema', async () => {
    const partner = await cappedPartner({ daily_tokens: 5 });
    assert.equal((await read(partner.key, COST5)).json.result.isError, undefined);
    const mcp = await connectClient(server, bearer(partner.key), '2026-07-28');
    try {
      const { tools } = await mcp.client.listTools();
      const schema = tools.find((t) => t.name === 'estimate_cost')?.outputSchema as Loose;
      assert.deepEqual(schema.properties.would_refuse.anyOf, [
        { type: 'string', enum: ['not_entitled', 'insufficient_tokens', 'spending_cap_reached'] },
        { type: 'null' },
      ]);
      const result = (await mcp.client.callTool({
        name: 'estimate_cost',
        arguments: { dataset: COST5 },
      })) as Loose;
      assert.equal(result.isError, undefined);
      assert.equal(result.structuredContent.would_refuse, 'spending_cap_reached');
      assert.equal(result.structuredContent.spending_cap.period, 'day', 'the cap, valid against the schema');
    } finally {
      await mcp.close();
    }
  });
});

describe('early_bird through MCP', () => {
  test('a session whose wallet cannot cover the read is served at zero burn (grandfathered), as estimate_cost said', async () => {
    const credit = await adminRequest(server, 'POST', `/api/v1/admin/accounts/${early.id}/credits`, {
      headers: { 'idempotency-key': 'mcp-early-1' },
      body: { tokens: 1 },
    });
    assert.equal(credit.status, 201, credit.text);
    const session = await login(server, early);

    const forecast = await estimate(session, COST2);
    assert.deepEqual(forecast.structuredContent, {
      list_cost: '2',
      token_cost: '2',
      tokens_burned: '0',
      cost_eur: '0',
      entitled: true,
      target: COST2,
      balance: '1',
      balance_after: '1',
      would_refuse: null,
      refusal_detail: null,
    });
    assert.match(
      forecast.content[0].text,
      /It would burn 0 tokens \(0 EUR\), leaving 1\. Nothing was burned\.$/,
    );

    const entriesBefore = await server.deps.store.listEntries(early.walletId);
    const res = await read(session, COST2);
    assert.equal(res.status, 200, res.text);
    const result = res.json.result;
    assert.equal(result.isError, undefined, res.text);
    assert.deepEqual(result._meta['tmd.example/cost'], {
      token_cost: '2',
      tokens_burned: '0',
      cost_eur: '0',
      request_tokens: '0',
      request_cost_eur: '0',
      credits_remaining: '1',
      list_cost: '2',
      outcome: 'grandfathered',
    });
    assert.equal(
      result.content[1].text,
      'Cost: 2 tokens (list 2, grandfathered: served at zero burn (early_bird)); burned 0 tokens = 0 EUR; 1 tokens left.',
    );
    assert.equal(res.headers.get('x-token-cost'), '2');
    assert.equal(res.headers.get('x-request-tokens'), '0');
    assert.equal(res.headers.get('x-credits-remaining'), '1');

    const entries = await server.deps.store.listEntries(early.walletId);
    assert.deepEqual(entries, entriesBefore, 'no burn entry');
    assert.deepEqual(
      entries.map((e) => e.kind),
      ['topup'],
    );
    const [event] = await server.deps.store.listUsage({ accountId: early.id }, null, 1);
    assert.deepEqual(
      event && [
        event.dataset,
        event.channel,
        event.outcome,
        event.costMicros,
        event.burnedMicros,
        event.requestId,
      ],
      [COST2, 'mcp', 'grandfathered', 2_000_000n, 0n, res.headers.get('x-request-id')],
    );
  });

  test('the same read by a normal account session is refused insufficient_tokens, as estimate_cost said', async () => {
    const normal = await operatorAccount(server, { tokens: 1 });
    const session = await login(server, normal);
    const forecast = await estimate(session, COST2);
    assert.equal(forecast.structuredContent.would_refuse, 'insufficient_tokens');
    assert.equal(forecast.structuredContent.tokens_burned, '2');
    const before = await walletSnapshot(server, normal.walletId, normal.id);
    const refused = await read(session, COST2);
    assert.equal(refusalOf(refused.json.result).code, 'insufficient_tokens');
    assert.deepEqual(await walletSnapshot(server, normal.walletId, normal.id), before);
  });
});
