/** OpenAPI 3.1 is generated from the route schemas and documents every code and header. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { errorCatalogue } from '../src/errors.ts';
import { startServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(() => server.close());

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
  ]) {
    assert.ok(paths.includes(path), path);
  }
});

test('the data read documents its parameters, every error status and the cost headers', async () => {
  const doc = (await server.request('GET', '/api/v1/openapi.json')).json;
  const op = doc.paths['/api/v1/data/{domain}/{name}'].get;
  const params = op.parameters.map((p: { name: string }) => p.name);
  for (const name of ['domain', 'name', 'from', 'to', 'fields', 'limit', 'cursor', 'sort', 'format'])
    assert.ok(params.includes(name), name);
  for (const status of ['200', '400', '401', '402', '404', '429', '503'])
    assert.ok(op.responses[status], status);
  const headers = Object.keys(op.responses['200'].headers);
  for (const h of [
    'X-Token-Cost',
    'X-Request-Tokens',
    'X-Request-Cost-EUR',
    'X-Credits-Remaining',
    'X-Request-Id',
  ]) {
    assert.ok(headers.includes(h), h);
  }
  assert.ok(op.responses['429'].headers['Retry-After']);
  assert.ok(op.responses['429'].headers['RateLimit-Policy'], 'refusals document the RateLimit headers');
  assert.ok(op.responses['200'].headers.RateLimit);
  assert.ok(op.responses['401'].headers['WWW-Authenticate']);
  assert.match(op.responses['402'].description, /not_entitled/);
});

test('every response of every operation documents X-Request-Id', async () => {
  const doc = (await server.request('GET', '/api/v1/openapi.json')).json;
  for (const [path, ops] of Object.entries(
    doc.paths as Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>,
  )) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [status, response] of Object.entries(op.responses)) {
        assert.ok(response.headers && 'X-Request-Id' in response.headers, `${method} ${path} ${status}`);
      }
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
