import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lowBalanceCrossed } from '../../src/domain/alerts.ts';
import { account, caller, T0 } from './support.ts';

const withThreshold = caller('live', { account: account({ lowBalanceMicros: 100_000_000n }) });

test('a debit from at the threshold to below it is one balance.low notice with exact amounts', () => {
  assert.deepEqual(lowBalanceCrossed(withThreshold, 100_000_000n, 99_500_000n, T0), {
    type: 'balance.low',
    account_id: 'acc_1',
    wallet_id: 'wal_1',
    balance: '99.5',
    threshold: '100',
    at: '2026-11-21T15:00:00.000Z',
  });
});

test('a debit that stays above, or starts below, the threshold owes no notice', () => {
  assert.equal(lowBalanceCrossed(withThreshold, 200_000_000n, 100_000_000n, T0), null);
  assert.equal(lowBalanceCrossed(withThreshold, 99_000_000n, 98_000_000n, T0), null);
});

test('without a threshold or an account there is never a notice', () => {
  assert.equal(lowBalanceCrossed(caller('live'), 5_000_000n, 0n, T0), null);
  assert.equal(lowBalanceCrossed(caller('sandbox'), 5_000_000n, 0n, T0), null);
});
