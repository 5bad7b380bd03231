import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  capResetAt,
  capThatWouldRefuse,
  nextUtcMonthStart,
  spendCapsOf,
  spendingCapReached,
  utcDayStart,
  utcMonthStart,
} from '../../src/domain/spending-caps.ts';
import { keyRecord } from './support.ts';

const NOW = Date.parse('2026-12-31T18:30:00Z');

test('UTC day and month boundaries, including the turn of the year', () => {
  assert.equal(utcDayStart(NOW), Date.parse('2026-12-31T00:00:00Z'));
  assert.equal(utcMonthStart(NOW), Date.parse('2026-12-01T00:00:00Z'));
  assert.equal(nextUtcMonthStart(NOW), Date.parse('2027-01-01T00:00:00Z'));
  assert.equal(capResetAt('day', NOW), Date.parse('2027-01-01T00:00:00Z'));
  assert.equal(capResetAt('month', Date.parse('2026-02-10T00:00:00Z')), Date.parse('2026-03-01T00:00:00Z'));
});

test('a key with both caps is checked month first, then day; no key or no caps is none', () => {
  const key = keyRecord({ dailyCapMicros: 10_000_000n, monthlyCapMicros: 100_000_000n });
  assert.deepEqual(spendCapsOf(key, NOW), [
    { period: 'month', sinceMs: Date.parse('2026-12-01T00:00:00Z'), capMicros: 100_000_000n },
    { period: 'day', sinceMs: Date.parse('2026-12-31T00:00:00Z'), capMicros: 10_000_000n },
  ]);
  assert.deepEqual(spendCapsOf(keyRecord(), NOW), []);
  assert.deepEqual(spendCapsOf(null, NOW), []);
});

test('the forecast names the first cap a debit would pass, with what the key burned in its period', async () => {
  const burned = new Map([
    [Date.parse('2026-12-01T00:00:00Z'), 95_000_000n],
    [Date.parse('2026-12-31T00:00:00Z'), 8_000_000n],
  ]);
  const seen: number[] = [];
  const store = {
    keyBurnedSince: async (_keyId: string, sinceMs: number) => {
      seen.push(sinceMs);
      return burned.get(sinceMs) ?? 0n;
    },
  };
  const key = keyRecord({ dailyCapMicros: 10_000_000n, monthlyCapMicros: 100_000_000n });
  assert.equal(await capThatWouldRefuse(store, key, 2_000_000n, NOW), null);
  assert.deepEqual(await capThatWouldRefuse(store, key, 3_000_000n, NOW), {
    period: 'day',
    sinceMs: Date.parse('2026-12-31T00:00:00Z'),
    capMicros: 10_000_000n,
    spentMicros: 8_000_000n,
  });
  assert.equal((await capThatWouldRefuse(store, key, 6_000_000n, NOW))?.period, 'month');
  seen.length = 0;
  assert.equal(await capThatWouldRefuse(store, key, 0n, NOW), null);
  assert.equal(await capThatWouldRefuse(store, keyRecord(), 5_000_000n, NOW), null);
  assert.deepEqual(seen, [], 'a free read or a key without caps reads nothing');
});

test('a reached cap is 402 spending_cap_reached with exact token strings and the reset', () => {
  const error = spendingCapReached(
    { period: 'day', sinceMs: 0, capMicros: 10_000_000n, spentMicros: 8_500_000n },
    2_700_000n,
    NOW,
  );
  assert.equal(error.code, 'spending_cap_reached');
  assert.equal(error.status, 402);
  assert.deepEqual(error.extras, {
    period: 'day',
    cap_tokens: '10',
    spent_tokens: '8.5',
    required_tokens: '2.7',
    reset_at: '2027-01-01T00:00:00.000Z',
  });
  assert.equal(
    error.message,
    "This key's daily spending cap of 10 tokens is reached: it burned 8.5 today (UTC) and this request costs 2.7. The cap resets at 2027-01-01T00:00:00.000Z.",
  );
  const monthly = spendingCapReached(
    { period: 'month', sinceMs: 0, capMicros: 1n, spentMicros: 0n },
    2n,
    NOW,
  );
  assert.match(monthly.message, /monthly spending cap of 0.000001 tokens .* this month \(UTC\)/);
});
