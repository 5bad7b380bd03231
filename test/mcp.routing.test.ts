/** The route's era shortcuts never disagree with the SDK's own era classification. */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import {
  type AuthInfo,
  type CallToolResult,
  classifyInboundRequest,
  createMcpHandler,
  isLegacyRequest,
  Server,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { serveComposed } from '../src/mcp/composed.ts';
import {
  claimsModernEra,
  isComposableModernRequest,
  isPlainLegacyRequest,
  type StandardHeaders,
} from '../src/mcp/eras.ts';
import { MODERN_REVISION } from '../src/mcp/server.ts';
import { spliceRaw } from '../src/views/raw-parts.ts';
import { envelope, MCP_PATH, rpc, toolCall, walletSnapshot } from './helpers/mcp.ts';
import { bearer, startServer, walletAccount } from './helpers/server.ts';

const call = { name: 'read_dataset', arguments: { dataset: 'equities/stock-prices' } };

const bodies: [string, unknown, boolean][] = [
  [
    'an enveloped tools/call',
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...call, _meta: envelope } },
    true,
  ],
  [
    'an enveloped call with a string id',
    { jsonrpc: '2.0', id: 'a', method: 'tools/list', params: { _meta: envelope } },
    true,
  ],
  [
    'an invalid envelope (the SDK rejects it on the modern path)',
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { ...call, _meta: { 'io.modelcontextprotocol/protocolVersion': 7 } },
    },
    true,
  ],
  ['a 2025-era tools/call', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }, false],
  [
    'an initialize with an invalid claim (legacy to the SDK)',
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 7 } },
    },
    false,
  ],
  [
    'an enveloped notification',
    { jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: envelope } },
    false,
  ],
  [
    'a posted response',
    { jsonrpc: '2.0', id: 1, result: {}, method: 'x', params: { _meta: envelope } },
    false,
  ],
  ['not JSON-RPC 2.0', { jsonrpc: '1.0', id: 1, method: 'tools/call', params: { _meta: envelope } }, false],
  ['a batch', [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: envelope } }], false],
];

test('claimsModernEra is true only where the SDK would not route to legacy serving', async () => {
  for (const [name, body, expected] of bodies) {
    assert.equal(claimsModernEra(body), expected, name);
    if (expected) {
      const request = new Request('http://localhost/mcp/jsonrpc', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      });
      assert.equal(await isLegacyRequest(request, body), false, `${name}: the SDK agrees`);
    }
  }
});

// [name, body, MCP-Protocol-Version header, what isPlainLegacyRequest must say]
const legacyCases: [string, unknown, string | undefined, boolean][] = [
  [
    'a 2025-11-25 tools/call',
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: call },
    '2025-11-25',
    true,
  ],
  ['a call with no version header', { jsonrpc: '2.0', id: 'x', method: 'tools/list' }, undefined, true],
  ['an older revision', { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, '2025-03-26', true],
  [
    'other _meta keys are no claim',
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...call, _meta: { progressToken: 1 } } },
    '2025-11-25',
    true,
  ],
  [
    'initialize is left to the SDK',
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
    undefined,
    false,
  ],
  [
    'a modern header without an envelope (rejected by the SDK)',
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: call },
    '2026-07-28',
    false,
  ],
  [
    'a header with blanks is left to the SDK',
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: call },
    ' 2025-11-25',
    false,
  ],
  ['an unknown revision', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }, '2099-01-01', false],
  [
    'an envelope claim',
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...call, _meta: envelope } },
    '2026-07-28',
    false,
  ],
  ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }, '2025-11-25', false],
  ['a posted response', { jsonrpc: '2.0', id: 1, result: {} }, '2025-11-25', false],
  ['a response shaped like a call', { jsonrpc: '2.0', id: 1, method: 'x', result: {} }, undefined, false],
  ['a null id', { jsonrpc: '2.0', id: null, method: 'tools/list' }, undefined, false],
  ['not JSON-RPC 2.0', { jsonrpc: '1.0', id: 1, method: 'tools/list' }, undefined, false],
  [
    'params that are not an object',
    { jsonrpc: '2.0', id: 1, method: 'tools/list', params: 3 },
    undefined,
    false,
  ],
  ['a batch', [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }], undefined, false],
];

test('isPlainLegacyRequest is true only where the SDK classifies the request legacy', () => {
  for (const [name, body, version, expected] of legacyCases) {
    assert.equal(isPlainLegacyRequest(body, version), expected, name);
    if (expected) {
      const outcome = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: version, body });
      assert.equal(outcome.kind, 'legacy', `${name}: the SDK agrees`);
    }
  }
});

test('spliceRaw puts each part where its placeholder stands, in one pass, and leaves the rest as is', () => {
  const raw = [
    { placeholder: 'tmd-raw-b', json: JSON.stringify('a "quoted" page\nline 2') },
    { placeholder: 'tmd-raw-a', json: '[{"x":1},{"x":"tmd-raw-b"}]' },
    { placeholder: 'tmd-raw-absent', json: '0' },
  ];
  const message = JSON.stringify({ text: 'tmd-raw-b', data: 'tmd-raw-a', note: 'tmd-raw-a is kept' });
  const spliced = spliceRaw(message, raw);
  assert.deepEqual(JSON.parse(spliced), {
    text: 'a "quoted" page\nline 2',
    data: [{ x: 1 }, { x: 'tmd-raw-b' }],
    note: 'tmd-raw-a is kept',
  });
  assert.equal(spliceRaw(message, []), message);
  // Multi-byte text is put back whole.
  const text = [{ placeholder: 'tmd-raw-t', json: JSON.stringify('Zürich → 東京 🚢') }];
  const out = spliceRaw(JSON.stringify({ a: 'é', t: 'tmd-raw-t', z: 'ß' }), text);
  assert.deepEqual(JSON.parse(out), { a: 'é', t: 'Zürich → 東京 🚢', z: 'ß' });
});

/** A small server like the service's: a tool list and a tools/call that answers with text and _meta. */
function stubServer(modern: boolean): Server {
  const server = new Server(
    { name: 'stub', version: '1.0.0' },
    {
      capabilities: { tools: { listChanged: false } },
      ...(modern && { supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS, MODERN_REVISION] }),
    },
  );
  server.setRequestHandler('tools/list', () => ({
    tools: [{ name: 'read_dataset', inputSchema: { type: 'object' as const } }],
  }));
  server.setRequestHandler(
    'tools/call',
    async (request): Promise<CallToolResult> => ({
      content: [{ type: 'text', text: `called ${request.params.name}` }],
      structuredContent: { rows: [1, 2] },
      _meta: { 'example/cost': { tokens: '1' } },
    }),
  );
  return server;
}

const modernCall = (name: string, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {}, _meta: envelope },
});
const full = { protocolVersion: '2026-07-28', method: 'tools/call', name: 'read_dataset' };
// [name, body, headers, whether the composed path may serve it]
const modernCases: [string, unknown, StandardHeaders, boolean][] = [
  ['a tools/call with every standard header', modernCall('read_dataset'), full, true],
  ['a string id', modernCall('read_dataset', 'req-7'), full, true],
  ['an unknown tool (the server answers)', modernCall('nope'), { ...full, name: 'nope' }, true],
  [
    'a tools/list',
    { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } },
    { protocolVersion: '2026-07-28', method: 'tools/list', name: undefined },
    true,
  ],
  ['no Mcp-Name header', modernCall('read_dataset'), { ...full, name: undefined }, false],
  [
    'an Mcp-Name naming another tool',
    modernCall('read_dataset'),
    { ...full, name: 'describe_dataset' },
    false,
  ],
  [
    'an Mcp-Name in its Base64 form',
    modernCall('read_dataset'),
    { ...full, name: '=?base64?cmVhZF9kYXRhc2V0?=' },
    false,
  ],
  ['no Mcp-Method header', modernCall('read_dataset'), { ...full, method: undefined }, false],
  [
    'no MCP-Protocol-Version header',
    modernCall('read_dataset'),
    { ...full, protocolVersion: undefined },
    false,
  ],
  [
    'a modern revision the server is not built for',
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'read_dataset',
        _meta: { ...envelope, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' },
      },
    },
    { ...full, protocolVersion: '2027-01-01' },
    false,
  ],
  [
    'subscriptions/listen',
    { jsonrpc: '2.0', id: 3, method: 'subscriptions/listen', params: { _meta: envelope } },
    { protocolVersion: '2026-07-28', method: 'subscriptions/listen', name: undefined },
    false,
  ],
  [
    'server/discover',
    { jsonrpc: '2.0', id: 4, method: 'server/discover', params: { _meta: envelope } },
    { protocolVersion: '2026-07-28', method: 'server/discover', name: undefined },
    false,
  ],
  [
    'a notification',
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: envelope } },
    { protocolVersion: '2026-07-28', method: 'notifications/cancelled', name: undefined },
    false,
  ],
  ['a 2025-era call', toolCall('read_dataset', {}), { ...full, protocolVersion: '2025-11-25' }, false],
];

test('the composed modern path takes only requests it answers exactly as createMcpHandler does', async () => {
  const handler = createMcpHandler(() => stubServer(false), { legacy: 'reject' });
  after(() => handler.close());
  const authInfo: AuthInfo = { token: '', clientId: 'test', scopes: [] };
  for (const [name, body, headers, expected] of modernCases) {
    const outcome = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: headers.protocolVersion,
      mcpMethodHeader: headers.method,
      mcpNameHeader: headers.name,
      body,
    });
    assert.equal(isComposableModernRequest(outcome, headers), expected, name);
    if (!isComposableModernRequest(outcome, headers)) continue;
    const limit = Error.stackTraceLimit;
    const composed = await serveComposed(stubServer(true), outcome, authInfo);
    await new Promise((resolve) => setImmediate(resolve)); // the exchange has closed
    assert.equal(Error.stackTraceLimit, limit, `${name}: the close left stack traces as they were`);
    assert.ok(composed, `${name}: the server bound to ${MODERN_REVISION}`);
    const webHeaders = new Headers({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    });
    if (headers.protocolVersion) webHeaders.set('mcp-protocol-version', headers.protocolVersion);
    if (headers.method) webHeaders.set('mcp-method', headers.method);
    if (headers.name) webHeaders.set('mcp-name', headers.name);
    const reference = await handler.fetch(
      new Request(`http://localhost${MCP_PATH}`, { method: 'POST', headers: webHeaders }),
      { parsedBody: body, authInfo },
    );
    // A result comes out as the message itself (the route encodes it); anything else as the SDK's Response.
    const mine =
      'message' in composed
        ? { status: 200, type: 'application/json', answer: composed.message }
        : {
            status: composed.response.status,
            type: composed.response.headers.get('content-type'),
            answer: JSON.parse(await composed.response.text()),
          };
    assert.equal(mine.status, reference.status, name);
    assert.equal(mine.type, reference.headers.get('content-type'), name);
    const answer = JSON.parse(JSON.stringify(mine.answer));
    assert.deepEqual(answer, JSON.parse(await reference.text()), name);
    assert.equal('message' in composed, 'result' in answer, `${name}: a result is handed out as a message`);
    // The answer is the modern era's: the result names the server in its _meta.
    if (answer.result) assert.ok(answer.result._meta['io.modelcontextprotocol/serverInfo'], name);
  }
});

test('on the service, modern calls outside the composed path still get the SDK checks', async () => {
  const server = await startServer();
  after(() => server.close());
  const wallet = await walletAccount(server, 100);
  const burns = async () =>
    (await walletSnapshot(server, wallet.account.walletId, wallet.account.id)).entries.filter(
      (e) => e.kind === 'burn',
    ).length;
  const call = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'read_dataset',
      arguments: { dataset: 'equities/stock-prices', limit: 2 },
      _meta: envelope,
    },
  };
  const send = (headers: Record<string, string>) =>
    rpc(
      server,
      {
        ...bearer(wallet.key),
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        ...headers,
      },
      call,
    );

  const missing = await send({});
  assert.equal(missing.status, 400, missing.text);
  assert.match(missing.json.error.message, /Mcp-Name header is absent/);
  const mismatch = await send({ 'mcp-name': 'describe_dataset' });
  assert.equal(mismatch.status, 400, mismatch.text);
  assert.match(mismatch.json.error.message, /Mcp-Name header names "describe_dataset"/);
  assert.equal(await burns(), 0, 'a refused call burns nothing');

  for (const name of ['read_dataset', '=?base64?cmVhZF9kYXRhc2V0?=']) {
    const served = await send({ 'mcp-name': name });
    assert.equal(served.status, 200, served.text);
    assert.equal(served.json.result.structuredContent.data.length, 2, served.text);
    assert.ok(served.json.result._meta['io.modelcontextprotocol/serverInfo'], served.text);
    assert.equal(served.headers.get('x-token-cost'), '2', 'list cost 2 at the first tier');
    assert.equal(served.json.result.structuredContent.meta.cost.token_cost, '2');
  }
  assert.equal(await burns(), 2, 'each served read burned once, on either path');
});
