/** MCP through the official SDK Client over real HTTP, on both protocol eras: connect, list, call each tool. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MICROS_PER_TOKEN } from '../src/domain/money.ts';
import { connectClient, envelope, eras, rpc, toolCall, walletSnapshot } from './helpers/mcp.ts';
import {
  assertLedgerBalanced,
  bearer,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer({ listen: true });
});
after(async () => {
  await assertLedgerBalanced(server);
  await server.close();
});

const toolNames = [
  'search_datasets',
  'describe_dataset',
  'read_dataset',
  'run_recipe',
  'get_account',
  'estimate_cost',
];

// biome-ignore lint/suspicious/noExplicitAny: tool results are asserted field by field
type Loose = any;

for (const era of eras) {
  describe(`protocol ${era}`, () => {
    test('the client connects, and tools/list gives six read-only tools with schemas and stated costs', async () => {
      const { account, key } = await walletAccount(server, 1000);
      const before = await walletSnapshot(server, account.walletId, account.id);
      const mcp = await connectClient(server, bearer(key), era);
      try {
        assert.equal(mcp.transport.protocolVersion, era);
        assert.equal(mcp.client.getServerVersion()?.name, 'token-metered-data');
        assert.match(mcp.client.getInstructions() ?? '', /read_dataset and run_recipe burn tokens/);
        const { tools } = await mcp.client.listTools();
        assert.deepEqual(
          tools.map((t) => t.name),
          toolNames,
        );
        for (const tool of tools) {
          assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
          assert.equal(tool.inputSchema.type, 'object', tool.name);
          assert.equal(tool.outputSchema?.type, 'object', tool.name);
          const metered = tool.name === 'read_dataset' || tool.name === 'run_recipe';
          assert.match(tool.description ?? '', metered ? /Metered/ : /Free: burns no tokens\./, tool.name);
        }
        const read = tools.find((t) => t.name === 'read_dataset') as Loose;
        assert.match(read.description, /1, 2, 5, 10 tokens; 1 token = 0\.1 EUR/);
        assert.equal(read.annotations.idempotentHint, false, 'each read burns again');
        assert.deepEqual(read.inputSchema.required, ['dataset']);
        assert.equal(read.inputSchema.properties.limit.maximum, 1000, 'the REST read limit');
        assert.deepEqual(read.inputSchema.properties.sort.enum, ['asc', 'desc']);
        const recipe = tools.find((t) => t.name === 'run_recipe') as Loose;
        assert.match(
          recipe.description,
          /dow30-sandbox-smoke costs 2 tokens; calendar-tonight costs 2 tokens/,
        );
        assert.deepEqual(
          await walletSnapshot(server, account.walletId, account.id),
          before,
          'initialize and tools/list burn nothing',
        );
      } finally {
        await mcp.close();
      }
    });

    test('each tool answers; only read_dataset and run_recipe burn, exactly their cost, on channel mcp', async () => {
      const { account, key } = await walletAccount(server, 1000);
      const initial = await walletSnapshot(server, account.walletId, account.id);
      const mcp = await connectClient(server, bearer(key), era);
      try {
        const search = (await mcp.client.callTool({
          name: 'search_datasets',
          arguments: { query: 'futures', domain: 'cftc', free_only: true, max_cost: 5, limit: 3 },
        })) as Loose;
        assert.equal(search.isError, undefined);
        assert.equal(search.structuredContent.data.length, 3);
        assert.ok(search.structuredContent.meta.total >= 3);
        for (const entry of search.structuredContent.data) {
          assert.equal(entry.domain, 'cftc');
          assert.equal(entry.p0, true);
          assert.ok(entry.list_cost <= 5);
        }
        assert.match(search.content[0].text, /^3 of \d+ datasets/);

        const describe = (await mcp.client.callTool({
          name: 'describe_dataset',
          arguments: { dataset: 'cftc/legacy_futures-facts' },
        })) as Loose;
        const described = describe.structuredContent;
        assert.equal(described.key, 'cftc/legacy_futures-facts');
        assert.equal(described.p0, true);
        assert.equal(described.list_cost, 5);
        assert.deepEqual(described.your_cost, {
          list_cost: '5',
          token_cost: '5',
          tokens_burned: '5',
          cost_eur: '0.5',
          entitled: true,
        });
        assert.equal(described.example_call.tool, 'read_dataset');
        assert.equal(described.example_call.arguments.dataset, 'cftc/legacy_futures-facts');
        assert.ok(described.fields.some((f: { name: string }) => f.name === 'open_interest_all'));

        const estimate = (await mcp.client.callTool({
          name: 'estimate_cost',
          arguments: { dataset: 'cftc/legacy_futures-facts' },
        })) as Loose;
        assert.deepEqual(estimate.structuredContent, {
          list_cost: '5',
          token_cost: '5',
          tokens_burned: '5',
          cost_eur: '0.5',
          entitled: true,
          target: 'cftc/legacy_futures-facts',
          balance: '1000',
          balance_after: '995',
          would_refuse: null,
          refusal_detail: null,
        });

        const me = (await mcp.client.callTool({ name: 'get_account', arguments: {} })) as Loose;
        assert.equal(me.structuredContent.credential.kind, 'live');
        assert.equal(me.structuredContent.wallet.balance, '1000');
        assert.equal(me.structuredContent.limits.per_minute, 60);
        assert.match(me.content[0].text, /Balance 1000 tokens/);

        assert.deepEqual(
          await walletSnapshot(server, account.walletId, account.id),
          initial,
          'search, describe, estimate and get_account burn nothing',
        );

        const read = (await mcp.client.callTool({
          name: 'read_dataset',
          arguments: {
            dataset: 'cftc/legacy_futures-facts',
            limit: 3,
            fields: 'report_date,contract_market_name,open_interest_all',
            sort: 'asc',
          },
        })) as Loose;
        assert.equal(read.isError, undefined);
        assert.equal(read.structuredContent.data.length, 3);
        assert.deepEqual(Object.keys(read.structuredContent.data[0]), [
          'report_date',
          'contract_market_name',
          'open_interest_all',
        ]);
        assert.equal(read.structuredContent.meta.cost.token_cost, '5');
        assert.deepEqual(read._meta['tmd.example/cost'], {
          token_cost: '5',
          tokens_burned: '5',
          cost_eur: '0.5',
          request_tokens: '5',
          request_cost_eur: '0.5',
          credits_remaining: '995',
          list_cost: '5',
          outcome: 'charged',
        });
        const [table, note] = read.content;
        assert.equal(table.text.split('\n')[1], 'report_date,contract_market_name,open_interest_all');
        assert.match(
          read.content[2].text,
          /^next_cursor: \S+\nNext page: pass it as cursor with the same arguments; it is another read at 5 tokens\.$/,
        );
        assert.equal(note.text, 'Cost: 5 tokens (list 5); burned 5 tokens = 0.5 EUR; 995 tokens left.');
        const headers = mcp.lastHeaders();
        assert.equal(headers.get('x-token-cost'), '5');
        assert.equal(headers.get('x-request-tokens'), '5');
        assert.equal(headers.get('x-request-cost-eur'), '0.5');
        assert.equal(headers.get('x-credits-remaining'), '995');

        const next = (await mcp.client.callTool({
          name: 'read_dataset',
          arguments: {
            dataset: 'cftc/legacy_futures-facts',
            limit: 3,
            fields: 'report_date,contract_market_name,open_interest_all',
            sort: 'asc',
            cursor: read.structuredContent.meta.next_cursor,
          },
        })) as Loose;
        assert.equal(next.structuredContent.data.length, 3);
        assert.ok(
          next.structuredContent.data[0].report_date >= read.structuredContent.data[2].report_date,
          'the cursor continues where the first page ended',
        );
        assert.notDeepEqual(next.structuredContent.data, read.structuredContent.data);

        const recipe = (await mcp.client.callTool({
          name: 'run_recipe',
          arguments: { recipe: 'dow30-sandbox-smoke' },
        })) as Loose;
        assert.equal(recipe.structuredContent.meta.count, 30);
        assert.equal(recipe._meta['tmd.example/cost'].tokens_burned, '2');
        assert.equal(
          recipe.content[1].text,
          'Cost: 2 tokens (list 2); burned 2 tokens = 0.2 EUR; 988 tokens left.',
        );
        assert.match(recipe.content[0].text, /^recipe: dow30-sandbox-smoke, count: 30/);
        assert.equal(mcp.lastHeaders().get('x-credits-remaining'), '988');

        const after = await walletSnapshot(server, account.walletId, account.id);
        assert.deepEqual(after.entries, [
          ...initial.entries,
          { kind: 'burn', amountMicros: -5n * MICROS_PER_TOKEN },
          { kind: 'burn', amountMicros: -5n * MICROS_PER_TOKEN },
          { kind: 'burn', amountMicros: -2n * MICROS_PER_TOKEN },
        ]);
        assert.equal(after.balanceMicros, 988n * MICROS_PER_TOKEN);
        const usage = await server.deps.store.listUsage({ accountId: account.id }, null, 10);
        assert.deepEqual(
          usage.map((u) => [u.dataset, u.channel, u.outcome]),
          [
            ['recipe:dow30-sandbox-smoke', 'mcp', 'charged'],
            ['cftc/legacy_futures-facts', 'mcp', 'charged'],
            ['cftc/legacy_futures-facts', 'mcp', 'charged'],
          ],
        );
      } finally {
        await mcp.close();
      }
    });
  });
}

test('a raw JSON-RPC POST (curl, no initialize) reads a dataset, with the cost headers on the HTTP response', async () => {
  const { key } = await walletAccount(server, 100);
  const res = await rpc(
    server,
    { 'x-api-key': key, accept: '*/*' },
    toolCall('read_dataset', {
      dataset: 'equities/stock-prices',
      filters: { symbol: ['AAPL', 'MSFT'] },
      limit: 4,
    }),
  );
  assert.equal(res.status, 200, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(res.headers.get('x-token-cost'), '2');
  assert.equal(res.headers.get('x-request-tokens'), '2');
  assert.equal(res.headers.get('x-request-cost-eur'), '0.2');
  assert.equal(res.headers.get('x-credits-remaining'), '98');
  assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
  assert.equal(res.json.id, 1);
  const symbols = new Set(res.json.result.structuredContent.data.map((r: { symbol: string }) => r.symbol));
  assert.deepEqual([...symbols].sort(), ['AAPL', 'MSFT']);
});

test('the free tools carry no cost headers', async () => {
  const { key } = await walletAccount(server, 100);
  const res = await rpc(
    server,
    bearer(key),
    toolCall('describe_dataset', { dataset: 'rates/treasury-yield-series' }),
  );
  assert.equal(res.status, 200);
  assert.equal(res.json.result.structuredContent.your_cost.token_cost, '5');
  assert.equal(res.headers.get('x-token-cost'), null);
  assert.equal(res.headers.get('x-request-tokens'), null);
});

test('run_recipe calendar-tonight takes a time zone', async () => {
  const { key } = await walletAccount(server, 100);
  const res = await rpc(
    server,
    bearer(key),
    toolCall('run_recipe', { recipe: 'calendar-tonight', tz: 'Europe/London' }),
  );
  assert.equal(res.status, 200, res.text);
  const value = res.json.result.structuredContent;
  assert.equal(value.meta.recipe, 'calendar-tonight');
  assert.equal(value.meta.tz, 'Europe/London');
  assert.equal(value.meta.count, value.data.length);
  assert.equal(res.headers.get('x-request-tokens'), '2');
});

test('a 2026-07-28 subscriptions/listen is acknowledged and ends at once: the tool list never changes', async () => {
  const { key } = await walletAccount(server, 10);
  const res = await rpc(
    server,
    { ...bearer(key), 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: envelope },
    },
  );
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events = res.text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)));
  assert.equal(events[0].method, 'notifications/subscriptions/acknowledged');
  assert.deepEqual(events[0].params.notifications, {}, 'nothing to watch');
  assert.equal(events[1].id, 1);
  assert.equal(events[1].result.resultType, 'complete');
});
