import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  Billing,
  BUY_PATH,
  type CheckoutRequest,
  type PaymentEvent,
  type Payments,
} from '../../src/domain/billing.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { account, appError, caller, memoryStore, serviceConfig, T0 } from './support.ts';

/** The Payments port without Stripe: an event is its JSON body, signed by the word "good". */
function payments(): Payments & { checkouts: CheckoutRequest[] } {
  const checkouts: CheckoutRequest[] = [];
  return {
    checkouts,
    createCheckout: async (request) => {
      checkouts.push(request);
      return { id: 'cs_1', url: 'https://checkout.example/cs_1' };
    },
    readEvent: (rawBody, signature) => {
      if (signature !== 'good') throw new Error('bad signature');
      return JSON.parse(rawBody) as PaymentEvent;
    },
    receiptUrl: async (paymentIntent) => `https://receipts.example/${paymentIntent}`,
  };
}

const config = serviceConfig();
let store: SqliteStore;
let stripe: ReturnType<typeof payments>;
let live: Billing;
let offline: Billing;
const buyer = caller('session', {
  account: account({ id: 'acc_b', walletId: 'wal_b', email: 'b@example.com' }),
});

before(async () => {
  store = await memoryStore();
  await store.createAccount(
    {
      id: 'acc_b',
      email: 'b@example.com',
      passwordHash: null,
      walletId: 'wal_b',
      createdAt: T0,
      publicTestStartedAt: null,
    },
    '2026-11',
  );
  stripe = payments();
  live = new Billing({ store, config, payments: stripe, now: () => T0 });
  offline = new Billing({ store, config, payments: null, now: () => T0 });
});
after(() => store.close());

const balance = async () => (await store.getWallet('wal_b'))?.balanceMicros;
const paid = {
  type: 'paid',
  sessionId: 'cs_1',
  paymentIntent: 'pi_1',
  accountId: 'acc_b',
  walletId: 'wal_b',
  packId: 'tokens-1k',
  tokens: 1000,
  amountCents: 10000,
  currency: 'eur',
  receiptUrl: null,
};

test('packs are priced at 0.1 EUR a token, in cents', () => {
  assert.equal(BUY_PATH, '/terminal/wallet#buy');
  assert.deepEqual(live.packs(), [
    { id: 'tokens-1k', tokens: 1000, priceCents: 10000 },
    { id: 'tokens-10k', tokens: 10000, priceCents: 100000 },
    { id: 'tokens-100k', tokens: 100000, priceCents: 1000000 },
  ]);
  assert.equal(live.live, true);
  assert.equal(offline.live, false);
});

test('checkout asks the provider for the pack and the way back; errors are exact', async () => {
  const session = await live.checkout(buyer, 'tokens-10k', 'https://tmd.example/terminal/wallet');
  assert.deepEqual(session, { id: 'cs_1', url: 'https://checkout.example/cs_1' });
  assert.deepEqual(stripe.checkouts.at(-1), {
    pack: { id: 'tokens-10k', tokens: 10000, priceCents: 100000 },
    currency: 'eur',
    accountId: 'acc_b',
    walletId: 'wal_b',
    email: 'b@example.com',
    successUrl: 'https://tmd.example/terminal/wallet?purchase=done&session={CHECKOUT_SESSION_ID}',
    cancelUrl: 'https://tmd.example/terminal/wallet?purchase=cancelled',
  });
  await assert.rejects(live.checkout(buyer, 'tokens-5', '/'), appError('not_found', 404));
  await assert.rejects(live.checkout(caller('sandbox'), 'tokens-1k', '/'), appError('forbidden', 403));
  await assert.rejects(offline.checkout(buyer, 'tokens-1k', '/'), appError('not_live', 501));
});

test('a paid event credits the wallet once, with the receipt; a bad signature is refused', async () => {
  const body = JSON.stringify(paid);
  await assert.rejects(live.webhook(body, 'forged'), appError('invalid_signature'));
  assert.deepEqual(await live.webhook(body, 'good'), { applied: 'credited 1000 tokens' });
  assert.deepEqual(await live.webhook(body, 'good'), { applied: 'already credited' });
  assert.equal(await balance(), 1_000_000_000n);
  const [purchase] = await live.purchases(buyer);
  assert.equal(purchase?.receiptUrl, 'https://receipts.example/pi_1');
  assert.equal(purchase?.tokens, 1000);
  assert.deepEqual(
    await live.webhook(JSON.stringify({ type: 'ignored', eventType: 'charge.updated' }), 'good'),
    {
      applied: 'ignored charge.updated',
    },
  );
  await assert.rejects(offline.webhook(body, 'good'), appError('not_found'));
});

test('refunds take back the tokens they cover, once, and never below zero', async () => {
  const refund = (refundedCents: number, paymentIntent = 'pi_1') =>
    live.webhook(
      JSON.stringify({
        type: 'refunded',
        paymentIntent,
        chargeId: 'ch_1',
        amountCents: 10000,
        refundedCents,
      }),
      'good',
    );
  await assert.rejects(refund(100, 'pi_unknown'), appError('conflict', 409));
  assert.deepEqual(await refund(2550), { applied: 'took back 255 tokens' });
  assert.deepEqual(await refund(2550), { applied: 'nothing more to take back' });
  assert.equal(await balance(), 745_000_000n);
  await store.debit({
    walletId: 'wal_b',
    amountMicros: 700_000_000n,
    month: '2026-11',
    usage: {
      requestId: 'req_b',
      keyId: null,
      accountId: 'acc_b',
      walletId: 'wal_b',
      dataset: 'equities/stock-prices',
      channel: 'rest',
      listCostMicros: 700_000_000n,
      costMicros: 700_000_000n,
      burnedMicros: 700_000_000n,
      outcome: 'charged',
      rows: 1,
      at: T0,
    },
  });
  assert.deepEqual(await refund(10000), {
    applied: 'took back 45 tokens (the wallet lacked 700000000 micro-tokens)',
  });
  assert.equal(await balance(), 0n);
  const [purchase] = await live.purchases(buyer);
  assert.deepEqual([purchase?.reclaimedTokens, purchase?.shortfallMicros], [1000, 700_000_000n]);
});

test('without a card: tokens are requested, then credited once or declined, by an operator', async () => {
  const request = await offline.requestTokens(buyer, 'tokens-1k', 'for a demo');
  assert.deepEqual(
    { ...request, id: 'id' },
    {
      id: 'id',
      accountId: 'acc_b',
      walletId: 'wal_b',
      packId: 'tokens-1k',
      tokens: 1000,
      note: 'for a demo',
      status: 'open',
      reason: null,
      createdAt: T0,
      settledAt: null,
      entryId: null,
    },
  );
  assert.match(request.id, /^treq_/);
  assert.deepEqual(
    (await offline.openRequests()).map((r) => r.id),
    [request.id],
  );
  const credited = await offline.settle(request.id, { credit: true, actor: 'ops' });
  assert.equal(credited.status, 'credited');
  assert.equal(await balance(), 1_000_000_000n);
  await assert.rejects(
    offline.settle(request.id, { credit: false, reason: 'late' }),
    appError('conflict', 409),
  );
  await assert.rejects(
    offline.settle('treq_none', { credit: true, actor: 'ops' }),
    appError('not_found', 404),
  );
  const declined = await offline.settle((await offline.requestTokens(buyer, 'tokens-1k', null)).id, {
    credit: false,
    reason: 'no budget',
  });
  assert.deepEqual([declined.status, declined.reason, declined.entryId], ['declined', 'no budget', null]);
  assert.equal(await balance(), 1_000_000_000n);
  assert.equal((await offline.myRequests(buyer)).length, 2);
});

test('at most 5 open requests an account: the sixth is 409 conflict', async () => {
  for (let i = 0; i < 5; i++) await offline.requestTokens(buyer, 'tokens-1k', null);
  await assert.rejects(offline.requestTokens(buyer, 'tokens-1k', null), appError('conflict', 409));
  await assert.rejects(offline.requestTokens(caller('sandbox'), 'tokens-1k', null), appError('forbidden'));
});
