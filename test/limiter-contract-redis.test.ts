/**
 * The Limiter contract against RedisLimiter (one Lua script per call), on the test Redis under a key
 * prefix of this file's own. Then the failure policy: FallbackLimiter with Redis unreachable.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { FallbackLimiter } from '../src/limits/redis/fallback-limiter.ts';
import { RedisLimiter } from '../src/limits/redis/redis-limiter.ts';
import { runLimiterContract } from './contracts/limiter-contract.ts';
import { freshRedis } from './helpers/backends.ts';

const redis = await freshRedis();
const skip = 'skip' in redis ? redis.skip : false;
after(async () => {
  if (!('skip' in redis)) await redis.cleanup();
});

async function connected(): Promise<RedisLimiter> {
  const r = redis as { url: string; prefix: string };
  const limiter = new RedisLimiter(r.url, { keyPrefix: r.prefix });
  assert.equal(await limiter.connect(), true);
  return limiter;
}

runLimiterContract('RedisLimiter', connected, { skip });

describe('RedisLimiter: keys and leases in Redis', { skip }, () => {
  test('every key is under the prefix and expires (no key lives forever)', async () => {
    const r = redis as { client: import('ioredis').Redis; prefix: string };
    const limiter = await connected();
    const now = Date.now();
    await limiter.admit({
      now,
      windows: [
        { code: 'rate_limited', key: 'ttl:min', limit: 5, windowMs: 60_000 },
        { code: 'daily_limit', key: 'ttl:day', limit: 5, windowMs: 86_400_000, fixedUntil: now + 3_600_000 },
      ],
      slot: { key: 'ttl:slot', max: 2, leaseMs: 120_000 },
    });
    await limiter.hit('ttl:hit', 3, 10_000, now);
    for (const key of ['ttl:min', 'ttl:day', 'ttl:slot', 'ttl:hit']) {
      const ttl = await r.client.pttl(`${r.prefix}${key}`);
      assert.ok(ttl > 0, `${key} has a TTL (${ttl})`);
    }
    await limiter.close();
  });
});

describe('RedisLimiter: releases of one turn go out together', { skip }, () => {
  test('one ZREM per slot key for all the slots released in a turn; each slot is free after', async () => {
    const r = redis as { client: import('ioredis').Redis; prefix: string };
    const limiter = await connected();
    const now = Date.now();
    const slot = (key: string) => ({ key, max: 3, leaseMs: 60_000 });
    const held: [string, string][] = [];
    for (const key of ['turn:a', 'turn:a', 'turn:a', 'turn:b', 'turn:b']) {
      const admitted = await limiter.admit({ now, windows: [], slot: slot(key) });
      assert.ok(admitted.allowed && admitted.slotId);
      held.push([key, admitted.slotId]);
    }
    const zrems = async () => {
      const stats = await r.client.info('commandstats');
      return Number(/cmdstat_zrem:calls=(\d+)/.exec(stats)?.[1] ?? 0);
    };
    try {
      const before = await zrems();
      await Promise.all(held.map(([key, id]) => limiter.release(key, id)));
      // The INFO call itself is no ZREM; nothing else writes to this Redis while the file runs.
      assert.equal((await zrems()) - before, 2);
      assert.equal(await limiter.inFlight('turn:a', now), 0);
      assert.equal(await limiter.inFlight('turn:b', now), 0);
    } finally {
      await limiter.close();
    }
  });
});

describe('FallbackLimiter: Redis unreachable', () => {
  test('limits continue per process at the fraction, the switch is reported once, and never throws', async () => {
    // Nothing listens on port 1: the shared limiter is down from the start.
    const down = new RedisLimiter('redis://127.0.0.1:1', { keyPrefix: 'unused:' });
    const events: string[] = [];
    let local = 0;
    const limiter = new FallbackLimiter(down, 1 / 3, {
      onDegraded: () => events.push('degraded'),
      onRecovered: () => events.push('recovered'),
      onLocalDecision: () => {
        local++;
      },
    });
    const now = Date.now();
    const window = { code: 'rate_limited' as const, key: 'k', limit: 60, windowMs: 60_000 };
    const results = [];
    for (let i = 0; i < 25; i++) results.push(await limiter.admit({ now, windows: [window] }));
    assert.equal(results.filter((r) => r.allowed).length, 20, '60/min enforced as 20/min on this node');
    const slots = [];
    for (let i = 0; i < 5; i++) {
      slots.push(await limiter.admit({ now, windows: [], slot: { key: 's', max: 10, leaseMs: 60_000 } }));
    }
    assert.equal(slots.filter((r) => r.allowed).length, 3, '10 in flight enforced as 3 on this node');
    const first = slots[0];
    assert.ok(first?.allowed && first.slotId?.startsWith('local:'));
    const second = slots[1];
    assert.ok(second?.allowed && second.slotId);
    assert.equal(await limiter.renew('s', second.slotId, 60_000, now + 50_000), true, 'a local slot renews');
    assert.equal(await limiter.inFlight('s', now + 100_000), 1, 'only the renewed slot outlives its lease');
    await limiter.release('s', first.slotId as string);
    assert.equal(await limiter.inFlight('s', now), 2);
    assert.equal((await limiter.hit('issuance', 3, 86_400_000, now)).allowed, true);
    assert.equal((await limiter.hit('issuance', 3, 86_400_000, now)).allowed, false, '3/day becomes 1/day');
    assert.deepEqual(events, ['degraded']);
    assert.ok(local >= 30);
    assert.equal(limiter.degraded, true);
    assert.equal(await limiter.check(), 'degraded');
    await limiter.close();
  });
});
