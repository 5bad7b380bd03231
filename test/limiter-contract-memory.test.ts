/** The Limiter contract against the in-process default: MemoryLimiter; and what it keeps in memory. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryLimiter } from '../src/limits/memory-limiter.ts';
import { runLimiterContract } from './contracts/limiter-contract.ts';

runLimiterContract('MemoryLimiter', async () => new MemoryLimiter());

test('MemoryLimiter keeps state only for credentials with something in a window or in flight', async () => {
  const limiter = new MemoryLimiter();
  const minute = 60_000;
  const admit = (subject: string, now: number) =>
    limiter.admit({
      now,
      windows: [{ code: 'rate_limited', key: `min:${subject}`, limit: 10, windowMs: minute }],
      slot: { key: `slot:${subject}`, max: 2, leaseMs: 30_000 },
    });
  const t0 = 1_000_000;
  const slots: [string, string][] = [];
  for (let i = 0; i < 100; i++) {
    const result = await admit(`key${i}`, t0);
    assert.ok(result.allowed && result.slotId);
    slots.push([`slot:key${i}`, result.slotId]);
  }
  assert.deepEqual(limiter.tracked, { sliding: 100, fixed: 0, slots: 100 });
  for (const [key, id] of slots) await limiter.release(key, id);
  assert.equal(limiter.tracked.slots, 0, 'nothing in flight: no slot map is kept');
  // A second admission of one credential still counts the first.
  const again = await admit('key0', t0 + 1);
  assert.equal(again.allowed && again.windows[0]?.remaining, 8);
  // A minute on, the windows hold nothing and key0's unreleased lease has run out: the next sweep
  // lets them go.
  await admit('fresh', t0 + minute + 1);
  assert.deepEqual(limiter.tracked, { sliding: 1, fixed: 0, slots: 1 });
});
