/**
 * What clients of a data API expect of its HTTP: compression when asked for, ETag revalidation and HEAD
 * on the free metadata, no caching of anything tied to a credential, and CORS for keyed browser calls.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { H15, h15Rows } from './helpers/h15.ts';
import { operatorAccount } from './helpers/operator.ts';
import { bearer, startServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
const TRUSTED = 'https://dashboard.example.com';

before(async () => {
  server = await startServer({ env: { CORS_ORIGINS: TRUSTED } });
  await server.deps.store.loadRows(H15, 'date', h15Rows(3000), 'import');
});
after(() => server.close());

const get = (url: string, headers: Record<string, string> = {}, method: InjectOptions['method'] = 'GET') =>
  server.app.inject({ method, url, headers: { host: '127.0.0.1', ...headers } });

function decoded(res: LightMyRequestResponse): string {
  const encoding = res.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(res.rawPayload).toString();
  if (encoding === 'gzip') return gunzipSync(res.rawPayload).toString();
  assert.equal(encoding, undefined);
  return res.body;
}

/** Sizes seen by the compression tests, printed once for the record. */
const sizes: Record<string, { identity: number; gzip: number; br: number }> = {};
after(() => console.log(`compressed sizes (bytes): ${JSON.stringify(sizes)}`));

async function measure(name: string, url: string, headers: Record<string, string> = {}) {
  const identity = await get(url, headers);
  const gzip = await get(url, { ...headers, 'accept-encoding': 'gzip' });
  const br = await get(url, { ...headers, 'accept-encoding': 'br, gzip' });
  sizes[name] = {
    identity: identity.rawPayload.length,
    gzip: gzip.rawPayload.length,
    br: br.rawPayload.length,
  };
  return { identity, gzip, br };
}

describe('compression', () => {
  test('gzip or br when asked for, the same bytes once decoded; none when not asked', async () => {
    const { identity, gzip, br } = await measure('openapi.json', '/api/v1/openapi.json');
    assert.equal(identity.headers['content-encoding'], undefined);
    assert.equal(gzip.headers['content-encoding'], 'gzip');
    assert.equal(br.headers['content-encoding'], 'br');
    assert.match(String(gzip.headers.vary), /accept-encoding/i);
    assert.equal(decoded(gzip), identity.body);
    assert.equal(decoded(br), identity.body);
    assert.ok(br.rawPayload.length < identity.rawPayload.length / 5, 'the OpenAPI document compresses well');
    await measure('catalog', '/api/v1/catalog');
  });

  test('a small answer is sent as it is', async () => {
    const res = await get('/healthz', { 'accept-encoding': 'gzip' });
    assert.equal(res.headers['content-encoding'], undefined);
    assert.equal(res.body, '{"status":"ok"}');
  });

  test('a metered read is compressed, with its cost headers and no-store unchanged', async () => {
    const account = await operatorAccount(server, { tokens: 1000 });
    const url = `/api/v1/data/${H15}?limit=1000`;
    const plain = await get(url, bearer(account.key));
    const zipped = await get(url, { ...bearer(account.key), 'accept-encoding': 'gzip' });
    assert.equal(zipped.statusCode, 200, zipped.body);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    for (const name of ['x-token-cost', 'x-request-tokens', 'x-request-cost-eur']) {
      assert.equal(zipped.headers[name], plain.headers[name], name);
    }
    assert.ok(zipped.headers['x-credits-remaining'], 'the wallet after the read');
    assert.equal(zipped.headers['cache-control'], 'private, no-store');
    assert.equal(JSON.parse(decoded(zipped)).data.length, 1000);
    sizes['read of 1000 rows (JSON)'] = {
      identity: plain.rawPayload.length,
      gzip: zipped.rawPayload.length,
      br: (await get(url, { ...bearer(account.key), 'accept-encoding': 'br' })).rawPayload.length,
    };
  });

  test('a refusal is still problem+json, compressed only when large', async () => {
    const res = await get(`/api/v1/data/${H15}?limit=10`, { 'accept-encoding': 'gzip' });
    assert.equal(res.statusCode, 401);
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
    assert.equal(JSON.parse(decoded(res)).code, 'missing_credentials');
    assert.equal(res.headers['cache-control'], 'private, no-store');
  });

  test('an export is streamed compressed: no Content-Length, every row there once decoded', async () => {
    const pro = await operatorAccount(server, { pkg: 'pro' });
    const res = await get(`/api/v1/export/${H15}`, { ...bearer(pro.key), 'accept-encoding': 'gzip' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-encoding'], 'gzip');
    assert.equal(res.headers['content-length'], undefined);
    assert.equal(res.headers['x-export-rows'], '3000');
    assert.ok(res.headers['x-token-cost']);
    const lines = decoded(res).trimEnd().split('\n');
    assert.equal(lines.length, 3000);
    assert.equal(JSON.parse(lines[0] as string).date, '2015-01-01');
  });
});

describe('caching', () => {
  test('free metadata: an ETag and public, no-cache; If-None-Match answers 304 with no body', async () => {
    for (const url of ['/api/v1/catalog', '/api/v1/pricing', '/api/v1/recipes', '/api/v1/openapi.json']) {
      const first = await get(url);
      assert.equal(first.statusCode, 200, url);
      const etag = first.headers.etag as string;
      assert.match(etag, /^W\/"[A-Za-z0-9_-]+"$/, url);
      assert.equal(first.headers['cache-control'], 'public, no-cache', url);
      const again = await get(url, { 'if-none-match': etag });
      assert.equal(again.statusCode, 304, url);
      assert.equal(again.body, '');
      assert.equal(again.headers.etag, etag);
      // A list, and the strong form of the same tag, match too (weak comparison).
      assert.equal((await get(url, { 'if-none-match': `"x", ${etag.slice(2)}` })).statusCode, 304);
      assert.equal((await get(url, { 'if-none-match': '"other"' })).statusCode, 200);
    }
  });

  test('a dataset whose rows change gets a new ETag: 200 again', async () => {
    const url = `/api/v1/catalog/${H15}`;
    const first = await get(url);
    const etag = first.headers.etag as string;
    assert.equal((await get(url, { 'if-none-match': etag })).statusCode, 304);
    await server.deps.store.loadRows(H15, 'date', h15Rows(10), 'import');
    const changed = await get(url, { 'if-none-match': etag });
    assert.equal(changed.statusCode, 200);
    assert.notEqual(changed.headers.etag, etag);
    assert.equal(JSON.parse(changed.body).data_status.rows, 10);
    await server.deps.store.loadRows(H15, 'date', h15Rows(3000), 'import');
  });

  test('HEAD answers on the free metadata, with the headers and no body; not on metered reads', async () => {
    const head = await get('/api/v1/catalog', {}, 'HEAD');
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.match(String(head.headers.etag), /^W\//);
    assert.equal((await get('/healthz', {}, 'HEAD')).statusCode, 200);
    const metered = await get(`/api/v1/data/${H15}`, {}, 'HEAD');
    assert.equal(metered.statusCode, 405);
  });

  test('account answers are private, no-store', async () => {
    const account = await operatorAccount(server);
    for (const url of ['/api/v1/me', '/api/v1/keys', '/api/v1/me/usage']) {
      const res = await get(url, bearer(account.session));
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['cache-control'], 'private, no-store', url);
      assert.equal(res.headers.etag, undefined, url);
    }
  });
});

describe('CORS', () => {
  const page = 'https://notebook.example.org';

  test('a preflight from any origin is allowed for the key headers, without credentials', async () => {
    const res = await get(
      `/api/v1/data/${H15}`,
      {
        origin: page,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization, x-api-key',
      },
      'OPTIONS',
    );
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.match(String(res.headers['access-control-allow-headers']), /authorization/);
    assert.match(String(res.headers['access-control-allow-headers']), /x-api-key/);
    assert.match(String(res.headers['access-control-allow-methods']), /GET/);
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
  });

  test('a keyed read from a page elsewhere: any origin, the cost headers exposed', async () => {
    const account = await operatorAccount(server, { tokens: 100 });
    const res = await get(`/api/v1/data/${H15}?limit=2`, { ...bearer(account.key), origin: page });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    const exposed = String(res.headers['access-control-expose-headers']);
    for (const name of [
      'x-token-cost',
      'x-request-tokens',
      'x-credits-remaining',
      'x-request-id',
      'ratelimit',
    ]) {
      assert.match(exposed, new RegExp(name), name);
    }
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
  });

  test('a call with no Origin (no browser) gets no CORS headers, only Vary: Origin', async () => {
    const account = await operatorAccount(server, { tokens: 100 });
    const read = await get(`/api/v1/data/${H15}?limit=2`, bearer(account.key));
    assert.equal(read.statusCode, 200);
    const catalog = await get('/api/v1/catalog', {});
    assert.equal(catalog.statusCode, 200);
    for (const res of [read, catalog]) {
      const cors = Object.keys(res.headers).filter((name) => name.startsWith('access-control-'));
      assert.deepEqual(cors, []);
      assert.match(String(res.headers.vary), /origin/i);
    }
    // The same free route from a page elsewhere: a shared cache keeps the answers apart by Vary.
    const fromPage = await get('/api/v1/catalog', { origin: page });
    assert.equal(fromPage.headers['access-control-allow-origin'], '*');
  });

  test('a refusal carries CORS headers too, so the page can read its problem', async () => {
    const res = await get(`/api/v1/data/${H15}?limit=2`, {
      authorization: 'Bearer tmd_live_nope',
      origin: page,
    });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['access-control-allow-origin'], '*');
  });

  test('credentialed CORS only for CORS_ORIGINS; the cookie rules still apply', async () => {
    const account = await operatorAccount(server);
    const cookie = `tmd_session=${account.session}`;
    const trusted = await get('/api/v1/me', { cookie, origin: TRUSTED });
    assert.equal(trusted.statusCode, 200);
    assert.equal(trusted.headers['access-control-allow-origin'], TRUSTED);
    assert.equal(trusted.headers['access-control-allow-credentials'], 'true');
    assert.match(String(trusted.headers.vary), /origin/i);
    const other = await get('/api/v1/me', { cookie, origin: page });
    assert.equal(
      other.headers['access-control-allow-origin'],
      '*',
      'no browser shows this to a cookie request',
    );
    assert.equal(other.headers['access-control-allow-credentials'], undefined);
    // An unsafe method with the cookie from the listed origin is still refused: not this service's page.
    const post = await server.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { host: '127.0.0.1', cookie, origin: TRUSTED, 'content-type': 'application/json' },
      payload: '{"name":"x"}',
    });
    assert.equal(post.statusCode, 403);
  });
});
