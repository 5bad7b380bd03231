import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  presentPack,
  presentPurchase,
  presentTokenRequest,
  purchaseOut,
  tokenPackOut,
  tokenRequestOut,
} from '../../src/views/billing.ts';
import { T0 } from '../domain/support.ts';

test('a pack shows its price in euros with two decimals', () => {
  assert.deepEqual(presentPack({ id: 'tokens-1k', tokens: 1000, priceCents: 10000 }), {
    id: 'tokens-1k',
    tokens: 1000,
    price_eur: '100.00',
  });
  assert.equal(presentPack({ id: 'p', tokens: 5, priceCents: 50 }).price_eur, '0.50');
  assert.equal(tokenPackOut.safeParse(presentPack({ id: 'p', tokens: 5, priceCents: 5 })).success, true);
});

test('a purchase shows what was paid, what refunds took back and what they could not', () => {
  const view = presentPurchase({
    paymentIntent: 'pi_1',
    sessionId: 'cs_1',
    accountId: 'acc_1',
    walletId: 'wal_1',
    packId: 'tokens-10k',
    tokens: 10000,
    amountCents: 100000,
    currency: 'eur',
    entryId: '12',
    reclaimedTokens: 4000,
    shortfallMicros: 1_500_000n,
    receiptUrl: null,
    createdAt: T0,
  });
  assert.deepEqual(view, {
    payment_id: 'pi_1',
    checkout_session: 'cs_1',
    pack: 'tokens-10k',
    tokens: 10000,
    amount: '1000.00',
    currency: 'eur',
    purchased_at: '2026-11-21T15:00:00.000Z',
    ledger_entry_id: '12',
    refunded_tokens: 4000,
    not_recovered: '1.5',
    receipt_url: null,
  });
  assert.deepEqual(purchaseOut.parse(view), view);
});

test('a token request shows its status, and when and how it was settled', () => {
  const open = {
    id: 'treq_1',
    accountId: 'acc_1',
    walletId: 'wal_1',
    packId: 'tokens-1k',
    tokens: 1000,
    note: 'for the demo',
    status: 'open' as const,
    reason: null,
    createdAt: T0,
    settledAt: null,
    entryId: null,
  };
  assert.deepEqual(presentTokenRequest(open), {
    id: 'treq_1',
    account_id: 'acc_1',
    pack: 'tokens-1k',
    tokens: 1000,
    note: 'for the demo',
    status: 'open',
    reason: null,
    requested_at: '2026-11-21T15:00:00.000Z',
    settled_at: null,
    ledger_entry_id: null,
  });
  const credited = presentTokenRequest({
    ...open,
    status: 'credited',
    settledAt: T0 + 60_000,
    entryId: '13',
  });
  assert.equal(credited.settled_at, '2026-11-21T15:01:00.000Z');
  assert.equal(credited.ledger_entry_id, '13');
  assert.deepEqual(tokenRequestOut.parse(credited), credited);
});
