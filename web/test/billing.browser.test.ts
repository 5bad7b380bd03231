/**
 * Buying tokens in the Terminal, through the whole path: the Wallet's Buy button, a Checkout Session
 * created by the official SDK at a local Stripe (answering with Stripe's example object), its payment
 * page sending the signed checkout.session.completed to the service and the buyer back, the balance
 * and the purchase shown, the ledger audit clean.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import {
  assertLedgerBalanced,
  startServer,
  type TestServer,
  walletAccount,
} from '../../test/helpers/server.ts';
import {
  assertAccessible,
  type BrowserSession,
  browserSkipReason,
  buildTerminal,
  launch,
  screenshot,
} from './browser.ts';

const skip = browserSkipReason();
const SECRET = 'whsec_browser_billing_secret';
const signer = new Stripe('sk_test_signer');
const fixture = JSON.parse(
  readFileSync(
    join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'stripe', 'checkout-session.json'),
    'utf8',
  ),
);

describe('buying tokens in the Terminal with Stripe Checkout', { skip }, () => {
  let server: TestServer;
  let browser: BrowserSession;
  const sessions = new Map<string, Record<string, unknown>>();
  let mockUrl = '';
  // Stripe's API and its payment page, in one local server.
  const mock = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', async () => {
      if (request.method === 'POST' && request.url === '/v1/checkout/sessions') {
        const form = new URLSearchParams(body);
        const metadata: Record<string, string> = {};
        for (const [name, value] of form) {
          const m = /^metadata\[(.+)\]$/.exec(name);
          if (m?.[1]) metadata[m[1]] = value;
        }
        const id = `cs_test_browser_${sessions.size + 1}`;
        const session = {
          ...fixture,
          id,
          url: `${mockUrl}/pay/${id}`,
          metadata,
          payment_intent: `pi_test_browser_${sessions.size + 1}`,
          amount_total: Number(form.get('line_items[0][price_data][unit_amount]')),
          currency: form.get('line_items[0][price_data][currency]'),
          success_url: form.get('success_url'),
        };
        sessions.set(id, session);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(session));
        return;
      }
      const paying = /^\/pay\/(.+)$/.exec(request.url ?? '');
      const session = paying?.[1] ? sessions.get(paying[1]) : undefined;
      if (session) {
        // The buyer paid: Stripe tells the service, then sends the buyer back.
        const payload = JSON.stringify({
          id: `evt_${session.id}`,
          object: 'event',
          type: 'checkout.session.completed',
          data: { object: { ...session, payment_status: 'paid', status: 'complete' } },
        });
        await fetch(`${server.url}/api/v1/billing/stripe/webhook`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'stripe-signature': signer.webhooks.generateTestHeaderString({ payload, secret: SECRET }),
          },
          body: payload,
        });
        const back = String(session.success_url).replace('{CHECKOUT_SESSION_ID}', String(session.id));
        response.writeHead(303, { location: back });
        response.end();
        return;
      }
      response.writeHead(404);
      response.end();
    });
  });

  before(async () => {
    buildTerminal();
    await new Promise<void>((resolve) => mock.listen(0, '127.0.0.1', resolve));
    mockUrl = `http://127.0.0.1:${(mock.address() as AddressInfo).port}`;
    server = await startServer({
      listen: true,
      env: { STRIPE_SECRET_KEY: 'sk_test_browser', STRIPE_WEBHOOK_SECRET: SECRET, STRIPE_API_URL: mockUrl },
    });
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await new Promise<void>((resolve) => mock.close(() => resolve()));
  });

  test('Buy, pay on the payment page, back on the Wallet with the tokens and the purchase', async () => {
    const { page } = browser;
    const { email, password, account } = await walletAccount(server, 1);
    await page.goto(`${server.url}/terminal/sign-in?next=${encodeURIComponent('/wallet')}`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(/\/terminal\/wallet$/);
    await page.getByRole('button', { name: 'Buy 1,000 tokens' }).click();
    await page.waitForURL(/\/terminal\/wallet\?purchase=done/);
    await page.getByRole('status').filter({ hasText: 'Payment received' }).waitFor();
    await page.getByTestId('purchases').getByText('1,000 tokens for 100.00 EUR').waitFor();
    assert.equal(await page.getByTestId('wallet-balance').textContent(), '1001 tokens');
    const purchases = (await server.deps.store.listEntries(account.walletId)).filter(
      (e) => e.kind === 'purchase',
    );
    assert.equal(purchases.length, 1);
    await assertAccessible(page, 'wallet after a purchase');
    await screenshot(page, '12-wallet-purchase');

    // A low-balance notice above the balance: the Wallet says so, with the way to buy.
    await page.getByLabel(/new threshold/).fill('2000');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('low-balance').waitFor();
    assert.match(
      (await page.getByTestId('low-balance').textContent()) ?? '',
      /below your low-balance notice \(2000 tokens\)/,
    );
    assert.equal((await server.deps.store.getAccount(account.id))?.lowBalanceMicros, 2_000_000_000n);
    await assertLedgerBalanced(server);
  });
});
