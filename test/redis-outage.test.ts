/**
 * Redis unreachable: the service keeps answering with limits per process at LIMITS_FALLBACK_FRACTION,
 * logs the switch and exports it in /metrics; when Redis is back it is used again, without a restart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshDatabase, freshRedis, type TestDatabase, type TestRedis } from './helpers/backends.ts';
import { type Cluster, count, get, startCluster } from './helpers/cluster.ts';

const db = await freshDatabase();
const redis = await freshRedis();
const skip = 'skip' in db ? db.skip : 'skip' in redis ? redis.skip : false;

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

describe('Redis unreachable: per-process limits at a fraction, recover without a restart', { skip }, () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster({
      db: db as TestDatabase,
      redis: redis as TestRedis,
      nodes: 1,
      env: { LIMITS_FALLBACK_FRACTION: '1/3' },
    });
    await cluster.deps.reads.ensureRows(cluster.deps.reads.resolve('system/api-usage'));
  });
  after(async () => {
    await cluster?.close();
    if (!('skip' in db)) await db.drop();
    if (!('skip' in redis)) await redis.cleanup();
  });

  const node = () => cluster.nodes[0]?.url as string;
  const metrics = async () => (await fetch(`${node()}/metrics`)).text();
  const readyz = async () => (await (await fetch(`${node()}/readyz`)).json()) as { limiter: string };

  test('a 60/min key gets 20/min on this node while Redis is down; shared limits again once it is back', async () => {
    assert.deepEqual(await readyz(), { status: 'ready', store: 'ok', limiter: 'ok' });
    assert.equal(metric(await metrics(), 'tmd_limiter_degraded'), 0);

    await cluster.redisProxy.cut();
    const { key } = await cluster.walletKey(1000);
    const url = `${node()}/api/v1/data/system/api-usage?limit=1`;
    const during = [];
    for (let i = 0; i < 25; i++) during.push(await get(url, key));
    assert.equal(count(during, 200), 20, '60/min x 1/3 on this node');
    assert.equal(count(during, 429, 'rate_limited'), 5);
    const text = await metrics();
    assert.equal(metric(text, 'tmd_limiter_degraded'), 1);
    assert.equal(metric(text, 'tmd_limiter_fallback_transitions_total'), 1);
    assert.ok(metric(text, 'tmd_limiter_local_decisions_total') >= 25);
    assert.match(text, /# TYPE tmd_limiter_degraded gauge/);
    assert.match(cluster.nodes[0]?.output() ?? '', /Redis unreachable: limits continue per process/);
    assert.deepEqual(await readyz(), { status: 'ready', store: 'ok', limiter: 'degraded' });

    await cluster.redisProxy.restore();
    let state = await readyz();
    for (let i = 0; i < 40 && state.limiter !== 'ok'; i++) {
      await sleep(100);
      state = await readyz();
    }
    assert.equal(state.limiter, 'ok', 'Redis is used again without a restart');
    const { key: fresh, keyId } = await cluster.walletKey(1000);
    const shared = [];
    for (let i = 0; i < 25; i++) shared.push(await get(url, fresh));
    assert.equal(count(shared, 200), 25, 'the full limit again, counted in Redis');
    const r = redis as TestRedis;
    assert.equal(await r.client.zcard(`${r.prefix}min:key:${keyId}`), 25);
    assert.equal(metric(await metrics(), 'tmd_limiter_degraded'), 0);
  });
});
