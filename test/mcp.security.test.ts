/** MCP at the edge: the REST credentials and 401s before MCP runs, and Host/Origin checks against DNS rebinding. */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { parseEnv } from '../src/config.ts';
import { allowedHostnames } from '../src/mcp/route.ts';
import { connectClient, MCP_PATH, rpc, toolCall } from './helpers/mcp.ts';
import {
  assertLedgerBalanced,
  bearer,
  sandboxKey,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

const getAccount = toolCall('get_account', {});

/** A POST with a Host header of our choosing (fetch does not let a caller set Host). */
function postWithHost(
  server: TestServer,
  host: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: MCP_PATH,
        method: 'POST',
        headers: { host, 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('credentials', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ listen: true });
  });
  after(async () => {
    await assertLedgerBalanced(server);
    await server.close();
  });

  const unauthorized: [name: string, headers: Record<string, string>, code: string][] = [
    ['no credential', {}, 'missing_credentials'],
    ['Basic auth', { authorization: 'Basic dXNlcjpwYXNz' }, 'invalid_key'],
    ['an unknown key', { 'x-api-key': `tmd_live_${'A'.repeat(43)}` }, 'invalid_key'],
    [
      'a forged session',
      { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.x' },
      'invalid_session',
    ],
  ];
  for (const [name, headers, code] of unauthorized) {
    test(`${name}: HTTP 401 problem+json with WWW-Authenticate, before MCP runs`, async () => {
      // A malformed body too: were MCP to run first, this would be a JSON-RPC parse error.
      for (const body of [getAccount, '{"jsonrpc": ']) {
        const res = await rpc(server, headers, body);
        assert.equal(res.status, 401, res.text);
        assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
        assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="token-metered-data"');
        assert.equal(res.json.code, code);
        assert.equal(res.json.request_id, res.headers.get('x-request-id'));
      }
    });
  }

  test('a revoked key and an expired sandbox key: 401 key_revoked, key_expired', async () => {
    const holder = await walletAccount(server, 10);
    const keys = await server.request('GET', '/api/v1/keys', { headers: bearer(holder.session) });
    const id = keys.json.data.find((k: { kind: string }) => k.kind === 'live').id;
    assert.equal(
      (await server.request('DELETE', `/api/v1/keys/${id}`, { headers: bearer(holder.session) })).status,
      200,
    );
    const revoked = await rpc(server, bearer(holder.key), getAccount);
    assert.equal(revoked.status, 401);
    assert.equal(revoked.json.code, 'key_revoked');

    const sandbox = await sandboxKey(server);
    server.clock.advance(73 * 3_600_000);
    const expired = await rpc(server, bearer(sandbox), getAccount);
    assert.equal(expired.status, 401);
    assert.equal(expired.json.code, 'key_expired');
  });

  test('Authorization: Bearer, X-API-Key and a session JWT all work, as on REST', async () => {
    const holder = await walletAccount(server, 10);
    for (const headers of [bearer(holder.key), { 'x-api-key': holder.key }, bearer(holder.session)]) {
      const res = await rpc(server, headers, getAccount);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.result.structuredContent.wallet.balance, '10');
    }
    const session = await rpc(server, bearer(holder.session), getAccount);
    assert.equal(session.json.result.structuredContent.credential.kind, 'session');
  });

  test('the SDK client gets the 401 too, and connects once given a key', async () => {
    await assert.rejects(connectClient(server, {}, '2025-11-25'), /401|Unauthorized|missing_credentials/i);
    const holder = await walletAccount(server, 10);
    const mcp = await connectClient(server, { 'x-api-key': holder.key }, '2026-07-28');
    await mcp.close();
  });
});

describe('DNS rebinding: Host and Origin', () => {
  test('allowed hostnames: loopback names, plus the BASE_URL host; none known when listening wide without BASE_URL', () => {
    assert.deepEqual(allowedHostnames(parseEnv({})), ['localhost', '127.0.0.1', '[::1]']);
    assert.deepEqual(allowedHostnames(parseEnv({ HOST: '0.0.0.0', BASE_URL: 'https://data.example.com' })), [
      'localhost',
      '127.0.0.1',
      '[::1]',
      'data.example.com',
    ]);
    assert.equal(allowedHostnames(parseEnv({ HOST: '0.0.0.0' })), null);
  });

  test('on loopback: a foreign Host or Origin is refused with 403; localhost origins pass', async () => {
    const server = await startServer({ listen: true });
    try {
      const { key, session } = await walletAccount(server, 10);
      const evilHost = await postWithHost(server, 'rebound.evil.example:80', bearer(key), getAccount);
      assert.equal(evilHost.status, 403);
      assert.match(String((evilHost.json.error as { message: string }).message), /Invalid Host/);
      const evilOrigin = await rpc(server, { ...bearer(key), origin: 'https://evil.example' }, getAccount);
      assert.equal(evilOrigin.status, 403);
      assert.equal(evilOrigin.json.error.code, -32000);
      // The session cookie sent by a foreign page gets the same JSON-RPC refusal.
      const cookieOrigin = await rpc(
        server,
        { cookie: `tmd_session=${session}`, origin: 'https://evil.example' },
        getAccount,
      );
      assert.equal(cookieOrigin.status, 403, cookieOrigin.text);
      assert.equal(cookieOrigin.json.error.code, -32000);
      const local = await rpc(server, { ...bearer(key), origin: 'http://localhost:6274' }, getAccount);
      assert.equal(local.status, 200, local.text);
    } finally {
      await server.close();
    }
  });

  test('with BASE_URL: its host is admitted, others refused', async () => {
    const server = await startServer({
      env: { HOST: '0.0.0.0', BASE_URL: 'https://data.example.com' },
      listen: true,
    });
    try {
      const { key } = await walletAccount(server, 10);
      assert.equal((await postWithHost(server, 'data.example.com', bearer(key), getAccount)).status, 200);
      assert.equal((await postWithHost(server, 'other.example.com', bearer(key), getAccount)).status, 403);
      const origin = await postWithHost(
        server,
        'data.example.com',
        { ...bearer(key), origin: 'https://evil.example' },
        getAccount,
      );
      assert.equal(origin.status, 403);
    } finally {
      await server.close();
    }
  });

  test('listening wide without BASE_URL: any Host, but a browser Origin must match it', async () => {
    const server = await startServer({ env: { HOST: '0.0.0.0' }, listen: true });
    try {
      const { key } = await walletAccount(server, 10);
      assert.equal((await postWithHost(server, 'lb.internal', bearer(key), getAccount)).status, 200);
      const cross = await postWithHost(
        server,
        'lb.internal',
        { ...bearer(key), origin: 'https://evil.example' },
        getAccount,
      );
      assert.equal(cross.status, 403);
      const same = await postWithHost(
        server,
        'lb.internal',
        { ...bearer(key), origin: 'https://lb.internal' },
        getAccount,
      );
      assert.equal(same.status, 200);
    } finally {
      await server.close();
    }
  });
});
