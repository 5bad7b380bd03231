/**
 * Malformed and hostile HTTP over a raw socket: every one gets a problem+json answer (or a clean close)
 * and one log line without a stack; valid requests pipelined beside them are still answered.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { ADMIN_TOKEN, operatorAccount } from './helpers/operator.ts';
import { startServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let app: FastifyInstance;
let port: number;
let output = '';

before(async () => {
  server = await startServer();
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  app = await buildApp(server.deps, { logger: { level: 'info', stream } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
});
after(async () => {
  const closing = app.close();
  app.server.closeAllConnections();
  await closing;
  await server.close();
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `bytes` on a new connection and reads until the server closes it (or 3 s of silence). */
function exchange(bytes: string): Promise<{ responses: RawResponse[]; closed: boolean; raw: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    let closed = false;
    const idle = () => {
      socket.destroy();
    };
    let timer = setTimeout(idle, 3000);
    socket.on('data', (chunk) => {
      raw += chunk.toString('latin1');
      clearTimeout(timer);
      timer = setTimeout(idle, 3000);
    });
    socket.on('end', () => {
      closed = true;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ responses: parseResponses(raw), closed, raw });
    });
    socket.write(bytes);
  });
}

function parseResponses(raw: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = raw;
  while (rest.startsWith('HTTP/')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) break;
    const [statusLine, ...lines] = rest.slice(0, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    let body: string;
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      body = rest.slice(headEnd + 4, headEnd + 4 + length);
      rest = rest.slice(headEnd + 4 + length);
    } else {
      body = rest.slice(headEnd + 4);
      rest = '';
    }
    responses.push({ status: Number((statusLine as string).split(' ')[1]), headers, body });
  }
  return responses;
}

function assertProblem(response: RawResponse | undefined, status: number, code: string): void {
  assert.ok(response, 'a response');
  assert.equal(response.status, status, response.body);
  assert.match(response.headers['content-type'] ?? '', /^application\/problem\+json/);
  assert.match(response.headers['x-request-id'] ?? '', /^req_/);
  const problem = JSON.parse(response.body);
  assert.equal(problem.code, code);
  assert.equal(problem.status, status);
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

/** No log line since `mark` carries a stack or an unhandled error. */
function assertNoStack(mark: number): void {
  const lines = output.slice(mark).split('\n').filter(Boolean);
  for (const line of lines) {
    assert.ok(!line.includes('"stack"'), `a log line without a stack: ${line}`);
    assert.ok(!/Cannot read properties|TypeError/.test(line), `no internal error logged: ${line}`);
  }
}

describe('malformed requests', () => {
  test('a valid request pipelined before a malformed one is answered, then the malformed one gets 400', async () => {
    const mark = output.length;
    const { responses, closed } = await exchange(
      'GET /api/v1/catalog?free=true HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: pipelined-first\r\n\r\nGET /x HTTP/9.9\r\n\r\n',
    );
    assert.equal(responses.length, 2, JSON.stringify(responses.map((r) => r.status)));
    assert.equal(responses[0]?.status, 200, responses[0]?.body);
    assert.equal(responses[0]?.headers['x-request-id'], 'pipelined-first');
    assertProblem(responses[1], 400, 'invalid_request');
    assert.ok(closed, 'the connection is closed after the malformed request');
    await settle();
    assertNoStack(mark);
    assert.match(output.slice(mark), /pipelined-first/, 'the first request has its log line');
  });

  test('a malformed request alone gets 400 problem+json and a closed connection', async () => {
    const { responses, closed } = await exchange('GET /x HTTP/9.9\r\n\r\n');
    assertProblem(responses[0], 400, 'invalid_request');
    assert.ok(closed);
  });

  test('an HTTP/1.1 request without Host is 400 problem+json with a request id', async () => {
    const mark = output.length;
    const { responses } = await exchange('GET /healthz HTTP/1.1\r\n\r\n');
    assertProblem(responses[0], 400, 'invalid_request');
    assert.match(JSON.parse(responses[0]?.body ?? '{}').detail, /Host/);
    await settle();
    assertNoStack(mark);
  });

  test('a request with two Host header lines is 400', async () => {
    const { responses } = await exchange(
      'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n',
    );
    assertProblem(responses[0], 400, 'invalid_request');
  });

  test('a request line without an HTTP version is 400, not served', async () => {
    const { responses, raw } = await exchange('GET /healthz\r\n\r\n');
    assert.ok(!raw.includes('"status":"ok"'), raw);
    assertProblem(responses[0], 400, 'invalid_request');
  });

  test('HTTP/1.0 without Host is still served', async () => {
    const { responses } = await exchange('GET /healthz HTTP/1.0\r\n\r\n');
    assert.equal(responses[0]?.status, 200);
  });
});

describe('credentials', () => {
  test('the admin token sent in a query string is masked in the log', async () => {
    const mark = output.length;
    const { responses } = await exchange(
      `GET /api/v1/admin/accounts/nobody@example.com?token=${ADMIN_TOKEN} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: admin-in-url\r\nConnection: close\r\n\r\n`,
    );
    assert.ok(responses[0]);
    await settle();
    const logged = output.slice(mark);
    assert.match(logged, /admin-in-url/);
    assert.ok(!logged.includes(ADMIN_TOKEN), logged);
    assert.ok(!logged.includes(ADMIN_TOKEN.slice(6)), 'no long part of it either');
    assert.match(logged, /token=\[redacted\]/);
  });

  test('an Origin with a userinfo part is not this service: the session cookie is refused on POST', async () => {
    const account = await operatorAccount(server);
    const host = `127.0.0.1:${port}`;
    const body = '{"name":"forged"}';
    const post = (origin: string) =>
      exchange(
        `POST /api/v1/keys HTTP/1.1\r\nHost: ${host}\r\nOrigin: ${origin}\r\nCookie: tmd_session=${account.session}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
    for (const origin of [
      `http://evil.example@${host}`,
      `http://${host}/path`,
      `http://${host}.evil.example`,
    ]) {
      const { responses } = await post(origin);
      assertProblem(responses[0], 403, 'forbidden');
    }
    const { responses } = await post(`http://${host}`);
    assert.equal(responses[0]?.status, 201, 'its own origin still works');
  });

  test('a session JWT is not taken in X-API-Key, which carries keys only', async () => {
    const account = await operatorAccount(server);
    const me = (header: string) =>
      exchange(`GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\n${header}\r\nConnection: close\r\n\r\n`);
    const { responses } = await me(`X-API-Key: ${account.session}`);
    assertProblem(responses[0], 401, 'invalid_key');
    assert.equal((await me(`Authorization: Bearer ${account.session}`)).responses[0]?.status, 200);
    assert.equal((await me(`X-API-Key: ${account.key}`)).responses[0]?.status, 200);
  });
});
