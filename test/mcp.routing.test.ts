/** The route's shortcut for enveloped requests never disagrees with the SDK's own era classification. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import { claimsModernEra } from '../src/mcp/route.ts';

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
