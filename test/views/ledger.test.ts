import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LedgerEntry, UsageEvent } from '../../src/store/port.ts';
import {
  entryKind,
  ledgerEntryOut,
  presentEntryRead,
  presentLedgerEntry,
  presentMonthlyCreditRun,
  presentUsage,
} from '../../src/views/ledger.ts';
import { T0 } from '../domain/support.ts';

const event: UsageEvent = {
  id: '42',
  requestId: 'req_a',
  keyId: 'key_1',
  accountId: 'acc_1',
  walletId: 'wal_1',
  dataset: 'equities/stock-prices',
  channel: 'terminal',
  listCostMicros: 2_000_000n,
  costMicros: 2_700_000n,
  burnedMicros: 2_700_000n,
  outcome: 'charged',
  rows: 30,
  at: T0,
};

test('a ledger entry shows exact amounts, and an operator idempotency key as the operator gave it', () => {
  const entry: LedgerEntry = {
    id: '7',
    walletId: 'wal_1',
    kind: 'topup',
    amountMicros: 1_500_000n,
    balanceAfterMicros: 10_000_001n,
    createdAt: T0,
    requestId: null,
    idempotencyKey: 'operator:grant-7',
    memo: 'welcome',
  };
  const view = presentLedgerEntry(entry);
  assert.deepEqual(view, {
    id: '7',
    kind: 'topup',
    amount: '1.5',
    balance_after: '10.000001',
    created_at: '2026-11-21T15:00:00.000Z',
    idempotency_key: 'grant-7',
    memo: 'welcome',
    request_id: null,
  });
  assert.deepEqual(ledgerEntryOut.parse(view), view);
  assert.equal(
    presentLedgerEntry({ ...entry, kind: 'burn', amountMicros: -2_700_000n, idempotencyKey: null }).amount,
    '-2.7',
  );
  assert.equal(presentLedgerEntry({ ...entry, idempotencyKey: null }).idempotency_key, null);
});

test('the read behind an entry is its dataset, key and channel; none is null', () => {
  assert.deepEqual(presentEntryRead(event), {
    dataset: 'equities/stock-prices',
    key_id: 'key_1',
    channel: 'terminal',
  });
  assert.equal(presentEntryRead(undefined), null);
  assert.equal(entryKind.safeParse('burn').success, true);
  assert.equal(entryKind.safeParse('gift').success, false);
});

test('a usage event shows list cost, token cost and burn as exact token strings', () => {
  assert.deepEqual(presentUsage(event), {
    id: '42',
    at: '2026-11-21T15:00:00.000Z',
    request_id: 'req_a',
    key_id: 'key_1',
    dataset: 'equities/stock-prices',
    channel: 'terminal',
    list_cost: '2',
    token_cost: '2.7',
    tokens_burned: '2.7',
    outcome: 'charged',
    rows: 30,
  });
});

test('a monthly credit run is shown in snake case', () => {
  assert.deepEqual(
    presentMonthlyCreditRun({
      month: '2026-11',
      credited: [{ accountId: 'acc_1', packageId: 'pro', tokens: '150000', entryId: '9' }],
      alreadyCredited: 2,
    }),
    {
      month: '2026-11',
      credited: [{ account_id: 'acc_1', package: 'pro', tokens: '150000', entry_id: '9' }],
      already_credited: 2,
    },
  );
});
