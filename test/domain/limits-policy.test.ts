import assert from 'node:assert/strict';
import { test } from 'node:test';
import { limitSubject, limitsFor } from '../../src/domain/limits-policy.ts';
import { makePricing, utcMonth } from '../../src/domain/pricing.ts';
import { account, caller, serviceConfig, T0, wallet } from './support.ts';

const config = serviceConfig();
const pricing = makePricing(config);

test('sandbox and public-test keys have their own limits; only sandbox keys are fenced by IP', () => {
  assert.deepEqual(limitsFor(config, pricing, caller('sandbox'), T0), {
    per_minute: 60,
    per_day: 5000,
    concurrent: 5,
    ip_fence: true,
  });
  assert.deepEqual(limitsFor(config, pricing, caller('public_test'), T0), {
    per_minute: 180,
    per_day: 20000,
    concurrent: 10,
    ip_fence: false,
  });
});

test("a wallet caller gets its tier's rate, or its package's when that is higher", () => {
  const burned = wallet({ burnMonth: utcMonth(T0), burnMonthMicros: 2_000_000_000n });
  assert.deepEqual(limitsFor(config, pricing, caller('live', { wallet: burned }), T0), {
    per_minute: 90,
    per_day: null,
    concurrent: 20,
    ip_fence: false,
  });
  const partner = caller('session', { wallet: burned, account: account({ packageId: 'partner' }) });
  assert.equal(limitsFor(config, pricing, partner, T0).per_minute, 300);
});

test('limits count per key, but per account for sessions and public-test keys', () => {
  assert.equal(limitSubject(caller('live')), 'key:key_1');
  assert.equal(limitSubject(caller('sandbox')), 'key:key_1');
  assert.equal(limitSubject(caller('public_test')), 'acct:acc_1');
  assert.equal(limitSubject(caller('session')), 'acct:acc_1');
  assert.equal(limitSubject(caller('session', { account: null })), 'acct:wal_1');
});
