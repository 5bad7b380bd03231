/**
 * The 1.x SDK client (`@modelcontextprotocol/sdk`, still the most deployed line) against the real
 * service: after tools/list it validates structuredContent against each tool's output schema, even on
 * isError. Every refusal a tool call can get comes back to it as an isError result naming the code, in
 * the text and in _meta, never as a thrown error, and none of them charges anything.
 * public_test_window_closed is not reachable here: it refuses registering again (POST
 * /api/v1/auth/public-test), and a key outliving its window is a 401 key_expired before MCP runs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { digestKey } from '../src/domain/keys.ts';
import type { Store } from '../src/store/port.ts';
import { MCP_PATH, PROBLEM_META_KEY } from './helpers/mcp.ts';
import { operatorAccount } from './helpers/operator.ts';
import {
  assertLedgerBalanced,
  bearer,
  publicTestKey,
  sandboxKey,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

/** P0, list cost 5. */
const COST5 = 'cftc/legacy_futures-facts';
/** Not P0: sandbox and public-test keys may not read it. */
const NOT_P0 = 'corporate/financial-statements';

let server: TestServer;
/** While true, every page query waits, so calls overlap (the concurrency limit). */
let slowReads = false;

const slowable = (store: Store): Store =>
  new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property !== 'queryRows' && property !== 'queryPage') return value.bind(target);
      return async (...args: unknown[]) => {
        if (slowReads) await sleep(300);
        return value.apply(target, args);
      };
    },
  });

before(async () => {
  server = await startServer({
    listen: true,
    wrapStore: slowable,
    config: (c) => {
      c.limits.sandbox.per_minute = 8;
      c.limits.public_test.per_day = 8;
      c.limits.wallet.concurrent = 2;
    },
  });
});
after(async () => {
  await assertLedgerBalanced(server);
  await server.close();
});

/** A 1.x client connected with a key, after tools/list (which is what makes it check results). */
async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'tmd-sdk1-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}${MCP_PATH}`), {
      requestInit: { headers: bearer(key) },
    }),
  );
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), [
    'describe_dataset',
    'estimate_cost',
    'get_account',
    'read_dataset',
    'run_recipe',
    'search_datasets',
  ]);
  assert.ok(
    tools.every((t) => t.outputSchema),
    'every tool advertises an output schema',
  );
  return client;
}

/** Everything a charge would change: the key's wallet entries and balance, and its usage events. */
async function ledgerOf(key: string) {
  const { store } = server.deps;
  const found = await store.findKeyByDigest(digestKey(key));
  assert.ok(found, 'the key exists');
  const entries = await store.listEntries(found.wallet.id);
  const wallet = await store.getWallet(found.wallet.id);
  const usage = await store.listUsage({ keyId: found.key.id }, null, 1000);
  return {
    entries: entries.map((e) => ({ kind: e.kind, amountMicros: e.amountMicros })),
    balanceMicros: wallet?.balanceMicros,
    usage: usage.map((u) => ({ outcome: u.outcome, burnedMicros: u.burnedMicros })),
  };
}

type Result = Awaited<ReturnType<Client['callTool']>>;

/** The refusal as the 1.x client hands it over: isError, the code in the text and in _meta, no structuredContent. */
function assertRefused(result: Result, code: string, status: number): Record<string, unknown> {
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.equal(result.structuredContent, undefined);
  const content = result.content as { type: string; text: string }[];
  assert.equal(content.length, 1);
  assert.equal(content[0]?.type, 'text');
  assert.match(
    content[0]?.text ?? '',
    new RegExp(`^Refused: ${code} \\(${status}\\)\\. .*Nothing was charged\\.$`),
  );
  const problem = result._meta?.[PROBLEM_META_KEY] as Record<string, unknown> | undefined;
  assert.ok(problem, JSON.stringify(result._meta));
  assert.equal(problem.code, code);
  assert.equal(problem.status, status);
  assert.equal(typeof problem.request_id, 'string');
  return problem;
}

/** One call that must be refused with `code`, leaving the key's ledger and usage as they were. */
async function refusedWithoutCharge(
  client: Client,
  key: string,
  call: { name: string; arguments: Record<string, unknown> },
  code: string,
  status: number,
): Promise<Record<string, unknown>> {
  const before = await ledgerOf(key);
  const problem = assertRefused(await client.callTool(call), code, status);
  assert.deepEqual(await ledgerOf(key), before, `${code}: nothing charged`);
  return problem;
}

describe('the 1.x SDK client gets every refusal of a tool call as an isError result', () => {
  test('400 invalid_request, invalid_cursor; 404 dataset_not_found, recipe_not_found', async () => {
    const { key } = await walletAccount(server, 100);
    const client = await connect(key);
    try {
      const bad = await refusedWithoutCharge(
        client,
        key,
        { name: 'read_dataset', arguments: { dataset: COST5, limit: 5000 } },
        'invalid_request',
        400,
      );
      assert.deepEqual(
        (bad.errors as { path: string }[]).map((e) => e.path),
        ['limit'],
      );
      await refusedWithoutCharge(
        client,
        key,
        {
          name: 'read_dataset',
          arguments: { dataset: COST5, cursor: 'eyJmIjoiMCJ9.AAAAAAAAAAAAAAAAAAAAAA' },
        },
        'invalid_cursor',
        400,
      );
      await refusedWithoutCharge(
        client,
        key,
        { name: 'estimate_cost', arguments: {} },
        'invalid_request',
        400,
      );
      const missing = await refusedWithoutCharge(
        client,
        key,
        { name: 'describe_dataset', arguments: { dataset: 'equities/stock-price' } },
        'dataset_not_found',
        404,
      );
      assert.ok((missing.suggestions as string[]).includes('equities/stock-prices'));
      await refusedWithoutCharge(
        client,
        key,
        { name: 'read_dataset', arguments: { dataset: 'equities/stock-price' } },
        'dataset_not_found',
        404,
      );
      await refusedWithoutCharge(
        client,
        key,
        { name: 'run_recipe', arguments: { recipe: 'dow31' } },
        'recipe_not_found',
        404,
      );
      const served = await client.callTool({ name: 'read_dataset', arguments: { dataset: COST5, limit: 1 } });
      assert.equal(served.isError, undefined, 'and a good call is still served');
    } finally {
      await client.close();
    }
  });

  test('402 insufficient_tokens', async () => {
    const { key } = await walletAccount(server, 1);
    const client = await connect(key);
    try {
      const problem = await refusedWithoutCharge(
        client,
        key,
        { name: 'read_dataset', arguments: { dataset: COST5, limit: 1 } },
        'insufficient_tokens',
        402,
      );
      assert.deepEqual([problem.required_tokens, problem.balance], ['5', '1']);
      await refusedWithoutCharge(
        client,
        key,
        { name: 'run_recipe', arguments: { recipe: 'calendar-tonight' } },
        'insufficient_tokens',
        402,
      );
    } finally {
      await client.close();
    }
  });

  test('402 not_entitled', async () => {
    for (const key of [await sandboxKey(server), (await publicTestKey(server)).key]) {
      const client = await connect(key);
      try {
        const problem = await refusedWithoutCharge(
          client,
          key,
          { name: 'read_dataset', arguments: { dataset: NOT_P0, limit: 1 } },
          'not_entitled',
          402,
        );
        assert.equal(problem.dataset, NOT_P0);
      } finally {
        await client.close();
      }
    }
  });

  test('402 spending_cap_reached', async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    const capped = await server.request('PATCH', `/api/v1/keys/${partner.keyId}`, {
      headers: bearer(partner.session),
      body: { daily_tokens: 5 },
    });
    assert.equal(capped.status, 200, capped.text);
    const client = await connect(partner.key);
    try {
      const read = { name: 'read_dataset', arguments: { dataset: COST5, limit: 1 } };
      assert.equal((await client.callTool(read)).isError, undefined, 'the first read fits the cap');
      const problem = await refusedWithoutCharge(client, partner.key, read, 'spending_cap_reached', 402);
      assert.deepEqual([problem.period, problem.cap_tokens, problem.spent_tokens], ['day', '5', '5']);
    } finally {
      await client.close();
    }
  });

  test('429 rate_limited and daily_limit', async () => {
    for (const [key, code] of [
      [await sandboxKey(server), 'rate_limited'],
      [(await publicTestKey(server)).key, 'daily_limit'],
    ] as const) {
      const client = await connect(key);
      try {
        const before = await ledgerOf(key);
        const results: Result[] = [];
        // The handshake and tools/list count too; the limit is 8 requests.
        for (let i = 0; i < 8 && !results.at(-1)?.isError; i++) {
          results.push(await client.callTool({ name: 'get_account', arguments: {} }));
        }
        const last = results.at(-1) as Result;
        const problem = assertRefused(last, code, 429);
        assert.equal(typeof problem.retry_after, 'number');
        assert.match((last.content as { text: string }[])[0]?.text ?? '', /Retry in \d+ s\./);
        assert.ok(results.length > 1, 'calls were served before the limit');
        assert.ok(results.slice(0, -1).every((r) => r.isError === undefined));
        assert.deepEqual(await ledgerOf(key), before, `${code}: nothing charged`);
      } finally {
        await client.close();
      }
    }
  });

  test('429 concurrency_limit', async () => {
    const { key } = await walletAccount(server, 100);
    const client = await connect(key);
    const before = await ledgerOf(key);
    slowReads = true;
    try {
      const results = await Promise.all(
        Array.from({ length: 4 }, () =>
          client.callTool({ name: 'read_dataset', arguments: { dataset: COST5, limit: 1 } }),
        ),
      );
      const served = results.filter((r) => r.isError === undefined);
      const refused = results.filter((r) => r.isError);
      assert.equal(served.length, 2, 'two reads in flight at once');
      assert.equal(refused.length, 2);
      for (const result of refused) assertRefused(result, 'concurrency_limit', 429);
      const after = await ledgerOf(key);
      assert.equal(after.entries.length, before.entries.length + 2, 'only the two served reads burned');
      assert.equal(after.balanceMicros, (before.balanceMicros ?? 0n) - 10_000_000n);
      assert.deepEqual(
        after.usage.slice(0, 2).map((u) => u.outcome),
        ['charged', 'charged'],
      );
    } finally {
      slowReads = false;
      await client.close();
    }
  });
});
