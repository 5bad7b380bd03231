/** Operator-made accounts through the admin API, as an operator would make them. */
import assert from 'node:assert/strict';
import { bearer, type TestResponse, type TestServer } from './server.ts';

/** The ADMIN_TOKEN the harness starts every server with. */
export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

let ipCounter = 0;
/** A client address of its own for a keyless call (the harness trusts X-Forwarded-For from loopback). */
export function freshIp(): string {
  ipCounter++;
  return `10.1.${Math.floor(ipCounter / 250) % 250}.${ipCounter % 250}`;
}

/**
 * An admin call from its own client address: admin calls carry no key, so they sit behind the per-IP
 * fence like anonymous ones, and a test making many must not trip it.
 */
export function adminRequest(
  server: TestServer,
  method: string,
  path: string,
  init: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  return server.request(method, path, {
    ...init,
    headers: {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      'x-forwarded-for': freshIp(),
      ...init.headers,
    },
  });
}

let counter = 0;

export interface OperatorAccount {
  id: string;
  email: string;
  password: string;
  walletId: string;
  session: string;
  key: string;
  keyId: string;
}

/**
 * A login account made through the admin API: credited `tokens` (a topup), given `pkg` if asked (which
 * credits its monthly_credits), then logged in, with a live key made by the operator.
 */
export async function operatorAccount(
  server: TestServer,
  options: { tokens?: number; pkg?: string; email?: string; password?: string } = {},
): Promise<OperatorAccount> {
  const email = options.email ?? `operator-made-${++counter}-${Date.now()}@example.com`;
  const password = options.password ?? 'correct horse battery';
  const created = await adminRequest(server, 'POST', '/api/v1/admin/accounts', { body: { email, password } });
  assert.equal(created.status, 201, created.text);
  const id = created.json.id as string;
  if (options.tokens) {
    const credit = await adminRequest(server, 'POST', `/api/v1/admin/accounts/${id}/credits`, {
      headers: { 'idempotency-key': `setup-${id}` },
      body: { tokens: options.tokens },
    });
    assert.equal(credit.status, 201, credit.text);
  }
  if (options.pkg) {
    const assigned = await adminRequest(server, 'PUT', `/api/v1/admin/accounts/${id}/package`, {
      body: { package: options.pkg },
    });
    assert.equal(assigned.status, 200, assigned.text);
  }
  const login = await server.request('POST', '/api/v1/auth/login', {
    body: { email, password },
    headers: { 'x-forwarded-for': freshIp() },
  });
  assert.equal(login.status, 200, login.text);
  const key = await adminRequest(server, 'POST', `/api/v1/admin/accounts/${id}/keys`, {
    body: { name: 'ops' },
  });
  assert.equal(key.status, 201, key.text);
  return {
    id,
    email,
    password,
    walletId: created.json.wallet.id,
    session: login.json.token,
    key: key.json.key,
    keyId: key.json.id,
  };
}

/** A new session for the account (a fresh IP, so login throttling never gets in the way). */
export async function login(server: TestServer, account: OperatorAccount): Promise<string> {
  const res = await server.request('POST', '/api/v1/auth/login', {
    headers: { 'x-forwarded-for': freshIp() },
    body: { email: account.email, password: account.password },
  });
  assert.equal(res.status, 200, res.text);
  return res.json.token;
}

export async function balanceOf(server: TestServer, credential: string): Promise<string> {
  const me = await server.request('GET', '/api/v1/me', { headers: bearer(credential) });
  assert.equal(me.status, 200, me.text);
  return me.json.wallet.balance as string;
}
