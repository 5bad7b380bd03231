/**
 * Buying tokens, on both stores: a Stripe Checkout session created through the official SDK against a
 * local server that answers with Stripe's own example objects (test/fixtures/stripe/), webhooks signed
 * with the SDK's test header: the wallet is credited once per payment (repeats, 64 concurrent
 * deliveries), forged, unsigned and stale deliveries change nothing, a refund takes back what it covers
 * and records what the wallet had spent; without Stripe, token requests an operator settles. The
 * ledger audit holds after each.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Stripe from 'stripe';
import { runCli } from '../src/tmd.ts';
import { freshDatabase, type TestDatabase } from './helpers/backends.ts';
import {
  assertLedgerBalanced,
  bearer,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'stripe');
const fixture = (name: string) => JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'));
const SECRET = 'whsec_test_secret_for_billing_tests';
const ADMIN = { authorization: 'Bearer admin-token-for-tests-0123456789' };
const signer = new Stripe('sk_test_signer');

/** Sessions the local Stripe created, by id, with what the service asked for. */
const sessions = new Map<string, Record<string, unknown>>();
let sessionCount = 0;
const stripeApi = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    if (request.method === 'POST' && request.url === '/v1/checkout/sessions') {
      const form = new URLSearchParams(body);
      const metadata: Record<string, string> = {};
      for (const [name, value] of form) {
        const m = /^metadata\[(.+)\]$/.exec(name);
        if (m?.[1]) metadata[m[1]] = value;
      }
      const session = fixture('checkout-session');
      sessionCount++;
      session.id = `cs_test_${sessionCount}`;
      session.url = `https://checkout.stripe.com/c/pay/${session.id}`;
      session.payment_intent = `pi_test_${sessionCount}`;
      session.metadata = metadata;
      session.client_reference_id = form.get('client_reference_id');
      session.amount_total = Number(form.get('line_items[0][price_data][unit_amount]'));
      session.currency = form.get('line_items[0][price_data][currency]');
      session.success_url = form.get('success_url');
      sessions.set(session.id, session);
      response.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_test' });
      response.end(JSON.stringify(session));
      return;
    }
    const intent = /^\/v1\/payment_intents\/([^?]+)/.exec(request.url ?? '');
    if (request.method === 'GET' && intent?.[1]) {
      // The payment with its charge expanded (expand[]=latest_charge), as Stripe answers it.
      const charge = { ...fixture('charge'), payment_intent: intent[1] };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ...fixture('payment-intent'), id: intent[1], latest_charge: charge }));
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end('{"error":{"type":"invalid_request_error","message":"not in this test"}}');
  });
});
let stripeUrl = '';
before(async () => {
  await new Promise<void>((resolve) => stripeApi.listen(0, '127.0.0.1', resolve));
  stripeUrl = `http://127.0.0.1:${(stripeApi.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => stripeApi.close(() => resolve())));

/** An event of `type` around `object`, as Stripe sends it (the fixture's envelope). */
function event(
  type: string,
  object: Record<string, unknown>,
  id = `evt_${Math.random().toString(36).slice(2)}`,
) {
  return JSON.stringify({ ...fixture('event'), id, type, data: { object } });
}

function deliver(
  server: TestServer,
  payload: string,
  signature = signer.webhooks.generateTestHeaderString({ payload, secret: SECRET }),
) {
  return server.request('POST', '/api/v1/billing/stripe/webhook', {
    raw: payload,
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
  });
}

async function balance(server: TestServer, key: string): Promise<string> {
  return (await server.request('GET', '/api/v1/me', { headers: bearer(key) })).json.wallet.balance;
}

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`${backend}: a pack bought through Stripe Checkout is credited once; a refund takes back what it covers`, async (t) => {
    let db: TestDatabase | null = null;
    if (backend === 'postgres') {
      const made = await freshDatabase();
      if ('skip' in made) return t.skip(made.skip);
      db = made;
    }
    const server = await startServer({
      env: {
        STRIPE_SECRET_KEY: 'sk_test_billing',
        STRIPE_WEBHOOK_SECRET: SECRET,
        STRIPE_API_URL: stripeUrl,
        ...(db ? { DATABASE_URL: db.url } : {}),
      },
    });
    try {
      const packs = await server.request('GET', '/api/v1/billing/token-packs');
      assert.deepEqual(packs.json.data[0], { id: 'tokens-1k', tokens: 1000, price_eur: '100.00' });
      assert.equal(packs.json.meta.card_payments, true);
      const { key, account } = await walletAccount(server, 10);
      const checkout = await server.request('POST', '/api/v1/billing/token-packs/tokens-1k/checkout', {
        headers: bearer(key),
      });
      assert.equal(checkout.status, 201, checkout.text);
      assert.match(checkout.json.url, /^https:\/\/checkout\.stripe\.com\//);
      const session = sessions.get(checkout.json.id) as Record<string, unknown>;
      assert.deepEqual(session.metadata, {
        account_id: account.id,
        wallet_id: account.walletId,
        pack_id: 'tokens-1k',
        tokens: '1000',
      });
      assert.equal(session.amount_total, 10_000, '1,000 tokens at 0.10 EUR: 100.00 EUR in cents');
      assert.equal(session.currency, 'eur');
      assert.equal(await balance(server, key), '10', 'nothing credited before Stripe confirms');

      // Forged, unsigned, stale: refused, nothing credited.
      const paid = event('checkout.session.completed', {
        ...session,
        payment_status: 'paid',
        status: 'complete',
      });
      const forged = await deliver(
        server,
        paid,
        signer.webhooks.generateTestHeaderString({ payload: paid, secret: 'whsec_someone_else' }),
      );
      assert.deepEqual([forged.status, forged.json.code], [400, 'invalid_signature']);
      assert.equal((await deliver(server, paid, '')).status, 400);
      const stale = await deliver(
        server,
        paid,
        signer.webhooks.generateTestHeaderString({
          payload: paid,
          secret: SECRET,
          timestamp: Math.floor(Date.now() / 1000) - 600,
        }),
      );
      assert.equal(stale.status, 400, 'a delivery older than 5 minutes');
      assert.equal(await balance(server, key), '10');

      // Delivered 64 times at once: one credit, of kind purchase, carrying the session and payment.
      const answers = await Promise.all(Array.from({ length: 64 }, () => deliver(server, paid)));
      assert.ok(
        answers.every((a) => a.status === 200),
        JSON.stringify(answers.find((a) => a.status !== 200)?.json),
      );
      assert.equal(answers.filter((a) => a.json.applied === 'credited 1000 tokens').length, 1);
      assert.equal(await balance(server, key), '1010');
      const entries = (await server.deps.store.listEntries(account.walletId)).filter(
        (e) => e.kind === 'purchase',
      );
      assert.equal(entries.length, 1);
      assert.match(entries[0]?.memo ?? '', new RegExp(`${session.id}.*${session.payment_intent}`));
      const purchases = await server.request('GET', '/api/v1/me/purchases', { headers: bearer(key) });
      assert.deepEqual(
        [
          purchases.json.data[0].tokens,
          purchases.json.data[0].amount,
          purchases.json.data[0].checkout_session,
        ],
        [1000, '100.00', session.id],
      );
      await assertLedgerBalanced(server);

      // A refund of a payment this service never saw (events out of order): Stripe is asked to retry.
      const charge = fixture('charge');
      const unknown = await deliver(
        server,
        event('charge.refunded', {
          ...charge,
          payment_intent: 'pi_not_yet',
          amount: 10_000,
          amount_refunded: 10_000,
        }),
      );
      assert.equal(unknown.status, 409);

      // Half refunded: 500 tokens back. The wallet then spends all but 200; the rest refunded: 200
      // taken back, 300 recorded as not recovered, the balance never below zero.
      const half = event('charge.refunded', {
        ...charge,
        payment_intent: session.payment_intent,
        amount: 10_000,
        amount_refunded: 5_000,
        refunded: false,
      });
      assert.equal((await deliver(server, half)).json.applied, 'took back 500 tokens');
      assert.equal((await deliver(server, half)).json.applied, 'nothing more to take back');
      assert.equal(await balance(server, key), '510');
      await server.deps.store.debit({
        walletId: account.walletId,
        amountMicros: 310_000_000n,
        month: '2026-11',
        usage: {
          requestId: 'req_spend',
          keyId: null,
          accountId: account.id,
          walletId: account.walletId,
          dataset: 'equities/stock-prices',
          channel: 'rest',
          listCostMicros: 310_000_000n,
          costMicros: 310_000_000n,
          burnedMicros: 310_000_000n,
          outcome: 'charged',
          rows: 1,
          at: Date.now(),
        },
      });
      const whole = event('charge.refunded', {
        ...charge,
        payment_intent: session.payment_intent,
        amount: 10_000,
        amount_refunded: 10_000,
        refunded: true,
      });
      assert.match(
        (await deliver(server, whole)).json.applied,
        /took back 200 tokens \(the wallet lacked 300000000 micro-tokens\)/,
      );
      assert.equal(await balance(server, key), '0');
      const after = await server.request('GET', '/api/v1/me/purchases', { headers: bearer(key) });
      assert.deepEqual([after.json.data[0].refunded_tokens, after.json.data[0].not_recovered], [1000, '300']);
      const kinds = (await server.deps.store.listEntries(account.walletId)).map((e) => e.kind);
      assert.equal(kinds.filter((k) => k === 'purchase_refund').length, 2);
      await assertLedgerBalanced(server);
    } finally {
      await server.close();
      await db?.drop();
    }
  });
}

test('without Stripe: checkout says so; tokens are requested, and an operator credits or declines', async () => {
  const server = await startServer();
  try {
    const { key, account } = await walletAccount(server, 1);
    assert.equal((await server.request('GET', '/api/v1/billing/token-packs')).json.meta.card_payments, false);
    const checkout = await server.request('POST', '/api/v1/billing/token-packs/tokens-1k/checkout', {
      headers: bearer(key),
    });
    assert.deepEqual([checkout.status, checkout.json.code], [501, 'not_live']);
    assert.match(checkout.json.detail, /request the tokens/);

    const asked = await server.request('POST', '/api/v1/billing/token-requests', {
      headers: bearer(key),
      body: { pack: 'tokens-10k', note: 'PO 4711' },
    });
    assert.equal(asked.status, 201, asked.text);
    assert.deepEqual([asked.json.status, asked.json.tokens, asked.json.note], ['open', 10_000, 'PO 4711']);
    const unknownPack = await server.request('POST', '/api/v1/billing/token-requests', {
      headers: bearer(key),
      body: { pack: 'tokens-7' },
    });
    assert.equal(unknownPack.status, 404);

    const open = await server.request('GET', '/api/v1/admin/token-requests', { headers: ADMIN });
    assert.deepEqual(
      open.json.data.map((r: { id: string }) => r.id),
      [asked.json.id],
    );
    const credited = await server.request('POST', `/api/v1/admin/token-requests/${asked.json.id}/credit`, {
      headers: ADMIN,
    });
    assert.deepEqual([credited.status, credited.json.status], [200, 'credited']);
    const again = await Promise.all(
      Array.from({ length: 8 }, () =>
        server.request('POST', `/api/v1/admin/token-requests/${asked.json.id}/credit`, { headers: ADMIN }),
      ),
    );
    assert.ok(
      again.every((a) => a.status === 409),
      'settled once',
    );
    assert.equal(await balance(server, key), '10001');

    server.clock.advance(60_000);
    const second = await server.request('POST', '/api/v1/billing/token-requests', {
      headers: bearer(key),
      body: { pack: 'tokens-100k' },
    });
    const declined = await server.request('POST', `/api/v1/admin/token-requests/${second.json.id}/decline`, {
      headers: ADMIN,
      body: { reason: 'Pay the open invoice first.' },
    });
    assert.equal(declined.json.status, 'declined');
    const mine = await server.request('GET', '/api/v1/me/token-requests', { headers: bearer(key) });
    assert.deepEqual(
      mine.json.data.map((r: { status: string; reason: string | null }) => [r.status, r.reason]),
      [
        ['declined', 'Pay the open invoice first.'],
        ['credited', null],
      ],
    );
    // The same by `tmd`: a third request credited from the command line.
    server.clock.advance(60_000);
    const third = await server.request('POST', '/api/v1/billing/token-requests', {
      headers: bearer(key),
      body: { pack: 'tokens-1k' },
    });
    const cli = async (argv: string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await runCli([...argv, '--json'], {
        env: {
          DATABASE_URL: join(server.dir, 'tmd.sqlite'),
          DATA_DIR: server.dir,
          JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
          LOG_LEVEL: 'silent',
        },
        stdout: (t) => {
          stdout += t;
        },
        stderr: (t) => {
          stderr += t;
        },
      });
      return { code, stdout, stderr };
    };
    const listed = await cli(['token-requests']);
    assert.deepEqual(
      JSON.parse(listed.stdout).data.map((r: { id: string }) => r.id),
      [third.json.id],
    );
    const byCli = await cli(['token-requests', 'credit', third.json.id]);
    assert.equal(JSON.parse(byCli.stdout).status, 'credited', byCli.stderr);
    const twice = await cli(['token-requests', 'credit', third.json.id]);
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /conflict: Token request .* is credited already/);
    assert.equal(await balance(server, key), '11001');
    const topups = (await server.deps.store.listEntries(account.walletId)).filter(
      (e) => e.idempotencyKey === `token-request:${asked.json.id}`,
    );
    assert.equal(topups.length, 1);
    await assertLedgerBalanced(server);
  } finally {
    await server.close();
  }
});

test('a read the wallet cannot pay for is refused with where to buy tokens', async () => {
  const server = await startServer();
  try {
    const { key } = await walletAccount(server, 0);
    const refused = await server.request('GET', '/api/v1/data/equities/stock-prices?limit=1', {
      headers: bearer(key),
    });
    assert.deepEqual(
      [refused.status, refused.json.code, refused.json.buy_url],
      [402, 'insufficient_tokens', '/terminal/wallet#buy'],
    );
  } finally {
    await server.close();
  }
});
