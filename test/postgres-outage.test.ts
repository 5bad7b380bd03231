/**
 * PostgreSQL stopped mid-run: reads fail closed with 503 service_unavailable and nothing is served
 * unmetered; when it is back, reads succeed again without a restart. The database is taken away by a
 * proxy the test controls (connections reset, new ones refused: what a stopped server looks like to a
 * client), and separately by the server ending the node's sessions (what `pg_ctl stop` sends).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { freshDatabase, freshRedis, sqlOn, type TestDatabase, type TestRedis } from './helpers/backends.ts';
import { type Cluster, get, startCluster } from './helpers/cluster.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';

const db = await freshDatabase();
const redis = await freshRedis();
const skip = 'skip' in db ? db.skip : 'skip' in redis ? redis.skip : false;

describe('PostgreSQL unreachable: fail closed, recover without a restart', { skip }, () => {
  let cluster: Cluster;
  let key: string;
  let walletId: string;
  before(async () => {
    cluster = await startCluster({
      db: db as TestDatabase,
      redis: redis as TestRedis,
      nodes: 1,
      config: (c) => {
        for (const tier of c.pricing.loyalty_tiers) tier.rate_limit = 100_000;
      },
    });
    await cluster.deps.reads.ensureRows(cluster.deps.reads.resolve('equities/stock-prices'));
    ({ key, walletId } = await cluster.walletKey(1000));
  });
  after(async () => {
    await cluster?.close();
    if (!('skip' in db)) await db.drop();
    if (!('skip' in redis)) await redis.cleanup();
  });

  const read = () => get(`${cluster.nodes[0]?.url}/api/v1/data/equities/stock-prices?limit=1`, key);
  const ready = () => fetch(`${cluster.nodes[0]?.url}/readyz`);

  async function burns(): Promise<number> {
    return (await cluster.deps.store.listEntries(walletId)).filter((e) => e.kind === 'burn').length;
  }

  test('stopped mid-run: reads get 503 and nothing is served; restarted: reads succeed again', async () => {
    const before = await Promise.all(Array.from({ length: 5 }, read));
    assert.deepEqual(
      before.map((r) => r.status),
      [200, 200, 200, 200, 200],
    );
    assert.equal(await burns(), 5);
    assert.equal((await ready()).status, 200);

    await cluster.pgProxy.cut();
    const during = await Promise.all(Array.from({ length: 10 }, read));
    assert.deepEqual(
      during.map((r) => [r.status, r.code]),
      Array.from({ length: 10 }, () => [503, 'service_unavailable']),
    );
    const probe = await ready();
    assert.equal(probe.status, 503);
    assert.equal(((await probe.json()) as { code: string }).code, 'service_unavailable');
    assert.equal(
      (await fetch(`${cluster.nodes[0]?.url}/healthz`)).status,
      200,
      'the process itself is alive',
    );

    await cluster.pgProxy.restore();
    let after = await read();
    for (let i = 0; i < 20 && after.status !== 200; i++) {
      await sleep(100);
      after = await read();
    }
    assert.equal(after.status, 200, 'reads succeed again without a restart');
    assert.equal((await ready()).status, 200);
    assert.equal(await burns(), 6, 'exactly the served reads were charged: none during the outage');
    assert.deepEqual((await cluster.deps.store.auditLedger()).mismatches, []);
  });

  test('the server ending the sessions (as a shutdown does) gives 503 or success, never 500, and recovers', async () => {
    const beforeBurns = await burns();
    const load = Promise.all(
      Array.from({ length: 20 }, async () => {
        await sleep(Math.random() * 50);
        return read();
      }),
    );
    await sleep(10);
    // 57P01 admin_shutdown on every session of the node: what a stopping server sends its clients.
    await sqlOn(
      (db as TestDatabase).url,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE application_name = 'token-metered-data' AND datname = current_database()`,
    );
    const replies = await load;
    for (const reply of replies) assert.ok([200, 503].includes(reply.status), `status ${reply.status}`);
    const served = replies.filter((r) => r.status === 200).length;
    assert.equal(await burns(), beforeBurns + served, 'every served read charged once, no other');
    assert.equal((await read()).status, 200);
  });
});

const silentDb = await freshDatabase();

describe('PostgreSQL silent: a connection whose packets are dropped gives 503 in bounded time', {
  skip: 'skip' in silentDb ? silentDb.skip : false,
}, () => {
  after(async () => {
    if (!('skip' in silentDb)) await silentDb.drop();
  });

  test('the debit on it fails with service_unavailable, the wallet is not held, new connections serve', async () => {
    const url = new URL((silentDb as TestDatabase).url);
    const proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    // Timeouts short for the test; the defaults are 15 s (statement) and 20 s (no answer at all).
    const store = new PostgresStore(url.toString(), { statementTimeoutMs: 300, queryTimeoutMs: 800 });
    try {
      await store.migrate();
      for (const wallet of ['wal_silent_a', 'wal_silent_b']) {
        await store.createWallet(wallet, null, '2026-11');
        await store.credit({ walletId: wallet, kind: 'topup', amountMicros: 100n, at: 1 });
      }
      const debit = (walletId: string, requestId: string) =>
        store.debit({
          walletId,
          amountMicros: 1n,
          month: '2026-11',
          usage: {
            requestId,
            keyId: null,
            accountId: null,
            walletId,
            dataset: 'equities/stock-prices',
            channel: 'rest',
            listCostMicros: 1n,
            costMicros: 1n,
            burnedMicros: 1n,
            outcome: 'charged',
            rows: 1,
            at: 1,
          },
        });
      // Every pooled connection (the migration's and the credits') goes silent.
      proxy.blackhole();
      const started = Date.now();
      const first = debit('wal_silent_a', 'req_silent_1').then(
        () => 'served',
        (error: { code?: string }) => error.code,
      );
      await sleep(50);
      // Queued behind the first (same wallet): must not wait for TCP to give up on it.
      const second = debit('wal_silent_a', 'req_silent_2').then(
        () => 'served',
        (error: { code?: string }) => error.code,
      );
      const other = debit('wal_silent_b', 'req_silent_3').then(
        () => 'served',
        (error: { code?: string }) => error.code,
      );
      const outcomes = await Promise.all([first, second, other]);
      const elapsed = Date.now() - started;
      assert.ok(elapsed < 5000, `answered in ${elapsed} ms`);
      for (const outcome of outcomes)
        assert.ok(['served', 'service_unavailable'].includes(outcome as string));
      assert.equal(outcomes[0], 'service_unavailable', 'the debit on a silent connection is refused');
      // The silent connection was given up: the next debits run on new connections and succeed.
      assert.equal(await debit('wal_silent_a', 'req_silent_4').then(() => 'served'), 'served');
      const audit = await store.auditLedger();
      assert.deepEqual(audit.mismatches, []);
      const burnsOf = async (walletId: string) =>
        (await store.listEntries(walletId)).filter((e) => e.kind === 'burn').length;
      // What reached the database is what was charged: the refused first debit never did.
      assert.equal(
        await burnsOf('wal_silent_a'),
        1 + (outcomes[1] === 'served' ? 1 : 0),
        'only the debits that succeeded are in the ledger',
      );
    } finally {
      await store.close();
      await proxy.close();
    }
  });
});
