/** The route's era shortcuts never disagree with the SDK's own era classification. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyInboundRequest, isLegacyRequest } from '@modelcontextprotocol/server';
import { claimsModernEra, isPlainLegacyRequest, spliceRaw } from '../src/mcp/route.ts';

const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
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
  const spliced = spliceRaw(message, raw).toString('utf8');
  assert.deepEqual(JSON.parse(spliced), {
    text: 'a "quoted" page\nline 2',
    data: [{ x: 1 }, { x: 'tmd-raw-b' }],
    note: 'tmd-raw-a is kept',
  });
  assert.equal(spliceRaw(message, []).toString('utf8'), message);
  // Multi-byte text is sized and written whole.
  const text = [{ placeholder: 'tmd-raw-t', json: JSON.stringify('Zürich → 東京 🚢') }];
  const out = spliceRaw(JSON.stringify({ a: 'é', t: 'tmd-raw-t', z: 'ß' }), text);
  assert.deepEqual(JSON.parse(out.toString('utf8')), { a: 'é', t: 'Zürich → 東京 🚢', z: 'ß' });
  assert.equal(out.length, Buffer.byteLength(out.toString('utf8')));
});
