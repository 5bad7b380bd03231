/**
 * The direct path (src/mcp/route.ts): a plain tools/call is answered by the route without an SDK server.
 * It must take only what the SDK would take as it is, and answer exactly what the SDK path answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Server } from '@modelcontextprotocol/server';
import { directToolCall } from '../src/mcp/direct.ts';
import { type Era, envelope, eraCall, eras, rpc, walletSnapshot } from './helpers/mcp.ts';
import {
  assertLedgerBalanced,
  bearer,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

const read = { name: 'read_dataset', arguments: { dataset: 'equities/stock-prices' } };
const tools = new Set(['read_dataset', 'get_account']);
const toolCall = (name: string) =>
  tools.has(name) ? async () => ({ result: { content: [] }, cost: null, raw: null }) : null;
const message = (params: unknown, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params,
  ...extra,
});

// [case, message, era, taken directly]
const cases: [string, unknown, 'legacy' | 'modern', boolean][] = [
  ['a plain 2025-era call', message(read), 'legacy', true],
  ['no arguments', message({ name: 'get_account' }), 'legacy', true],
  ['a string progress token', message({ ...read, _meta: { progressToken: 'p' } }), 'legacy', true],
  ['an integer progress token', message({ ...read, _meta: { progressToken: 3 } }), 'legacy', true],
  ['a fractional progress token', message({ ...read, _meta: { progressToken: 1.5 } }), 'legacy', false],
  ['an unknown tool', message({ name: 'drop_tables', arguments: {} }), 'legacy', false],
  ['a name that is no string', message({ name: 3, arguments: {} }), 'legacy', false],
  ['arguments that are an array', message({ name: 'read_dataset', arguments: [] }), 'legacy', false],
  ['a task', message({ ...read, task: { ttl: 1000 } }), 'legacy', false],
  ['another _meta key', message({ ...read, _meta: { 'x/trace': 1 } }), 'legacy', false],
  ['an envelope on the legacy path', message({ ...read, _meta: envelope }), 'legacy', false],
  ['_meta that is no object', message({ ...read, _meta: [] }), 'legacy', false],
  ['another method', { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }, 'legacy', false],
  ['a null id', message(read, { id: null }), 'legacy', false],
  ['params that are no object', message([read]), 'legacy', false],
  ['an enveloped call', message({ ...read, _meta: envelope }), 'modern', true],
  [
    'an envelope with a log level and a progress token',
    message({
      ...read,
      _meta: { ...envelope, 'io.modelcontextprotocol/logLevel': 'info', progressToken: 1 },
    }),
    'modern',
    true,
  ],
  ['an envelope and another key', message({ ...read, _meta: { ...envelope, 'x/y': 1 } }), 'modern', false],
];

test('directToolCall takes a plain tools/call of a known tool, and leaves everything else to the SDK', () => {
  for (const [name, body, era, expected] of cases) {
    const direct = directToolCall(body, era, toolCall);
    assert.equal(direct !== null, expected, name);
    if (direct) {
      assert.equal(direct.id, 7, name);
      const params = (body as { params: { arguments?: unknown } }).params;
      assert.equal(direct.args, params.arguments, name);
    }
  }
});

/** SDK servers connected in this process: the SDK path builds and connects one per call. */
let connected = 0;
const connect = Server.prototype.connect;
Server.prototype.connect = function (...args) {
  connected++;
  return connect.apply(this, args);
};

interface Send {
  id?: string | number;
  /** The MCP-Protocol-Version header of a 2025-era call instead of its own; none when null. */
  version?: string | null;
  meta?: Record<string, unknown>;
}

/**
 * One tools/call sent as is (the direct path) and again with a `_meta` key the SDK ignores, which the
 * direct path does not take: both answers, with what differs between two calls (the balance after each,
 * the request id) masked, and which path each took.
 */
async function bothPaths(
  server: TestServer,
  key: string,
  era: Era,
  name: string,
  args: unknown,
  options: Send = {},
) {
  const send = async (meta: Record<string, unknown>) => {
    const id = options.id ?? 'c-1';
    const { headers, message } = eraCall(era, name, args, { id, meta: { ...options.meta, ...meta } });
    if (options.version === null) delete headers['mcp-protocol-version'];
    else if (options.version !== undefined) headers['mcp-protocol-version'] = options.version;
    const before = connected;
    const res = await rpc(
      server,
      { ...bearer(key), ...headers, accept: 'application/json, text/event-stream' },
      message,
    );
    return {
      sdk: connected - before,
      status: res.status,
      type: res.headers.get('content-type'),
      cost: ['x-token-cost', 'x-request-tokens', 'x-request-cost-eur'].map((h) => res.headers.get(h)),
      credits: res.headers.get('x-credits-remaining') !== null,
      body: mask(res.json),
    };
  };
  const direct = await send({});
  const viaSdk = await send({ 'tmd.example/path': 'sdk' });
  assert.equal(direct.sdk, 0, `${name}: the direct path builds no SDK server`);
  assert.equal(viaSdk.sdk, 1, `${name}: the other goes through the SDK`);
  return { direct: { ...direct, sdk: null }, viaSdk: { ...viaSdk, sdk: null } };
}

function mask(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/\d+(\.\d+)? tokens left/, 'N tokens left');
  if (Array.isArray(value)) return value.map(mask);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === 'credits_remaining' || k === 'request_id' || k === 'balance' ? '*' : mask(v),
    ]),
  );
}

describe('the direct path answers what the SDK answers', () => {
  let server: TestServer;
  let richAccount: Awaited<ReturnType<typeof walletAccount>>;
  let rich: string;
  let poor: string;
  before(async () => {
    server = await startServer();
    richAccount = await walletAccount(server, 1000);
    rich = richAccount.key;
    poor = (await walletAccount(server, 1)).key;
  });
  after(() => server.close());

  const calls: [string, 'rich' | 'poor', string, unknown][] = [
    ['a page', 'rich', 'read_dataset', { dataset: 'equities/stock-prices', limit: 3 }],
    [
      'a projection, oldest first',
      'rich',
      'read_dataset',
      {
        dataset: 'cftc/legacy_futures-facts',
        limit: 2,
        fields: 'report_date,open_interest_all',
        sort: 'asc',
      },
    ],
    [
      'an empty page',
      'rich',
      'read_dataset',
      { dataset: 'equities/stock-prices', filters: { symbol: 'ZZZZ' } },
    ],
    ['a bad limit', 'rich', 'read_dataset', { dataset: 'equities/stock-prices', limit: 5000 }],
    ['an unknown argument', 'rich', 'read_dataset', { dataset: 'equities/stock-prices', symbol: 'AAPL' }],
    ['an unknown dataset', 'rich', 'read_dataset', { dataset: 'nowhere/nothing' }],
    ['a wallet too small', 'poor', 'read_dataset', { dataset: 'cftc/legacy_futures-facts' }],
    ['arguments that are no object', 'rich', 'read_dataset', ['equities/stock-prices']],
    ['a search', 'rich', 'search_datasets', { query: 'treasury' }],
    ['a description', 'rich', 'describe_dataset', { dataset: 'cftc/legacy_futures-facts' }],
    ['an estimate', 'rich', 'estimate_cost', { recipe: 'dow30-sandbox-smoke' }],
    ['the account', 'rich', 'get_account', {}],
    ['a recipe', 'rich', 'run_recipe', { recipe: 'dow30-sandbox-smoke' }],
  ];
  for (const era of eras) {
    test(`${era}: every tool, served and refused`, async () => {
      for (const [what, who, name, args] of calls) {
        const { direct, viaSdk } = await bothPaths(server, who === 'rich' ? rich : poor, era, name, args);
        assert.equal(direct.status, 200, `${what}: ${JSON.stringify(direct.body)}`);
        assert.deepEqual(direct, viaSdk, what);
        // A served page goes out with its raw parts put back, typed as the SDK types JSON.
        if (what === 'a page') assert.equal(direct.type, 'application/json', what);
        const result = (direct.body as { result: Record<string, unknown> }).result;
        if (era === '2026-07-28') {
          assert.equal(result.resultType, 'complete', what);
          assert.deepEqual((result._meta as Record<string, unknown>)['io.modelcontextprotocol/serverInfo'], {
            name: 'token-metered-data',
            title: 'Token-metered data service',
            version: '1.0.0',
          });
        } else {
          assert.equal(result.resultType, undefined, what);
        }
      }
      await assertLedgerBalanced(server);
    });
  }

  test('ids, revisions and _meta the direct path takes are answered as the SDK answers them', async () => {
    const page = { dataset: 'equities/stock-prices', limit: 2 };
    const sends: [Era, Send][] = [
      ['2025-11-25', { id: 42 }],
      ['2025-11-25', { version: null }],
      ['2025-11-25', { version: '2025-06-18' }],
      ['2025-11-25', { meta: { progressToken: 'p-1' } }],
      ['2026-07-28', { id: 0, meta: { progressToken: 9, 'io.modelcontextprotocol/logLevel': 'info' } }],
    ];
    for (const [era, send] of sends) {
      const { direct, viaSdk } = await bothPaths(server, rich, era, 'read_dataset', page, send);
      assert.equal(direct.status, 200, JSON.stringify(direct.body));
      assert.equal((direct.body as { id: unknown }).id, send.id ?? 'c-1');
      assert.deepEqual(direct, viaSdk, JSON.stringify(send));
    }
  });

  test('an edge refusal on the direct path (arguments that are no object) runs no tool, charges nothing', async () => {
    const { walletId, id } = richAccount.account;
    const before = await walletSnapshot(server, walletId, id);
    const res = await rpc(
      server,
      { ...bearer(rich), accept: 'application/json' },
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'read_dataset', arguments: 'equities/stock-prices' },
      },
    );
    assert.equal(res.status, 200);
    assert.equal(res.json.result.isError, true);
    assert.equal(res.json.result._meta['tmd.example/problem'].code, 'invalid_request');
    assert.equal(res.headers.get('x-token-cost'), null);
    assert.deepEqual(await walletSnapshot(server, walletId, id), before);
  });
});
