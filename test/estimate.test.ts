/** GET /api/v1/estimate: the price before a read equals the charge of that read, and burns nothing. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  assertLedgerBalanced,
  bearer,
  publicTestKey,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await assertLedgerBalanced(server);
  await server.close();
});

const estimate = (credential: string, query: string) =>
  server.request('GET', `/api/v1/estimate?${query}`, { headers: bearer(credential) });

test('a wallet key: the estimate is the charge of the read that follows, and burns nothing', async () => {
  const { key } = await walletAccount(server, 100);
  const first = await estimate(key, 'dataset=cftc/cit_all-facts');
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(first.json, {
    list_cost: '5',
    token_cost: '5',
    tokens_burned: '5',
    cost_eur: '0.5',
    entitled: true,
    target: 'cftc/cit_all-facts',
    balance: '100',
    balance_after: '95',
    would_refuse: null,
    refusal_detail: null,
  });
  const again = await estimate(key, 'dataset=cftc/cit_all-facts');
  assert.equal(again.json.balance, '100', 'an estimate burns nothing');
  const read = await server.request('GET', '/api/v1/data/cftc/cit_all-facts?limit=1', {
    headers: bearer(key),
  });
  assert.equal(read.status, 200, read.text);
  assert.equal(read.headers.get('x-request-tokens'), first.json.tokens_burned);
  assert.equal(read.headers.get('x-credits-remaining'), first.json.balance_after);
});

test('a Terminal session pays the surcharge: 5 tokens list is 6.75, as the read then charges', async () => {
  const account = await walletAccount(server, 100);
  const login = await server.request('POST', '/api/v1/auth/login', {
    body: { email: account.email, password: account.password, client: 'terminal' },
  });
  assert.equal(login.status, 200, login.text);
  const session = login.json.token as string;
  const quoted = await estimate(session, 'dataset=cftc/cit_all-facts');
  assert.equal(quoted.status, 200, quoted.text);
  assert.equal(quoted.json.token_cost, '6.75');
  assert.equal(quoted.json.tokens_burned, '6.75');
  assert.equal(quoted.json.balance_after, '93.25');
  const read = await server.request('GET', '/api/v1/data/cftc/cit_all-facts?limit=1', {
    headers: bearer(session),
  });
  assert.equal(read.status, 200, read.text);
  assert.equal(read.headers.get('x-request-tokens'), '6.75');
  assert.equal(read.headers.get('x-credits-remaining'), '93.25');
});

test('refusals are forecast with what the read would say: not entitled, insufficient tokens', async () => {
  const { key: free } = await publicTestKey(server);
  const paid = await estimate(free, 'dataset=maritime/vessel-positions');
  assert.equal(paid.status, 200, paid.text);
  assert.equal(paid.json.entitled, false);
  assert.equal(paid.json.would_refuse, 'not_entitled');
  const refused = await server.request('GET', '/api/v1/data/maritime/vessel-positions', {
    headers: bearer(free),
  });
  assert.equal(refused.status, 402);
  assert.equal(refused.json.code, 'not_entitled');
  assert.equal(paid.json.refusal_detail, refused.json.detail);

  const { key: poor } = await walletAccount(server, 1);
  const short = await estimate(poor, 'recipe=dow30-sandbox-smoke');
  assert.equal(short.json.target, 'recipe:dow30-sandbox-smoke');
  assert.equal(short.json.would_refuse, 'insufficient_tokens');
  assert.equal(short.json.balance_after, '1');
});

test('bad input is a 400 or 404 problem, and no credential is a 401', async () => {
  const { key } = await walletAccount(server, 10);
  const neither = await estimate(key, '');
  assert.equal(neither.status, 400);
  assert.equal(neither.json.code, 'invalid_request');
  const both = await estimate(key, 'dataset=cftc/cit_all-facts&recipe=dow30-sandbox-smoke');
  assert.equal(both.status, 400);
  const missing = await estimate(key, 'dataset=nope/nothing');
  assert.equal(missing.status, 404);
  assert.equal(missing.json.code, 'dataset_not_found');
  const anonymous = await server.request('GET', '/api/v1/estimate?dataset=cftc/cit_all-facts');
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.json.code, 'missing_credentials');
});
