/** OpenAPI 3.1 is generated from the route schemas and documents every code and header. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ErrorCode, errorCatalogue } from '../src/errors.ts';
import { MCP_PATH, rpc, toolCall } from './helpers/mcp.ts';
import { operatorAccount } from './helpers/operator.ts';
import { bearer, sandboxKey, startServer, type TestResponse, type TestServer } from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(() => server.close());

interface Response {
  description: string;
  content?: Record<string, { schema: { $ref?: string } }>;
  headers?: Record<string, unknown>;
}
interface Operation {
  operationId?: string;
  responses: Record<string, Response>;
}

// biome-ignore lint/suspicious/noExplicitAny: the document is asserted field by field
async function openapi(): Promise<any> {
  return (await server.request('GET', '/api/v1/openapi.json')).json;
}

// biome-ignore lint/suspicious/noExplicitAny: the document is asserted field by field
function operations(doc: any): [path: string, method: string, operation: Operation][] {
  return Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]): [string, string, Operation] => [path, method, op]),
  );
}

const mediaType = (res: TestResponse) => res.headers.get('content-type')?.split(';')[0]?.trim();

/** The status and media type of a real answer are documented for the operation. */
function assertDocumented(op: Operation, res: TestResponse, where: string): void {
  const response = op.responses[res.status];
  assert.ok(response, `${where}: ${res.status} is not documented (${res.text.slice(0, 120)})`);
  if (res.text.length > 0) {
    const type = mediaType(res) ?? '';
    assert.ok(response.content?.[type], `${where}: ${res.status} ${type} is not documented`);
  }
}

test('the document is OpenAPI 3.1 and lists every REST route', async () => {
  const res = await server.request('GET', '/api/v1/openapi.json');
  assert.equal(res.status, 200);
  assert.equal(res.json.openapi, '3.1.0');
  const paths = Object.keys(res.json.paths);
  for (const path of [
    '/api/v1/pricing',
    '/api/v1/auth/sandbox',
    '/api/v1/auth/public-test',
    '/api/v1/auth/login',
    '/api/v1/catalog',
    '/api/v1/catalog/{domain}/{name}',
    '/api/v1/data/{domain}/{name}',
    '/api/v1/recipes',
    '/api/v1/recipes/{name}',
    '/api/v1/me',
    '/api/v1/me/usage',
    '/api/v1/keys',
    MCP_PATH,
  ]) {
    assert.ok(paths.includes(path), path);
  }
});

test('every $ref resolves to a component and every response is described', async () => {
  const doc = await openapi();
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1] as string);
  assert.ok(refs.length > 0);
  for (const ref of refs) {
    const name = ref.replace('#/components/schemas/', '');
    assert.ok(ref !== name && doc.components.schemas[name], ref);
  }
  for (const name of Object.keys(doc.components.schemas)) {
    assert.ok(refs.includes(`#/components/schemas/${name}`), `${name} is referred to`);
  }
  for (const [path, method, op] of operations(doc)) {
    for (const [status, response] of Object.entries(op.responses)) {
      assert.ok(response.description?.length > 0, `${method} ${path} ${status}`);
    }
  }
});

test('the data read documents its parameters, every error status and the cost headers', async () => {
  const doc = await openapi();
  const op = doc.paths['/api/v1/data/{domain}/{name}'].get;
  const params = op.parameters.map((p: { name: string }) => p.name);
  for (const name of ['domain', 'name', 'from', 'to', 'fields', 'limit', 'cursor', 'sort', 'format'])
    assert.ok(params.includes(name), name);
  const limit = op.parameters.find((p: { name: string }) => p.name === 'limit');
  assert.equal(limit.schema.type, 'integer', 'what a client sends, though the service reads digits only');
  assert.equal(limit.schema.minimum, 1);
  assert.equal(limit.schema.maximum, 1000);
  for (const status of ['200', '400', '401', '402', '404', '429', '503'])
    assert.ok(op.responses[status], status);
  const headers = Object.keys(op.responses['200'].headers);
  for (const h of [
    'X-Token-Cost',
    'X-Request-Tokens',
    'X-Request-Cost-EUR',
    'X-Credits-Remaining',
    'X-Request-Id',
    'X-Next-Cursor',
  ]) {
    assert.ok(headers.includes(h), h);
  }
  assert.ok(op.responses['429'].headers['Retry-After']);
  assert.ok(op.responses['429'].headers['RateLimit-Policy'], 'refusals document the RateLimit headers');
  assert.ok(op.responses['200'].headers.RateLimit);
  assert.ok(op.responses['401'].headers['WWW-Authenticate']);
  assert.match(op.responses['402'].description, /not_entitled/);
  assert.match(op.responses['429'].description, /rate_limited, daily_limit, concurrency_limit, ip_fence/);
  assert.doesNotMatch(op.responses['429'].description, /login_throttled/, 'only the codes the read can get');
});

test('every error response of a REST operation is application/problem+json naming codes of its status', async () => {
  const doc = await openapi();
  let checked = 0;
  for (const [path, method, op] of operations(doc)) {
    if (path === MCP_PATH) continue;
    for (const [status, response] of Object.entries(op.responses)) {
      if (Number(status) < 400) continue;
      const where = `${method} ${path} ${status}`;
      assert.deepEqual(Object.keys(response.content ?? {}), ['application/problem+json'], where);
      assert.equal(
        response.content?.['application/problem+json']?.schema.$ref,
        '#/components/schemas/Problem',
        where,
      );
      const codes = /Codes: ([a-z_, ]+)\.$/.exec(response.description)?.[1]?.split(', ') ?? [];
      assert.ok(codes.length > 0, where);
      for (const code of codes)
        assert.equal(errorCatalogue[code as ErrorCode]?.status, Number(status), where);
      checked++;
    }
  }
  assert.ok(checked > 100, String(checked));
  const problem = doc.components.schemas.Problem;
  assert.deepEqual(problem.required, ['type', 'title', 'status', 'detail', 'code', 'request_id']);
  assert.deepEqual(problem.properties.code.enum, Object.keys(errorCatalogue));
  for (const extra of ['retry_after', 'required_tokens', 'balance', 'reset_at', 'suggestions', 'errors'])
    assert.ok(problem.properties[extra], extra);
});

test('every status a broken query, a refused, a missing or a fenced credential gets is documented for the route', async () => {
  const doc = await openapi();
  // One request a minute per client address: the second from an address is past the IP fence.
  const fenced = await startServer({
    config: (c) => {
      c.limits.ip_fence_per_minute = 1;
    },
  });
  try {
    let n = 0;
    const address = () => ({ 'x-forwarded-for': `203.0.113.${++n}` });
    for (const [path, lower, op] of operations(doc)) {
      const method = lower.toUpperCase();
      const url = path.replace(/\{[^}]+\}/g, 'x');
      const anonymous = address();
      const answers = [
        await fenced.request(method, `${url}?x=%zz`, { headers: address() }),
        await fenced.request(method, url, {
          headers: { ...address(), authorization: 'Bearer tmd_live_not-a-key' },
        }),
        await fenced.request(method, url, { headers: anonymous }),
        await fenced.request(method, url, { headers: anonymous }),
      ];
      const where = `${method} ${path}`;
      for (const res of answers) assertDocumented(op, res, where);
      assert.equal(answers[0]?.status, 400, `${where}: a broken %-escape in the query`);
      if (path !== '/healthz' && path !== '/readyz') assert.equal(answers[3]?.status, 429, where);
    }
  } finally {
    await fenced.close();
  }
});

test('the data read answers JSON or CSV and the export NDJSON or CSV, as documented', async () => {
  const doc = await openapi();
  const read = doc.paths['/api/v1/data/{domain}/{name}'].get;
  const exported = doc.paths['/api/v1/export/{domain}/{name}'].get;
  assert.deepEqual(Object.keys(read.responses['200'].content), ['application/json', 'text/csv']);
  assert.deepEqual(Object.keys(exported.responses['200'].content), ['application/x-ndjson', 'text/csv']);
  assert.ok(exported.responses['200'].headers['X-Export-Rows']);

  const key = await sandboxKey(server);
  for (const [query, headers, type] of [
    ['', {}, 'application/json'],
    ['&format=csv', {}, 'text/csv'],
    ['', { accept: 'text/csv' }, 'text/csv'],
  ] as const) {
    const res = await server.request('GET', `/api/v1/data/equities/stock-prices?limit=1${query}`, {
      headers: { ...bearer(key), ...headers },
    });
    assert.equal(mediaType(res), type, res.text);
    assertDocumented(read, res, `read ${query} ${type}`);
  }
  const pro = await operatorAccount(server, { pkg: 'pro' });
  for (const [query, type] of [
    ['', 'application/x-ndjson'],
    ['?format=csv', 'text/csv'],
  ] as const) {
    const res = await server.request('GET', `/api/v1/export/equities/stock-prices${query}`, {
      headers: bearer(pro.key),
    });
    assert.equal(mediaType(res), type, res.text.slice(0, 200));
    assertDocumented(exported, res, `export ${type}`);
  }
});

test('the MCP endpoint documents its JSON-RPC answers, 202, 401 problem+json and 405 with Allow', async () => {
  const doc = await openapi();
  const item = doc.paths[MCP_PATH];
  const post: Operation = item.post;
  for (const status of ['200', '202', '400', '401', '403', '406', '413', '415', '429', '500', '503'])
    assert.ok(post.responses[status], status);
  assert.ok(post.responses['200']?.headers?.['X-Token-Cost'], 'a metered tool call has the cost headers');
  assert.ok(post.responses['401']?.content?.['application/problem+json']);
  assert.ok(post.responses['401']?.headers?.['WWW-Authenticate']);
  assert.ok(post.responses['429']?.headers?.['Retry-After']);
  assert.equal(post.responses['202']?.content, undefined);
  // The other methods are 405 (described with POST): an operation that never succeeds is not listed.
  assert.deepEqual(Object.keys(item), ['post']);

  const key = await sandboxKey(server);
  const accepts = { ...bearer(key), accept: 'application/json, text/event-stream' };
  const answers: [string, TestResponse][] = [
    ['a tool call', await rpc(server, accepts, toolCall('get_account', {}))],
    ['a notification', await rpc(server, accepts, { jsonrpc: '2.0', method: 'notifications/initialized' })],
    ['malformed JSON', await rpc(server, accepts, '{"jsonrpc": ')],
    ['not JSON', await rpc(server, accepts, JSON.stringify(toolCall('get_account', {})), 'text/plain')],
    ['an Accept without JSON', await rpc(server, { ...accepts, accept: 'text/html' }, toolCall('x', {}))],
    [
      'a foreign Origin',
      await rpc(server, { ...accepts, origin: 'https://evil.example' }, toolCall('x', {})),
    ],
    ['no credential', await rpc(server, {}, toolCall('get_account', {}))],
  ];
  assert.deepEqual(
    answers.map(([, res]) => res.status),
    [200, 202, 400, 415, 406, 403, 401],
  );
  for (const [name, res] of answers) assertDocumented(post, res, name);
  const get = await server.request('GET', MCP_PATH, { headers: bearer(key) });
  assert.equal(get.status, 405);
  assert.equal(get.headers.get('allow'), 'POST');
});

test('every response of every operation documents X-Request-Id', async () => {
  const doc = await openapi();
  for (const [path, method, op] of operations(doc)) {
    for (const [status, response] of Object.entries(op.responses)) {
      assert.ok(response.headers && 'X-Request-Id' in response.headers, `${method} ${path} ${status}`);
    }
  }
});

test('the docs page is served', async () => {
  const res = await server.request('GET', '/docs');
  assert.ok(res.status === 200 || res.status === 302, String(res.status));
});

test('every error code has a status and title', () => {
  for (const [code, entry] of Object.entries(errorCatalogue)) {
    assert.ok(entry.status >= 400 && entry.status < 600, code);
    assert.ok(entry.title.length > 0, code);
  }
});
