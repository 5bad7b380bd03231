/** ModernVerdicts: a kept classification is always the one the SDK gives the request itself. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyInboundRequest, type InboundClassificationOutcome } from '@modelcontextprotocol/server';
import { ModernVerdicts, type StandardHeaders } from '../../src/mcp/eras.ts';
import { envelope } from '../helpers/mcp.ts';

const sdk = (body: unknown, headers: StandardHeaders) =>
  classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: headers.protocolVersion,
    mcpMethodHeader: headers.method,
    mcpNameHeader: headers.name,
    body,
  });

/** A verdict as the route reads it: the route, the message it carries, the classification or error. */
function seen(outcome: InboundClassificationOutcome, body: unknown) {
  if (outcome.kind === 'modern')
    return { ...outcome, message: outcome.message === body ? 'the body' : outcome.message };
  if (outcome.kind === 'reject') {
    const { rung, cell, httpStatus, code, message, data } = outcome;
    return { rung, cell, httpStatus, code, message, data };
  }
  return outcome;
}

function counted() {
  let calls = 0;
  const verdicts = new ModernVerdicts((body, headers) => {
    calls++;
    return sdk(body, headers);
  });
  return { verdicts, calls: () => calls };
}

const headers: StandardHeaders = {
  protocolVersion: '2026-07-28',
  method: 'tools/call',
  name: 'read_dataset',
};
const callWith = (id: unknown, args: unknown, meta: unknown = envelope, extra: object = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'read_dataset', arguments: args, _meta: meta, ...extra },
});

// [name, body, headers]: each is classified after the calls before it, so kept verdicts are in play.
const cases: [string, unknown, StandardHeaders][] = [
  ['a call', callWith(1, { dataset: 'equities/stock-prices' }), headers],
  ['the next call, another id and arguments', callWith(2, { dataset: 'x/y', limit: 5 }), headers],
  ['a string id', callWith('r-1', {}), headers],
  ['a fractional id', callWith(1.5, {}), headers],
  ['arguments that are no object', callWith(3, ['x']), headers],
  ['another method header', callWith(4, {}), { ...headers, method: 'tools/list' }],
  ['another version header', callWith(5, {}), { ...headers, protocolVersion: '2025-11-25' }],
  ['no version header', callWith(6, {}), { ...headers, protocolVersion: undefined }],
  [
    'an envelope with no client info',
    callWith(7, {}, { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }),
    headers,
  ],
  [
    'a client info that is no object',
    callWith(8, {}, { ...envelope, 'io.modelcontextprotocol/clientInfo': 'x' }),
    headers,
  ],
  ['a task in params', callWith(9, {}, envelope, { task: { ttl: 1 } }), headers],
  ['a response', { jsonrpc: '2.0', id: 10, result: {} }, headers],
  ['the first call again', callWith(1, { dataset: 'equities/stock-prices' }), headers],
];

test('every verdict is the SDK own, whether kept or made afresh', () => {
  const { verdicts } = counted();
  for (const [name, body, sent] of cases) {
    // Twice each: the second may come from what the first kept.
    for (let round = 0; round < 2; round++) {
      assert.deepEqual(seen(verdicts.classify(body, sent), body), seen(sdk(body, sent), body), name);
    }
  }
});

test('a client calling again with the same envelope is not classified by the SDK again', () => {
  const { verdicts, calls } = counted();
  verdicts.classify(callWith(1, { dataset: 'a/b' }), headers);
  assert.equal(calls(), 1);
  const next = callWith(2, { dataset: 'c/d', limit: 3 });
  const outcome = verdicts.classify(next, headers);
  assert.equal(calls(), 1, 'the kept verdict');
  assert.equal(outcome.kind === 'modern' && outcome.message, next, 'it carries this request');
  // Another client (another envelope) and another tool header are classified afresh.
  verdicts.classify(
    callWith(2, {}, { ...envelope, 'io.modelcontextprotocol/clientCapabilities': { x: {} } }),
    headers,
  );
  verdicts.classify(callWith(3, {}), { ...headers, name: 'describe_dataset' });
  assert.equal(calls(), 3);
});

test('only modern requests are kept: a rejection is classified each time', () => {
  const { verdicts, calls } = counted();
  const bad = callWith(1, {}, { ...envelope, 'io.modelcontextprotocol/clientInfo': 'x' });
  assert.equal(verdicts.classify(bad, headers).kind, 'reject');
  assert.equal(verdicts.classify(bad, headers).kind, 'reject');
  assert.equal(calls(), 2);
});
