/**
 * Redis unreachable: the service keeps answering with limits per process at LIMITS_FALLBACK_FRACTION,
 * logs the switch and exports it in /metrics; when Redis is back it is used again, without a restart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FallbackLimiter } from '../src/limits/redis/fallback-limiter.ts';
import { RedisLimiter } from '../src/limits/redis/redis-limiter.ts';
import { freshDatabase, freshRedis, type TestDatabase, type TestRedis } from './helpers/backends.ts';
import { type Cluster, count, get, startCluster } from './helpers/cluster.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';

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
    await cluster.deps.dataReads.ensureRows(cluster.deps.reads.resolve('system/api-usage'));
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

/**
 * A RedisLimiter (150 ms command timeout) behind a proxy the test controls, with the fallback over it
 * and the silent connections it dropped.
 */
async function limiterBehindProxy(shared: TestRedis) {
  const url = new URL(shared.url);
  const proxy = await startTcpProxy(url.hostname, Number(url.port || 6379));
  const silences: number[] = [];
  const redisLimiter = new RedisLimiter(`redis://127.0.0.1:${proxy.port}`, {
    keyPrefix: shared.prefix,
    commandTimeoutMs: 150,
    onSilentConnection: (ms) => silences.push(ms),
  });
  const limiter = new FallbackLimiter(redisLimiter, 1, {
    onDegraded: () => {},
    onRecovered: () => {},
    onLocalDecision: () => {},
  });
  const close = async () => {
    await limiter.close();
    await proxy.close();
  };
  return { proxy, redisLimiter, limiter, silences, close };
}

const slowRedis = await freshRedis();

describe('Redis slower than the command timeout: an admission decided locally leaves nothing behind in Redis', {
  skip: 'skip' in slowRedis ? slowRedis.skip : false,
}, () => {
  after(async () => {
    if (!('skip' in slowRedis)) await slowRedis.cleanup();
  });

  test('the slot and window entry its script recorded late are taken back; the slot is free again', async () => {
    const shared = slowRedis as TestRedis;
    const { proxy, redisLimiter, limiter, close } = await limiterBehindProxy(shared);
    try {
      assert.equal(await redisLimiter.connect(), true);
      const request = () => ({
        now: Date.now(),
        windows: [{ code: 'rate_limited' as const, key: 'win:slow', limit: 100, windowMs: 60_000 }],
        slot: { key: 'slot:slow', max: 2, leaseMs: 120_000 },
      });
      // Every command now reaches Redis 250 ms late: the client gives up after 150 ms and decides locally,
      // and the script still runs in Redis afterwards.
      proxy.setDelay(250);
      for (let i = 0; i < 2; i++) {
        const admitted = await limiter.admit(request());
        assert.equal(admitted.allowed, true);
        if (admitted.allowed && admitted.slotId) await limiter.release('slot:slow', admitted.slotId);
      }
      proxy.setDelay(0);
      await sleep(1000); // the late scripts and their undo have run
      assert.equal(await redisLimiter.inFlight('slot:slow', Date.now()), 0, 'no slot held in Redis');
      assert.equal(await shared.client.zcard(`${shared.prefix}win:slow`), 0, 'no window entry left');
      const after = await limiter.admit(request());
      assert.equal(after.allowed, true, 'the slots given back are free');
      assert.equal(limiter.degraded, false, 'decided by Redis again');
      if (after.allowed && after.slotId) await limiter.release('slot:slow', after.slotId);
    } finally {
      await close();
    }
  });
});

const silentRedis = await freshRedis();

describe('Redis connection that silently drops everything: replaced, not waited out', {
  skip: 'skip' in silentRedis ? silentRedis.skip : false,
}, () => {
  after(async () => {
    if (!('skip' in silentRedis)) await silentRedis.cleanup();
  });

  test('after one command timeout with nothing back, the limiter reconnects and Redis decides again', async () => {
    const shared = silentRedis as TestRedis;
    const { proxy, redisLimiter, limiter, silences, close } = await limiterBehindProxy(shared);
    try {
      assert.equal(await redisLimiter.connect(), true);
      const hit = () => limiter.hit('win:silent', 100, 60_000, Date.now());
      assert.equal((await hit()).remaining, 99, 'decided by Redis');
      // The open connection now loses every byte, both ways, with no reset: TCP would take minutes.
      proxy.blackhole();
      const started = Date.now();
      await hit();
      assert.equal(limiter.degraded, true, 'the timed-out call was decided locally');
      let byRedis = false;
      while (!byRedis && Date.now() - started < 3000) {
        await sleep(50);
        await hit();
        byRedis = !limiter.degraded;
      }
      assert.ok(byRedis, 'Redis decides again on a new connection, within a few timeouts');
      assert.equal(silences.length, 1, 'the silent connection was dropped once');
      assert.ok((silences[0] as number) >= 150);
      const inRedis = await shared.client.zcard(`${shared.prefix}win:silent`);
      assert.ok(inRedis >= 2, `the hits after the reconnect are counted in Redis: ${inRedis}`);
    } finally {
      await close();
    }
  });
  test('a Redis that is slow but answers keeps its connection; the admissions it answered late are taken back', async () => {
    const shared = silentRedis as TestRedis;
    const { proxy, redisLimiter, limiter, silences, close } = await limiterBehindProxy(shared);
    try {
      assert.equal(await redisLimiter.connect(), true);
      const request = () => ({
        now: Date.now(),
        windows: [{ code: 'rate_limited' as const, key: 'win:late', limit: 1000, windowMs: 60_000 }],
        slot: { key: 'slot:late', max: 1000, leaseMs: 120_000 },
      });
      // Every command reaches Redis 200 ms late: each times out (150 ms), but answers keep coming back.
      proxy.setDelay(200);
      const admitted = [];
      for (let i = 0; i < 20; i++) {
        admitted.push(limiter.admit(request()));
        await sleep(40);
      }
      for (const result of await Promise.all(admitted)) {
        assert.equal(result.allowed, true);
        if (result.allowed && result.slotId) await limiter.release('slot:late', result.slotId);
      }
      proxy.setDelay(0);
      await sleep(600); // the late scripts and their undos have run
      assert.deepEqual(silences, [], 'a slow Redis is not taken for a dead connection');
      assert.equal(await shared.client.zcard(`${shared.prefix}slot:late`), 0, 'no slot left held');
      assert.equal(await shared.client.zcard(`${shared.prefix}win:late`), 0, 'no window entry left');
      await limiter.admit(request());
      assert.equal(limiter.degraded, false, 'decided by Redis again, on the same connection');
    } finally {
      await close();
    }
  });
  test('admissions whose undo was lost on a silent connection are taken back on the next one', async () => {
    const shared = silentRedis as TestRedis;
    const { proxy, redisLimiter, silences, close } = await limiterBehindProxy(shared);
    try {
      assert.equal(await redisLimiter.connect(), true);
      const request = () => ({
        now: Date.now(),
        windows: [{ code: 'rate_limited' as const, key: 'win:muted', limit: 1000, windowMs: 60_000 }],
        slot: { key: 'slot:muted', max: 1000, leaseMs: 120_000 },
      });
      // Redis gets the first scripts and runs them, but no answer comes back; then nothing gets through
      // at all: the undos sent on this connection are lost, as are the admissions still waiting on it.
      proxy.mute();
      const admitted = [];
      for (let i = 0; i < 8; i++) {
        admitted.push(
          redisLimiter.admit(request()).then(
            () => 'answered',
            () => 'failed',
          ),
        );
        if (i === 0) {
          // The first script has reached Redis (nothing comes back); from now on nothing gets through.
          const slot = `${shared.prefix}slot:muted`;
          for (let tries = 0; tries < 50 && (await shared.client.zcard(slot)) === 0; tries++) await sleep(5);
          assert.equal(await shared.client.zcard(slot), 1, 'the first script ran in Redis');
          proxy.blackhole();
        }
        await sleep(30);
      }
      assert.deepEqual(new Set(await Promise.all(admitted)), new Set(['failed']));
      // The drop comes within two command timeouts of the last timed-out command; then the new
      // connection sends the undos again.
      await sleep(1_000);
      assert.equal(silences.length, 1, 'the silent connection was dropped');
      assert.equal(await shared.client.zcard(`${shared.prefix}slot:muted`), 0, 'no slot left held');
      assert.equal(await shared.client.zcard(`${shared.prefix}win:muted`), 0, 'no window entry left');
    } finally {
      await close();
    }
  });
});
