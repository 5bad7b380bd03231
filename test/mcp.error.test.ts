/**
 * Bad MCP input gets a clear error, changes nothing in the ledger, and the server stays up. Protocol faults
 * are JSON-RPC errors; a refused tool call is a tool result with isError and the REST problem in _meta.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MCP_PATH, refusalOf, rpc, toolCall, walletSnapshot } from './helpers/mcp.ts';
import {
  assertLedgerBalanced,
  bearer,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

let server: TestServer;
let key: string;
let snapshot: () => ReturnType<typeof walletSnapshot>;
let initial: Awaited<ReturnType<typeof walletSnapshot>>;

before(async () => {
  server = await startServer();
  const wallet = await walletAccount(server, 100);
  key = wallet.key;
  snapshot = () => walletSnapshot(server, wallet.account.walletId, wallet.account.id);
  initial = await snapshot();
});
after(async () => {
  assert.deepEqual(await snapshot(), initial, 'no bad request changed the ledger');
  await assertLedgerBalanced(server);
  await server.close();
});

const read = (args: Record<string, unknown>) =>
  toolCall('read_dataset', { dataset: 'equities/stock-prices', ...args });

describe('protocol faults are JSON-RPC errors', () => {
  const cases: [name: string, body: unknown, status: number, rpcCode: number, code: string | null][] = [
    ['malformed JSON', '{"jsonrpc": "2.0", "id": 1, "method": ', 400, -32700, 'malformed_json'],
    ['an empty body', '', 400, -32700, 'malformed_json'],
    [
      'a batch of 50 reads',
      Array.from({ length: 50 }, (_, i) => toolCall('read_dataset', { dataset: 'equities/stock-prices' }, i)),
      400,
      -32600,
      'invalid_request',
    ],
    ['an empty batch', [], 400, -32600, 'invalid_request'],
    ['a JSON value that is not a message', { hello: 'world' }, 400, -32600, null],
    ['a message without a method', { jsonrpc: '2.0', id: 1 }, 400, -32600, null],
    [
      'a huge body (2 MB)',
      read({ filters: { symbol: 'A'.repeat(2_000_000) } }),
      413,
      -32000,
      'payload_too_large',
    ],
  ];
  for (const [name, body, status, rpcCode, code] of cases) {
    test(`${name}: HTTP ${status}, JSON-RPC ${rpcCode}`, async () => {
      const res = await rpc(server, bearer(key), body);
      assert.equal(res.status, status, res.text);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.json.jsonrpc, '2.0');
      assert.equal(res.json.id, null);
      assert.equal(res.json.error.code, rpcCode, res.text);
      assert.equal(typeof res.json.error.message, 'string');
      if (code) {
        assert.equal(res.json.error.data.code, code);
        assert.equal(res.json.error.data.request_id, res.headers.get('x-request-id'));
      }
      assert.equal(res.headers.get('x-token-cost'), null);
    });
  }

  test('an unknown method: -32601 with the request id echoed', async () => {
    const res = await rpc(server, bearer(key), { jsonrpc: '2.0', id: 'abc', method: 'datasets/steal' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {
      jsonrpc: '2.0',
      id: 'abc',
      error: { code: -32601, message: 'Method not found' },
    });
  });

  test('an unknown tool: -32602 naming the tools', async () => {
    const res = await rpc(server, bearer(key), toolCall('drop_tables', {}, 9));
    assert.equal(res.json.id, 9);
    assert.equal(res.json.error.code, -32602);
    assert.match(
      res.json.error.message,
      /^Unknown tool "drop_tables"\. Tools: search_datasets, describe_dataset, /,
    );
    assert.equal(res.json.error.data.code, 'invalid_request');
  });

  test('a body that is not JSON: 415', async () => {
    const res = await rpc(server, bearer(key), JSON.stringify(read({})), 'text/plain');
    assert.equal(res.status, 415);
    assert.equal(res.json.error.code, -32000);
  });

  test('a client that does not accept JSON (SSE alone included): 406 naming what to send', async () => {
    for (const accept of ['text/html', 'text/event-stream']) {
      const res = await rpc(server, { ...bearer(key), accept }, read({}));
      assert.equal(res.status, 406, accept);
      assert.equal(res.json.error.code, -32000);
      assert.equal(res.json.error.data.code, 'not_acceptable');
      assert.match(res.json.error.message, /send Accept: application\/json/);
    }
  });

  test('HEAD and OPTIONS answer 405 naming POST only', async () => {
    for (const method of ['HEAD', 'OPTIONS']) {
      const res = await server.request(method, MCP_PATH, { headers: bearer(key) });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'POST', method);
    }
  });

  for (const method of ['GET', 'DELETE']) {
    test(`${method} answers 405 (the endpoint is stateless: no SSE stream, no session to end)`, async () => {
      const res = await server.request(method, MCP_PATH, { headers: bearer(key) });
      assert.equal(res.status, 405);
      assert.equal(res.headers.get('allow'), 'POST');
      assert.equal(res.json.error.code, -32000);
      assert.equal(res.json.error.data.code, 'method_not_allowed');
    });
  }
});

describe('refused tool calls are tool results with isError, the code in their text and the REST problem in _meta', () => {
  const cases: [name: string, args: Record<string, unknown>, code: string, path: string | null][] = [
    ['a limit over 1000', { limit: 5000 }, 'invalid_request', 'limit'],
    ['a limit that is not a number', { limit: 'lots' }, 'invalid_request', 'limit'],
    ['a date that is not a date', { from: '2024-13-45' }, 'invalid_request', 'from'],
    ['an unknown sort', { sort: 'sideways' }, 'invalid_request', 'sort'],
    ['an unknown field', { fields: 'close,colour' }, 'invalid_request', 'fields'],
    ['an unknown filter', { filters: { colour: 'blue' } }, 'invalid_request', 'colour'],
    ['an entity filter outside filters', { symbol: 'AAPL' }, 'invalid_request', 'symbol'],
    ['a forged cursor', { cursor: 'eyJmIjoiMCJ9.AAAAAAAAAAAAAAAAAAAAAA' }, 'invalid_cursor', null],
    ['from after to', { from: '2025-02-01', to: '2025-01-01' }, 'invalid_request', 'from'],
  ];
  for (const [name, args, code, path] of cases) {
    test(`${name}: ${code}`, async () => {
      const res = await rpc(server, bearer(key), read(args));
      assert.equal(res.status, 200, res.text);
      const result = res.json.result;
      const problem = refusalOf(result);
      assert.equal(problem.code, code, res.text);
      assert.equal(problem.status, 400);
      assert.equal(problem.request_id, res.headers.get('x-request-id'));
      if (path)
        assert.ok(
          problem.errors.some((e: { path: string }) => e.path === path),
          res.text,
        );
      assert.match(
        result.content[0].text,
        new RegExp(`^Refused: ${code} \\(400\\)\\. .*Nothing was charged\\.$`),
      );
    });
  }

  test('an entity filter outside filters says where it goes', async () => {
    const res = await rpc(server, bearer(key), read({ symbol: 'AAPL' }));
    const error = refusalOf(res.json.result).errors[0];
    assert.match(error.message, /Entity filters go inside "filters"/);
  });

  test('a missing dataset argument', async () => {
    const res = await rpc(server, bearer(key), toolCall('read_dataset', {}));
    assert.equal(refusalOf(res.json.result).code, 'invalid_request');
    assert.equal(refusalOf(res.json.result).errors[0].path, 'dataset');
  });

  test('an unknown dataset: dataset_not_found with close matches', async () => {
    const res = await rpc(server, bearer(key), toolCall('read_dataset', { dataset: 'equities/stock-price' }));
    const problem = refusalOf(res.json.result);
    assert.equal(problem.code, 'dataset_not_found');
    assert.equal(problem.status, 404);
    assert.ok(problem.suggestions.includes('equities/stock-prices'), res.text);
    assert.match(res.json.result.content[0].text, /Did you mean .*equities\/stock-prices/);
  });

  test('an unknown recipe and a bad time zone', async () => {
    const recipe = await rpc(server, bearer(key), toolCall('run_recipe', { recipe: 'dow31' }));
    assert.equal(refusalOf(recipe.json.result).code, 'recipe_not_found', 'as REST answers an unknown recipe');
    const tz = await rpc(
      server,
      bearer(key),
      toolCall('run_recipe', { recipe: 'calendar-tonight', tz: 'Mars/Olympus' }),
    );
    assert.equal(refusalOf(tz.json.result).code, 'invalid_request');
    assert.equal(refusalOf(tz.json.result).errors[0].path, 'tz');
  });

  test('estimate_cost needs exactly one of dataset or recipe', async () => {
    const both = await rpc(
      server,
      bearer(key),
      toolCall('estimate_cost', { dataset: 'equities/stock-prices', recipe: 'calendar-tonight' }),
    );
    assert.equal(refusalOf(both.json.result).code, 'invalid_request');
    const neither = await rpc(server, bearer(key), toolCall('estimate_cost', {}));
    assert.equal(refusalOf(neither.json.result).code, 'invalid_request');
  });

  test('a message nested too deeply where the SDK walks it (capabilities, _meta) is a 400 -32600, not a 500', async () => {
    let nested = '{}';
    for (let i = 0; i < 10_400; i++) nested = `{"a":${nested}}`;
    const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"t","version":"1"},"capabilities":{"experimental":${nested}}}}`;
    const legacy = await rpc(server, bearer(key), initialize);
    assert.equal(legacy.status, 400, legacy.text);
    assert.equal(legacy.json.error.code, -32600);
    assert.equal(legacy.json.error.data.code, 'invalid_request');

    let caps = '{}';
    for (let i = 0; i < 2000; i++) caps = `{"a":${caps}}`;
    const meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"experimental":${caps}}}`;
    const modern = await rpc(
      server,
      {
        ...bearer(key),
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'read_dataset',
      },
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_dataset","arguments":{"dataset":"equities/stock-prices","limit":1},"_meta":${meta}}}`,
    );
    assert.equal(modern.status, 400, modern.text);
    assert.equal(modern.json.error.code, -32600);
    assert.equal(modern.json.error.data.code, 'invalid_request');
  });

  test('refusals tell a model what to do next: typed values on text fields, unknown recipes, empty searches, guessed keys', async () => {
    const coded = await rpc(
      server,
      bearer(key),
      toolCall('read_dataset', {
        dataset: 'cftc/legacy_futures-facts',
        filters: { cftc_contract_market_code: 67651 },
      }),
    );
    assert.equal(coded.json.result.isError, true);
    assert.equal(refusalOf(coded.json.result).code, 'invalid_request');
    assert.match(refusalOf(coded.json.result).detail, /pass "67651" as a string/);
    const flag = await rpc(
      server,
      bearer(key),
      toolCall('read_dataset', { dataset: 'equities/stock-prices', filters: { symbol: [true] } }),
    );
    assert.equal(refusalOf(flag.json.result).code, 'invalid_request');

    const recipe = await rpc(server, bearer(key), toolCall('run_recipe', { recipe: 'dow30' }));
    assert.equal(recipe.json.result.isError, true);
    assert.equal(refusalOf(recipe.json.result).code, 'recipe_not_found', 'the code REST gives');
    assert.match(refusalOf(recipe.json.result).detail, /dow30-sandbox-smoke/);

    const stray = await rpc(
      server,
      bearer(key),
      toolCall('search_datasets', { query: 'stock', recipe: 'nope' }),
    );
    assert.equal(
      refusalOf(stray.json.result).code,
      'invalid_request',
      'a tool without recipes: an unknown argument',
    );

    const empty = await rpc(server, bearer(key), toolCall('search_datasets', { query: 'zzzz qqqq' }));
    assert.match(empty.json.result.content[0].text, /^No dataset matches\. .*Domains: .*cftc/);

    const guessed = await rpc(
      server,
      bearer(key),
      toolCall('describe_dataset', { dataset: 'treasury/yield-curve' }),
    );
    assert.equal(refusalOf(guessed.json.result).code, 'dataset_not_found');
    assert.ok(refusalOf(guessed.json.result).suggestions.includes('macro/treasury-yield-series'));
    const nothing = await rpc(server, bearer(key), toolCall('describe_dataset', { dataset: 'xyz/qqq' }));
    assert.deepEqual(refusalOf(nothing.json.result).suggestions, []);
    assert.match(refusalOf(nothing.json.result).detail, /search_datasets/);
  });

  test('a __proto__ key is refused as such, not called broken JSON', async () => {
    const res = await rpc(
      server,
      bearer(key),
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_dataset","arguments":{"dataset":"equities/stock-prices","filters":{"__proto__":"AAPL"}}}}',
    );
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json.error.code, -32600);
    assert.match(res.json.error.message, /__proto__/);
    assert.equal(res.json.error.data.code, 'invalid_request');
  });

  test('deeply nested arguments are refused, not crashed on', async () => {
    let nested = '"x"';
    for (let i = 0; i < 5000; i++) nested = `{"a":${nested}}`;
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_dataset","arguments":{"dataset":"equities/stock-prices","filters":${nested}}}}`;
    const res = await rpc(server, bearer(key), body);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.result.isError, true);
    assert.equal(refusalOf(res.json.result).code, 'invalid_request');
    assert.equal(refusalOf(res.json.result).errors[0].path, 'filters.a');
  });
});

test('after all of that the server is up and the wallet untouched', async () => {
  const res = await rpc(server, bearer(key), toolCall('get_account', {}));
  assert.equal(res.status, 200);
  assert.equal(res.json.result.structuredContent.wallet.balance, '100');
  assert.deepEqual(await snapshot(), initial);
});
