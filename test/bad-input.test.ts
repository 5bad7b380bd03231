/** Bad input gets a clear 4xx problem, changes nothing in the ledger, and the server stays up. */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { maskCredentials } from '../src/edge/request-log.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { ADMIN_TOKEN, operatorAccount } from './helpers/operator.ts';
import {
  assertLedgerBalanced,
  bearer,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

let server: TestServer;
let key: string;
let walletId: string;
before(async () => {
  server = await startServer();
  const wallet = await walletAccount(server, 100);
  key = wallet.key;
  walletId = wallet.account.walletId;
});
after(() => server.close());

const read = '/api/v1/data/equities/stock-prices';

const cases: [string, string, string, Record<string, string>?, string?][] = [
  ['limit too large', `${read}?limit=100000`, 'invalid_request'],
  ['limit zero', `${read}?limit=0`, 'invalid_request'],
  ['limit not a number', `${read}?limit=abc`, 'invalid_request'],
  ['limit fractional', `${read}?limit=1.5`, 'invalid_request'],
  ['bad date', `${read}?from=2024-13-45`, 'invalid_request'],
  ['from after to', `${read}?from=2025-02-01&to=2025-01-01`, 'invalid_request'],
  ['unknown sort', `${read}?sort=sideways`, 'invalid_request'],
  ['unknown format', `${read}?format=xml`, 'invalid_request'],
  ['unknown field', `${read}?fields=close,nope`, 'invalid_request'],
  ['unknown filter', `${read}?colour=blue`, 'invalid_request'],
  ['filter that is SQL', `${read}?symbol=${encodeURIComponent("AAPL' OR '1'='1")}`, ''],
  ['filter name that is SQL', `${read}?${encodeURIComponent('symbol") OR 1=1 --')}=x`, 'invalid_request'],
  ['forged cursor', `${read}?cursor=eyJmIjoiMCJ9.AAAAAAAAAAAAAAAAAAAAAA`, 'invalid_cursor'],
  ['garbage cursor', `${read}?cursor=${encodeURIComponent('%%%')}`, 'invalid_cursor'],
  ['unknown dataset', '/api/v1/data/equities/stock-price', 'dataset_not_found'],
  ['unknown domain', '/api/v1/data/nowhere/nothing', 'dataset_not_found'],
  ['a broken %-escape in the path', '/api/v1/data/equities/stock-prices%ZZ', 'invalid_request'],
  ['a path segment over 200 characters', `/api/v1/data/equities/${'a'.repeat(201)}`, 'invalid_request'],
  ['a broken %-escape in a filter value', `${read}?symbol=%zz`, 'invalid_request'],
  ['a lone % in a filter value', `${read}?symbol=AB%`, 'invalid_request'],
  ['a %-escape that is not UTF-8', `${read}?symbol=%E0%A4%A`, 'invalid_request'],
  ['a __proto__ filter', `${read}?__proto__=x`, 'invalid_request'],
  ['an escaped __proto__ filter', `${read}?limit=5&%5F%5Fproto%5F%5F=x`, 'invalid_request'],
  ['a __proto__ with no value after an empty pair', `${read}?limit=5&&__proto__`, 'invalid_request'],
  ['a constructor filter', `${read}?constructor=x`, 'invalid_request'],
  ['junk key', read, 'invalid_key', { authorization: 'Bearer not-a-key' }],
  ['truncated key', read, 'invalid_key', { authorization: 'Bearer tmd_live_abc' }],
  ['unknown well-formed key', read, 'invalid_key', { 'x-api-key': `tmd_live_${'A'.repeat(43)}` }],
  ['Basic auth', read, 'invalid_key', { authorization: 'Basic dXNlcjpwYXNz' }],
  ['forged JWT', read, 'invalid_session', { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.x' }],
];

test('each bad read is a 4xx problem with a stable code, burning nothing', async () => {
  for (const [name, path, code, headers] of cases) {
    const res = await server.request('GET', path, { headers: headers ?? bearer(key) });
    if (code === '') {
      assert.equal(res.status, 200, `${name}: a quote in a filter value is just a value`);
      assert.equal(res.json.data.length, 0, name);
      continue;
    }
    assert.ok(res.status >= 400 && res.status < 500, `${name}: ${res.status} ${res.text}`);
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/, name);
    assert.equal(res.json.code, code, `${name}: ${res.text}`);
    assert.equal(typeof res.json.detail, 'string');
    assert.equal(res.json.request_id, res.headers.get('x-request-id'));
    assert.ok(!/at .*\.ts:\d+/.test(res.text), `${name}: no stack trace`);
  }
  // The SQL-ish filter read was served (as an empty page) and charged like any read; nothing else was.
  const burns = (await server.deps.store.listEntries(walletId)).filter((e) => e.kind === 'burn');
  assert.equal(burns.length, 1);
  await assertLedgerBalanced(server);
});

test('Accept: a read is refused with 406 before it is charged when it admits neither JSON nor CSV', async () => {
  const before = await server.deps.store.auditLedger();
  const withAccept = (accept: string, path = `${read}?limit=1`) =>
    server.request('GET', path, { headers: { ...bearer(key), accept } });
  for (const accept of ['image/png', 'text/csv;q=0, application/xml', 'application/problem+json']) {
    const res = await withAccept(accept);
    assert.equal(res.status, 406, `${accept}: ${res.text}`);
    assert.equal(res.json.code, 'not_acceptable');
    assert.deepEqual(res.json.available, ['application/json', 'text/csv']);
  }
  const recipe = await withAccept('text/csv', '/api/v1/recipes/dow30-sandbox-smoke');
  assert.equal(recipe.status, 406, 'a recipe answers JSON only');
  assert.equal((await server.deps.store.auditLedger()).entries, before.entries, 'nothing charged');

  const ranges = await withAccept('text/*');
  assert.equal(ranges.status, 200);
  assert.match(ranges.headers.get('content-type') ?? '', /^text\/csv/, 'text/* admits CSV, not JSON');
  const browser = await withAccept('text/html,application/xhtml+xml,*/*;q=0.8');
  assert.match(browser.headers.get('content-type') ?? '', /^application\/json/, 'any type: JSON');
  for (const [accept, type] of [
    ['text/csv;q=0, text/*', 406],
    ['application/json;q=0, text/csv;q=0, */*', 406],
    ['*/*, application/json;q=0', 'text/csv'],
    ['text/csv, application/json;q=0.5', 'text/csv'],
    ['application/json, text/plain, */*', 'application/json'],
    ['TEXT/CSV; charset=utf-8', 'text/csv'],
  ] as const) {
    const res = await withAccept(accept);
    if (type === 406) assert.equal(res.status, 406, `${accept}: the most specific range decides`);
    else assert.match(res.headers.get('content-type') ?? '', new RegExp(`^${type}`), accept);
  }
  const chosen = await withAccept('application/json', `${read}?limit=1&format=csv`);
  assert.equal(chosen.status, 200, 'format= chooses over Accept');
  assert.match(chosen.headers.get('content-type') ?? '', /^text\/csv/);
});

test('a cursor from another query is refused', async () => {
  const first = await server.request('GET', `${read}?symbol=AAPL&limit=2`, { headers: bearer(key) });
  assert.equal(first.status, 200);
  const cursor = first.json.meta.next_cursor;
  assert.ok(cursor);
  const other = await server.request(
    'GET',
    `${read}?symbol=MSFT&limit=2&cursor=${encodeURIComponent(cursor)}`,
    { headers: bearer(key) },
  );
  assert.equal(other.status, 400);
  assert.equal(other.json.code, 'invalid_cursor');
});

test('bodies: malformed JSON 400, oversized 413, wrong media type 415, unknown route 404', async () => {
  const before = await server.deps.store.auditLedger();
  const malformed = await server.request('POST', '/api/v1/auth/public-test', {
    raw: '{"email": "a@b.c", "password": ',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(malformed.status, 400);
  assert.equal(malformed.json.code, 'malformed_json');
  const huge = await server.request('POST', '/api/v1/auth/public-test', {
    raw: JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(200_000) }),
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(huge.status, 413);
  assert.equal(huge.json.code, 'payload_too_large');
  const xml = await server.request('POST', '/api/v1/auth/public-test', {
    raw: '<a/>',
    headers: { 'content-type': 'application/xml' },
  });
  assert.equal(xml.status, 415);
  assert.equal(xml.json.code, 'unsupported_media_type');
  const text = await server.request('POST', '/api/v1/auth/public-test', {
    raw: '{"email": "a@example.com", "password": "correct horse battery"}',
    headers: { 'content-type': 'text/plain' },
  });
  assert.equal(text.status, 415, 'JSON sent as text/plain is the wrong media type, not a bad body');
  assert.equal(text.json.code, 'unsupported_media_type');
  const invalid = await server.request('POST', '/api/v1/auth/public-test', {
    body: { email: 'not-an-email', password: 'short' },
  });
  assert.equal(invalid.status, 400);
  assert.equal(invalid.json.code, 'invalid_request');
  assert.ok(invalid.json.errors.length >= 2);
  const missing = await server.request('GET', '/api/v1/nothing-here');
  assert.equal(missing.status, 404);
  assert.equal(missing.json.code, 'not_found');
  const after = await server.deps.store.auditLedger();
  assert.equal(after.entries, before.entries, 'no ledger entry for a refused request');
  assert.equal(after.wallets, before.wallets);
  const health = await server.request('GET', '/healthz');
  assert.equal(health.status, 200, 'server still up');
});

test("an empty text/plain body (a browser's fetch with body '') is no body, not a 415", async () => {
  const empty = await server.request('POST', '/api/v1/auth/sandbox', {
    raw: '',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'x-forwarded-for': '198.51.100.201' },
  });
  assert.equal(empty.status, 201, empty.text);
});

test('HEAD of a metered read is not routed and burns nothing', async () => {
  const before = await server.deps.store.auditLedger();
  const res = await server.request('HEAD', `${read}?limit=1`, { headers: bearer(key) });
  assert.equal(res.status, 405);
  assert.equal(res.headers.get('allow'), 'GET');
  const after = await server.deps.store.auditLedger();
  assert.equal(after.entries, before.entries);
});

test('a method a path does not take is 405 with Allow; a path that does not exist is 404', async () => {
  for (const [method, path, allow] of [
    ['POST', `${read}?limit=1`, 'GET'],
    ['DELETE', '/api/v1/recipes/dow30-sandbox-smoke', 'GET'],
    ['GET', '/api/v1/auth/login', 'POST'],
  ] as const) {
    const res = await server.request(method, path, { headers: bearer(key) });
    assert.equal(res.status, 405, `${method} ${path}: ${res.text}`);
    assert.equal(res.json.code, 'method_not_allowed');
    assert.equal(res.headers.get('allow'), allow, `${method} ${path}`);
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  }
  assert.equal((await server.request('POST', '/api/v1/nothing-here')).status, 404);
});

test('a client request id is echoed when valid and replaced when not', async () => {
  const ok = await server.request('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
  assert.equal(ok.headers.get('x-request-id'), 'abc-123');
  const bad = await server.request('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
  assert.match(bad.headers.get('x-request-id') ?? '', /^req_/);
});

test('a JSON body with a __proto__ or constructor.prototype key is a 400 that says so, escaped or not', async () => {
  const owner = await operatorAccount(server, { tokens: 10 });
  for (const raw of [
    '{"name":"x","__proto__":{"admin":true}}',
    '{"name":"x","\\u005f_proto__":{}}',
    '{"name":"x","nested":[{"constructor":{"prototype":{"a":1}}}]}',
  ]) {
    const res = await server.request('POST', '/api/v1/keys', {
      headers: { ...bearer(owner.session), 'content-type': 'application/json' },
      raw,
    });
    assert.equal(res.status, 400, raw);
    assert.equal(res.json.code, 'invalid_request');
    assert.match(res.json.detail, /__proto__ or constructor\.prototype/);
  }
  const keys = await server.request('GET', '/api/v1/keys', { headers: bearer(owner.session) });
  assert.equal(keys.json.data.length, 1, 'no key was made by the refused bodies');
  const bom = await server.request('POST', '/api/v1/keys', {
    headers: { ...bearer(owner.session), 'content-type': 'application/json' },
    raw: '\ufeff{"name":"after a byte order mark"}',
  });
  assert.equal(bom.status, 201, 'a leading byte order mark is not part of the JSON');
  const fine = await server.request('POST', '/api/v1/keys', {
    headers: { ...bearer(owner.session), 'content-type': 'application/json' },
    raw: '{"name":"constructor \\u00e9"}',
  });
  assert.equal(fine.status, 201, 'a value may say constructor, and escapes are fine');
});

test('a control character escaped in the path (%00, %0A, %7F) is a 400 on every route, never a 500', async () => {
  const owner = await operatorAccount(server, { tokens: 10 });
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const cases: [string, string, Record<string, string>][] = [
    ['DELETE', '/api/v1/keys/key_%00', bearer(owner.session)],
    ['PATCH', '/api/v1/keys/key_%0A', bearer(owner.session)],
    ['GET', '/api/v1/admin/accounts/a%00@example.com', admin],
    ['GET', '/api/v1/admin/accounts/acc_%7F', admin],
    ['GET', '/api/v1/data/equities/stock%00-prices', bearer(key)],
    ['GET', '/api/v1/recipes/dow30%00', bearer(key)],
    ['GET', '/nowhere/%00', {}],
  ];
  for (const [method, path, headers] of cases) {
    const res = await server.request(method, path, { headers, ...(method === 'PATCH' ? { body: {} } : {}) });
    assert.equal(res.status, 400, `${method} ${path}: ${res.text}`);
    assert.equal(res.json.code, 'invalid_request');
  }
  await assertLedgerBalanced(server);
});

test('GET /metrics: Prometheus text with the limiter metrics, at 0 with in-process limits', async () => {
  const res = await server.request('GET', '/metrics');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  assert.match(res.text, /^# TYPE tmd_limiter_degraded gauge\ntmd_limiter_degraded 0$/m);
  assert.match(res.text, /^tmd_limiter_fallback_transitions_total 0$/m);
  assert.match(res.text, /^tmd_limiter_local_decisions_total 0$/m);
});

describe('over a socket', () => {
  // One listening server for what only a socket shows: the request timeout and the HTTP parser's refusals.
  let socketServer: TestServer;
  before(async () => {
    socketServer = await startServer({ env: { REQUEST_TIMEOUT_MS: '1000' }, listen: true });
  });
  after(() => socketServer.close());

  test('a request whose body never ends is cut off after REQUEST_TIMEOUT_MS (it would hold a socket for good)', async () => {
    const port = new URL(socketServer.url).port;
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    const closed = new Promise<number>((resolve) => {
      const started = Date.now();
      socket.on('close', () => resolve(Date.now() - started));
    });
    socket.write(
      'POST /api/v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{',
    );
    const after = await closed;
    assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/, answer);
    assert.match(answer, /\r\nContent-Type: application\/problem\+json; charset=utf-8\r\n/);
    const problem = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    assert.equal(problem.code, 'request_timeout');
    assert.equal(problem.status, 408);
    assert.match(problem.detail, /within 1000 ms/);
    assert.match(answer, new RegExp(`\r\nX-Request-Id: ${problem.request_id}\r\n`));
    assert.ok(after >= 900 && after < 5000, `closed after ${after} ms`);
  });

  test('requests the HTTP parser refuses (headers too large, not HTTP) get problem+json too', async () => {
    const port = Number(new URL(socketServer.url).port);
    const exchange = (text: string) =>
      new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        let answer = '';
        socket.on('data', (chunk) => {
          answer += chunk.toString();
        });
        socket.on('close', () => resolve(answer));
        socket.on('error', () => {});
        socket.write(text);
      });
    const cases = [
      [
        `GET /api/v1/catalog HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`,
        431,
        'headers_too_large',
      ],
      ['NOT HTTP AT ALL\r\n\r\n', 400, 'invalid_request'],
    ] as const;
    for (const [text, status, code] of cases) {
      const answer = await exchange(text);
      assert.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `), answer.slice(0, 200));
      assert.match(answer, /\r\nContent-Type: application\/problem\+json; charset=utf-8\r\n/);
      assert.equal(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).code, code);
    }
    assert.equal((await socketServer.request('GET', '/healthz')).status, 200, 'the server is up');
  });
});

test('the SQLite statement cache is bounded: filters with ever new numbers of values do not grow it', async () => {
  const store = new SqliteStore(':memory:');
  try {
    await store.migrate();
    for (let n = 1; n <= 400; n++) {
      const values = Array.from({ length: n % 100 }, (_, i) => `V${i}`);
      const other = Array.from({ length: Math.floor(n / 100) + 1 }, (_, i) => `W${i}`);
      await store.queryRows({ dataset: 'x/y', filters: { a: values, b: other }, descending: true, limit: 1 });
    }
    assert.ok(store.cachedStatements <= 256, `${store.cachedStatements} statements cached`);
  } finally {
    await store.close();
  }
});

test('request logs mask anything shaped like a key or a session JWT in the URL', () => {
  const key = `tmd_live_${'A'.repeat(43)}`;
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
  const masked = maskCredentials(`/api/v1/data/x/y?api_key=${key}&t=${jwt}&symbol=AAPL`);
  assert.equal(masked, '/api/v1/data/x/y?api_key=tmd_live_[redacted]&t=[redacted-jwt]&symbol=AAPL');
  // %-escaped, as the query parser still reads them: the decoded form is logged, masked.
  const escapedKey = `tmd_live%5F${'A'.repeat(43)}`;
  assert.equal(
    maskCredentials(`/api/v1/pricing?key=${escapedKey}&q=caf%C3%A9`),
    '/api/v1/pricing?key=tmd_live_[redacted]&q=caf%C3%A9',
  );
  assert.equal(maskCredentials(`/x?k=%74md_sbx_${'b'.repeat(20)}`), '/x?k=tmd_sbx_[redacted]');
  assert.equal(maskCredentials(`/x?t=${jwt.replaceAll('.', '%2E')}`), '/x?t=[redacted-jwt]');
  // Escapes that hide nothing are logged as sent.
  assert.equal(maskCredentials('/x?q=a%2Cb%20c'), '/x?q=a%2Cb%20c');
});

test('a key name or a memo with a control character is a 400, not a stored NUL', async () => {
  const wallet = await walletAccount(server, 0);
  const res = await server.request('POST', '/api/v1/keys', {
    headers: bearer(wallet.session),
    body: { name: 'a\u0000b' },
  });
  assert.equal(res.status, 400, res.text);
  assert.equal(res.json.code, 'invalid_request');
  assert.match(JSON.stringify(res.json.errors), /control characters/);
});
