/**
 * Calls refused before any tool runs are still tool results in both protocol eras: a limit at the edge
 * (the 2026-07-28 encoding included, so the SDK client accepts it), a chunked body, and arguments that
 * are not an object. A malformed session cookie is a 401, not a fault. None of them burns anything.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  connectClient,
  eraCall,
  eras,
  MCP_PATH,
  refusalOf,
  rpc,
  toolCall,
  walletSnapshot,
} from './helpers/mcp.ts';
import {
  assertLedgerBalanced,
  bearer,
  sandboxKey,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer({
    listen: true,
    config: (c) => {
      c.limits.sandbox.per_minute = 3;
    },
  });
});
after(async () => {
  await assertLedgerBalanced(server);
  await server.close();
});

describe('a limit refusal is a tool result the SDK client accepts, in both eras', () => {
  for (const era of eras) {
    test(`${era}: calls past the per-minute limit come back isError rate_limited, never a thrown error`, async () => {
      const key = await sandboxKey(server);
      const connected = await connectClient(server, bearer(key), era);
      try {
        const codes: string[] = [];
        for (let i = 0; i < 5; i++) {
          const result = await connected.client.callTool({ name: 'get_account', arguments: {} });
          codes.push(result.isError ? refusalOf(result).code : 'ok');
        }
        // The sandbox allows 3 a minute; the 2025-era handshake POSTs count too.
        assert.ok(codes.includes('ok'), codes.join());
        assert.equal(codes.at(-1), 'rate_limited', codes.join());
        assert.ok(connected.lastHeaders().get('retry-after'), 'Retry-After on the refused call');
      } finally {
        await connected.close();
      }
    });

    test(`${era}: the raw refusal carries the era's encoding and no cost headers`, async () => {
      const key = await sandboxKey(server);
      const { headers, message } = eraCall(era, 'get_account', {});
      let last = await rpc(server, { ...bearer(key), ...headers }, message);
      for (let i = 0; i < 5 && !last.json?.result?.isError; i++) {
        last = await rpc(server, { ...bearer(key), ...headers }, message);
      }
      assert.equal(last.status, 200, last.text);
      assert.equal(last.json.id, 1);
      const problem = refusalOf(last.json.result);
      assert.equal(problem.code, 'rate_limited');
      assert.equal(problem.request_id, last.headers.get('x-request-id'));
      if (era === '2026-07-28') {
        assert.equal(last.json.result.resultType, 'complete', last.text);
        assert.ok(last.json.result._meta['io.modelcontextprotocol/serverInfo'], last.text);
      } else {
        assert.equal(last.json.result.resultType, undefined, last.text);
      }
      assert.equal(last.headers.get('x-token-cost'), null, 'a refusal has no cost headers');
    });
  }

  test('a limited call sent with a chunked body (no Content-Length) is a tool result too', async () => {
    const key = await sandboxKey(server);
    const body = JSON.stringify(toolCall('get_account', {}));
    const chunked = () =>
      fetch(`${server.url}${MCP_PATH}`, {
        method: 'POST',
        headers: {
          ...bearer(key),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(body.slice(0, 20)));
            controller.enqueue(new TextEncoder().encode(body.slice(20)));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
    const statuses: number[] = [];
    let refused: { result?: unknown } = {};
    for (let i = 0; i < 5; i++) {
      const res = await chunked();
      statuses.push(res.status);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/, 'JSON-RPC, not a problem');
      refused = (await res.json()) as typeof refused;
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200]);
    assert.equal(refusalOf(refused.result).code, 'rate_limited');
  });
});

describe('arguments that are not an object: a refused tool call (invalid_request), in both eras', () => {
  let key: string;
  let snapshot: () => ReturnType<typeof walletSnapshot>;
  let initial: Awaited<ReturnType<typeof walletSnapshot>>;
  before(async () => {
    const wallet = await walletAccount(server, 100);
    key = wallet.key;
    snapshot = () => walletSnapshot(server, wallet.account.walletId, wallet.account.id);
    initial = await snapshot();
  });
  after(async () => {
    assert.deepEqual(await snapshot(), initial, 'no refused call changed the ledger');
  });

  for (const era of eras) {
    for (const [what, args, kind] of [
      ['a string', 'x', 'string'],
      ['an array', [1], 'an array'],
      ['null', null, 'null'],
      ['a number', 5, 'number'],
    ] as const) {
      test(`${era}: ${what}`, async () => {
        const { headers, message } = eraCall(era, 'read_dataset', args);
        const res = await rpc(server, { ...bearer(key), ...headers }, message);
        assert.equal(res.status, 200, res.text);
        const result = res.json.result;
        const problem = refusalOf(result);
        assert.equal(problem.code, 'invalid_request');
        assert.equal(problem.status, 400);
        assert.deepEqual(problem.errors, [
          { path: '(arguments)', message: `expected an object, received ${kind}` },
        ]);
        assert.match(
          result.content[0].text,
          /^Refused: invalid_request \(400\)\. Invalid arguments for read_dataset: arguments must be a JSON object/,
        );
        if (era === '2026-07-28') assert.equal(result.resultType, 'complete');
      });
    }
  }

  test('the SDK client sees the same refusal, not a thrown protocol error', async () => {
    const connected = await connectClient(server, bearer(key), '2026-07-28');
    try {
      const result = await connected.client.callTool({
        name: 'read_dataset',
        arguments: 'x' as unknown as Record<string, unknown>,
      });
      assert.equal(refusalOf(result).code, 'invalid_request');
    } finally {
      await connected.close();
    }
  });
});

describe('a malformed session cookie is a 401, not a fault', () => {
  const cookie = { cookie: 'tmd_session=%E0%A4%A' };
  test('REST', async () => {
    const res = await server.request('GET', '/api/v1/me', { headers: cookie });
    assert.equal(res.status, 401, res.text);
    assert.equal(res.json.code, 'invalid_session');
    assert.ok(res.headers.get('www-authenticate')?.startsWith('Bearer'));
    assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
  });
  test('MCP: refused at the edge, before MCP runs', async () => {
    const res = await rpc(server, cookie, toolCall('get_account', {}));
    assert.equal(res.status, 401, res.text);
    assert.equal(res.json.code, 'invalid_session');
    assert.ok(res.headers.get('www-authenticate')?.startsWith('Bearer'));
  });
});
