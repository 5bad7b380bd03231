/**
 * The Limiter contract: every adapter (MemoryLimiter, RedisLimiter) runs this same suite. Instants are
 * explicit `now` values, so windows are tested to the millisecond without sleeping.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { AdmitRequest, Limiter, WindowCheck } from '../../src/limits/port.ts';

const MINUTE = 60_000;
const DAY = 86_400_000;
const T0 = Date.parse('2026-11-21T15:00:00Z');
const MIDNIGHT = Date.parse('2026-11-22T00:00:00Z');

export function runLimiterContract(
  name: string,
  makeLimiter: () => Promise<Limiter>,
  options: { skip?: string | false } = {},
): void {
  describe(`Limiter contract: ${name}`, { skip: options.skip ?? false }, () => {
    let limiter: Limiter;
    before(async () => {
      limiter = await makeLimiter();
    });
    after(async () => {
      await limiter?.close();
    });

    /** A key no other test (or earlier run) has used. */
    const fresh = (label: string) => `${label}:${randomBytes(6).toString('hex')}`;
    const minute = (key: string, limit: number): WindowCheck => ({
      code: 'rate_limited',
      key,
      limit,
      windowMs: MINUTE,
    });
    const admitAt = (now: number, windows: WindowCheck[], slot?: AdmitRequest['slot']) =>
      limiter.admit({ now, windows, ...(slot ? { slot } : {}) });

    test('sliding window: 60/min admits 60, refuses the 61st with the exact retry-after, then admits again', async () => {
      const w = minute(fresh('min'), 60);
      for (let i = 0; i < 60; i++) {
        const result = await admitAt(T0 + i * 500, [w]);
        assert.equal(result.allowed, true, `request ${i + 1} is admitted`);
        assert.equal(result.windows[0]?.remaining, 59 - i);
      }
      const refused = await admitAt(T0 + 30_000, [w]);
      assert.equal(refused.allowed, false);
      assert.ok(!refused.allowed);
      assert.equal(refused.code, 'rate_limited');
      // The oldest admission (T0) leaves the window at T0 + 60 s: 30 s from now.
      assert.equal(refused.retryAfterMs, 30_000);
      assert.equal(refused.windows[0]?.remaining, 0);
      const stillRefused = await admitAt(T0 + MINUTE - 1, [w]);
      assert.equal(stillRefused.allowed, false, '1 ms before the first admission leaves, still full');
      assert.ok(!stillRefused.allowed);
      assert.equal(stillRefused.retryAfterMs, 1);
      const again = await admitAt(T0 + MINUTE, [w]);
      assert.equal(again.allowed, true, 'the first request after the window passes is admitted');
      const next = await admitAt(T0 + MINUTE, [w]);
      assert.equal(next.allowed, false, 'only one left the window');
      assert.ok(!next.allowed);
      assert.equal(next.retryAfterMs, 500, 'the second admission (T0 + 500 ms) leaves next');
    });

    test('sliding window: no double burst across a minute boundary (exact over any span)', async () => {
      const w = minute(fresh('edge'), 60);
      const end = T0 + MINUTE - 1;
      for (let i = 0; i < 60; i++) assert.equal((await admitAt(end, [w])).allowed, true);
      const nextMinute = await admitAt(T0 + MINUTE, [w]);
      assert.equal(nextMinute.allowed, false, 'a fixed window would reset here; a sliding one does not');
      assert.ok(!nextMinute.allowed);
      assert.equal(nextMinute.retryAfterMs, MINUTE - 1);
      assert.equal((await admitAt(end + MINUTE - 1, [w])).allowed, false);
      assert.equal((await admitAt(end + MINUTE, [w])).allowed, true);
    });

    test('sliding windows of any span: 3 per second and 3 per day', async () => {
      const second: WindowCheck = { code: 'rate_limited', key: fresh('sec'), limit: 3, windowMs: 1000 };
      for (const at of [0, 100, 999]) assert.equal((await admitAt(T0 + at, [second])).allowed, true);
      const refused = await admitAt(T0 + 999, [second]);
      assert.ok(!refused.allowed);
      assert.equal(refused.retryAfterMs, 1);
      assert.equal((await admitAt(T0 + 1000, [second])).allowed, true);

      const day: WindowCheck = { code: 'daily_limit', key: fresh('day'), limit: 3, windowMs: DAY };
      for (const at of [0, 3_600_000, 7_200_000]) assert.equal((await admitAt(T0 + at, [day])).allowed, true);
      const refusedDay = await admitAt(T0 + 23 * 3_600_000, [day]);
      assert.ok(!refusedDay.allowed);
      assert.equal(refusedDay.code, 'daily_limit');
      assert.equal(refusedDay.retryAfterMs, 3_600_000);
      assert.equal((await admitAt(T0 + DAY, [day])).allowed, true);
    });

    test('fixed daily window: counts until the instant, then starts again at it', async () => {
      const key = fresh('fixed');
      const daily = (now: number): WindowCheck => ({
        code: 'daily_limit',
        key,
        limit: 3,
        windowMs: DAY,
        fixedUntil: now < MIDNIGHT ? MIDNIGHT : MIDNIGHT + DAY,
      });
      for (const at of [MIDNIGHT - 10 * 3_600_000, MIDNIGHT - 3_600_000, MIDNIGHT - 2]) {
        const result = await admitAt(at, [daily(at)]);
        assert.equal(result.allowed, true);
        assert.equal(result.windows[0]?.resetMs, MIDNIGHT - at);
      }
      const refused = await admitAt(MIDNIGHT - 1, [daily(MIDNIGHT - 1)]);
      assert.ok(!refused.allowed);
      assert.equal(refused.code, 'daily_limit');
      assert.equal(refused.retryAfterMs, 1, 'retry at midnight exactly');
      assert.equal(refused.windows[0]?.resetMs, 1);
      const atMidnight = await admitAt(MIDNIGHT, [daily(MIDNIGHT)]);
      assert.equal(atMidnight.allowed, true, 'the day resets at the instant, not a window later');
      assert.equal(atMidnight.windows[0]?.remaining, 2);
      assert.equal(atMidnight.windows[0]?.resetMs, DAY);
    });

    test('admit is all or nothing: a refused request is recorded in no window', async () => {
      const wide = minute(fresh('wide'), 5);
      const narrow: WindowCheck = { code: 'daily_limit', key: fresh('narrow'), limit: 2, windowMs: DAY };
      assert.equal((await admitAt(T0, [wide, narrow])).allowed, true);
      assert.equal((await admitAt(T0 + 1, [wide, narrow])).allowed, true);
      const refused = await admitAt(T0 + 2, [wide, narrow]);
      assert.ok(!refused.allowed);
      assert.equal(refused.code, 'daily_limit', 'the window that is full names the refusal');
      assert.deepEqual(
        refused.windows.map((s) => [s.code, s.limit, s.remaining]),
        [
          ['rate_limited', 5, 3],
          ['daily_limit', 2, 0],
        ],
      );
      const wideOnly = await admitAt(T0 + 3, [wide]);
      assert.equal(wideOnly.allowed, true);
      assert.equal(
        wideOnly.windows[0]?.remaining,
        2,
        'the refused request took nothing from the wide window',
      );
    });

    test('admit refuses with the first full window, in the order given, when they free up together', async () => {
      const a = { ...minute(fresh('a'), 1), code: 'ip_fence' as const };
      const b = minute(fresh('b'), 1);
      assert.equal((await admitAt(T0, [a, b])).allowed, true);
      const refused = await admitAt(T0 + 10, [a, b]);
      assert.ok(!refused.allowed);
      assert.equal(refused.code, 'ip_fence');
      assert.equal(refused.retryAfterMs, MINUTE - 10);
    });

    test('of several full windows, the one that frees up last gives the code and the real wait', async () => {
      const perMinute = minute(fresh('m'), 1);
      const perDay = { code: 'daily_limit' as const, key: fresh('d'), limit: 1, windowMs: 86_400_000 };
      assert.equal((await admitAt(T0, [perMinute, perDay])).allowed, true);
      const refused = await admitAt(T0 + 10, [perMinute, perDay]);
      assert.ok(!refused.allowed);
      assert.equal(refused.code, 'daily_limit');
      assert.equal(refused.retryAfterMs, 86_400_000 - 10);
    });

    test('in-flight slots: at most max, released slots come back, releasing twice is harmless', async () => {
      const slot = { key: fresh('slot'), max: 2, leaseMs: 120_000 };
      const w = minute(fresh('slotmin'), 100);
      const first = await admitAt(T0, [w], slot);
      const second = await admitAt(T0, [w], slot);
      assert.ok(first.allowed && second.allowed);
      assert.ok(first.slotId && second.slotId);
      assert.notEqual(first.slotId, second.slotId);
      assert.equal(await limiter.inFlight(slot.key, T0), 2);
      const refused = await admitAt(T0 + 1, [w], slot);
      assert.ok(!refused.allowed);
      assert.equal(refused.code, 'concurrency_limit');
      assert.ok(refused.retryAfterMs >= 1);
      const afterRefusal = await admitAt(T0 + 2, [w]);
      assert.equal(afterRefusal.windows[0]?.remaining, 97, 'a request refused for its slot is not counted');
      await limiter.release(slot.key, first.slotId);
      await limiter.release(slot.key, first.slotId);
      assert.equal(await limiter.inFlight(slot.key, T0 + 3), 1);
      const third = await admitAt(T0 + 3, [w], slot);
      assert.equal(third.allowed, true);
      await limiter.release(slot.key, 'no-such-slot');
      assert.equal(await limiter.inFlight(slot.key, T0 + 4), 2);
    });

    test('in-flight slots are leases: a slot never released is free once its lease has run out', async () => {
      const slot = { key: fresh('lease'), max: 1, leaseMs: 5000 };
      const taken = await admitAt(T0, [], slot);
      assert.ok(taken.allowed && taken.slotId);
      assert.equal(await limiter.inFlight(slot.key, T0 + 4999), 1);
      assert.equal((await admitAt(T0 + 4999, [], slot)).allowed, false);
      assert.equal(await limiter.inFlight(slot.key, T0 + 5000), 0, 'the lease ran out (its node died)');
      assert.equal(
        await limiter.inFlight(slot.key, T0 + 4999),
        1,
        'asking about a later instant ends nothing',
      );
      const again = await admitAt(T0 + 5000, [], slot);
      assert.equal(again.allowed, true);
    });

    test('renew extends a held lease by a full lease from now; a released or run-out slot is not taken back', async () => {
      const slot = { key: fresh('renew'), max: 1, leaseMs: 5000 };
      const taken = await admitAt(T0, [], slot);
      assert.ok(taken.allowed && taken.slotId);
      assert.equal(await limiter.renew(slot.key, taken.slotId, 5000, T0 + 3000), true);
      assert.equal(await limiter.inFlight(slot.key, T0 + 7999), 1, 'held until T0 + 3 s + 5 s');
      assert.equal((await admitAt(T0 + 6000, [], slot)).allowed, false, 'still taken past the first lease');
      assert.equal(await limiter.inFlight(slot.key, T0 + 8000), 0);

      assert.equal(
        await limiter.renew(slot.key, taken.slotId, 5000, T0 + 8000),
        false,
        'run out: not renewed',
      );
      assert.equal(await limiter.inFlight(slot.key, T0 + 8000), 0);
      const next = await admitAt(T0 + 8000, [], slot);
      assert.ok(next.allowed && next.slotId, 'the slot went to the next request');
      await limiter.release(slot.key, next.slotId);
      assert.equal(
        await limiter.renew(slot.key, next.slotId, 5000, T0 + 8001),
        false,
        'released: not renewed',
      );
      assert.equal(await limiter.renew(slot.key, 'no-such-slot', 5000, T0 + 8001), false);
      assert.equal(await limiter.inFlight(slot.key, T0 + 8001), 0);
    });

    test('admit without windows or slot is allowed and holds nothing', async () => {
      const result = await admitAt(T0, []);
      assert.deepEqual(result, { allowed: true, windows: [], slotId: null });
    });

    test('hit and peek: a sliding counter that peek reads without recording', async () => {
      const key = fresh('hit');
      const window = 10_000;
      const peeked = await limiter.peek(key, 3, window, T0);
      assert.equal(peeked.allowed, true);
      assert.equal(peeked.remaining, 3);
      for (const [i, at] of [T0, T0 + 1000, T0 + 2000].entries()) {
        const hit = await limiter.hit(key, 3, window, at);
        assert.equal(hit.allowed, true);
        assert.equal(hit.remaining, 2 - i);
        assert.equal(hit.retryAfterMs, 0);
      }
      const refused = await limiter.hit(key, 3, window, T0 + 3000);
      assert.equal(refused.allowed, false);
      assert.equal(refused.remaining, 0);
      assert.equal(refused.retryAfterMs, 7000, 'until the first hit leaves the window');
      const peekRefused = await limiter.peek(key, 3, window, T0 + 3000);
      assert.equal(peekRefused.allowed, false);
      assert.equal(peekRefused.retryAfterMs, 7000);
      const afterWindow = await limiter.peek(key, 3, window, T0 + 10_000);
      assert.equal(afterWindow.allowed, true);
      assert.equal(afterWindow.remaining, 1, 'refused hits were not recorded');
    });

    test('keys are independent', async () => {
      const a = minute(fresh('ind-a'), 1);
      const b = minute(fresh('ind-b'), 1);
      assert.equal((await admitAt(T0, [a])).allowed, true);
      assert.equal((await admitAt(T0, [b])).allowed, true);
      assert.equal((await limiter.hit(fresh('ind-c'), 1, MINUTE, T0)).allowed, true);
    });

    test('concurrent admits are atomic: 200 at once on a limit of 60 admit exactly 60', async () => {
      const w = minute(fresh('burst'), 60);
      const results = await Promise.all(Array.from({ length: 200 }, () => admitAt(T0, [w])));
      assert.equal(results.filter((r) => r.allowed).length, 60);
    });

    test('concurrent admits are atomic: 50 at once on 10 slots hold exactly 10', async () => {
      const slot = { key: fresh('burst-slot'), max: 10, leaseMs: 60_000 };
      const results = await Promise.all(Array.from({ length: 50 }, () => admitAt(T0, [], slot)));
      assert.equal(results.filter((r) => r.allowed).length, 10);
      assert.equal(await limiter.inFlight(slot.key, T0), 10);
    });
  });
}
