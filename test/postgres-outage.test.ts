/**
 * PostgreSQL stopped mid-run: reads fail closed with 503 service_unavailable and nothing is served
 * unmetered; when it is back, reads succeed again without a restart. The database is taken away by a
 * proxy the test controls (connections reset, new ones refused: what a stopped server looks like to a
 * client), and separately by the server ending the node's sessions (what `pg_ctl stop` sends).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshDatabase, freshRedis, sqlOn, type TestDatabase, type TestRedis } from './helpers/backends.ts';
import { type Cluster, get, startCluster } from './helpers/cluster.ts';

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
