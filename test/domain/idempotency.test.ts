import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { IDEMPOTENCY_TTL_MS, Idempotency, idempotencyScope } from '../../src/domain/idempotency.ts';
import type { StoredResponse } from '../../src/store/port.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { appError, caller, keyRecord, memoryStore, T0 } from './support.ts';

let store: SqliteStore;
let now = T0;
let idempotency: Idempotency;
const answer = (body: string): StoredResponse => ({
  status: 200,
  contentType: 'application/json',
  headers: { 'x-token-cost': '2' },
  body,
});

before(async () => {
  store = await memoryStore();
  idempotency = new Idempotency({ store, now: () => now });
});
after(() => store.close());

test('a key belongs to the API key, else the session, else the wallet', () => {
  assert.equal(idempotencyScope(caller('live')), 'key:key_1');
  assert.equal(idempotencyScope(caller('session', { sessionId: 'ses_1' })), 'session:ses_1');
  assert.equal(idempotencyScope(caller('session')), 'wallet:wal_1');
});

test('the same key and request within 24 hours replays the first answer without running again', async () => {
  now = T0;
  let runs = 0;
  const work = async () => answer(`run ${++runs}`);
  const first = await idempotency.run(caller('live'), 'k-1', 'GET /a', work);
  assert.deepEqual(first, { response: answer('run 1'), replayed: false });
  now = T0 + IDEMPOTENCY_TTL_MS - 1;
  assert.deepEqual(await idempotency.run(caller('live'), 'k-1', 'GET /a', work), {
    response: answer('run 1'),
    replayed: true,
  });
  assert.equal(runs, 1);
  now = T0 + IDEMPOTENCY_TTL_MS + 1;
  assert.deepEqual(await idempotency.run(caller('live'), 'k-1', 'GET /a', work), {
    response: answer('run 2'),
    replayed: false,
  });
});

test('the same key on another request is 422 idempotency_key_reused; another credential has its own keys', async () => {
  now = T0;
  await idempotency.run(caller('live'), 'k-2', 'GET /a', async () => answer('a'));
  await assert.rejects(
    idempotency.run(caller('live'), 'k-2', 'GET /b', async () => answer('b')),
    appError('idempotency_key_reused', 422),
  );
  const sandbox = caller('sandbox', { key: keyRecord({ id: 'key_other', kind: 'sandbox' }) });
  const other = await idempotency.run(sandbox, 'k-2', 'GET /b', async () => answer('b'));
  assert.equal(other.replayed, false);
});

test('a failure keeps nothing: the next try runs afresh', async () => {
  now = T0;
  await assert.rejects(
    idempotency.run(caller('live'), 'k-3', 'GET /a', async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  const retry = await idempotency.run(caller('live'), 'k-3', 'GET /a', async () => answer('ok'));
  assert.deepEqual(retry, { response: answer('ok'), replayed: false });
});

test('a retry while the first still runs waits for its answer', async () => {
  now = T0;
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const first = idempotency.run(caller('live'), 'k-4', 'GET /a', async () => {
    await gate;
    return answer('slow');
  });
  const second = idempotency.run(caller('live'), 'k-4', 'GET /a', async () => answer('never'));
  setTimeout(release, 60);
  assert.deepEqual(await second, { response: answer('slow'), replayed: true });
  assert.equal((await first).replayed, false);
});

test('a key must be 1 to 255 visible ASCII characters: 400 invalid_request', async () => {
  for (const bad of ['', 'has space', 'x'.repeat(256), 'é']) {
    await assert.rejects(
      idempotency.run(caller('live'), bad, 'GET /a', async () => answer('a')),
      appError('invalid_request', 400),
    );
  }
});
