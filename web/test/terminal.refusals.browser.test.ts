/**
 * The Terminal's refusals, each reached through the real service: 402 insufficient_tokens, 402
 * not_entitled, 429 with a countdown from Retry-After, 503 with a way to try again. Each shows the
 * problem's title and detail and what to do, and nothing is charged.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { publicTestKey, startServer, type TestServer, walletAccount } from '../../test/helpers/server.ts';
import {
  assertAccessible,
  type BrowserSession,
  browserSkipReason,
  buildTerminal,
  launch,
  screenshot,
  signIn,
} from './browser.ts';

const skip = browserSkipReason();
const DATASET = 'analytics/features';

/** What the refusals' steps share: the service and the browser. */
interface World {
  server: TestServer;
  browser: BrowserSession;
  page: Page;
}

const w = {} as World;

describe('the Terminal shows every refusal of a read, with what to do', { skip }, () => {
  before(async () => {
    buildTerminal();
    w.server = await startServer({ listen: true });
    w.browser = await launch();
    w.page = w.browser.page;
  });

  after(async () => {
    await w.browser?.close();
    await w.server?.close();
  });

  test('402 insufficient_tokens: foretold by the price, the read not offered, tokens requested', () =>
    insufficientForetold(w));
  test('402 insufficient_tokens when the wallet was spent meanwhile: the refusal links to the buy section', () =>
    insufficientSpentMeanwhile(w));
  test('402 not_entitled: a public-test key pasted for a paid dataset', () => notEntitledKey(w));
  test('429: a countdown from Retry-After, and Try again waits for it', () => rateLimited(w));
  test('503: the ledger cannot be written, nothing is served or charged; trying again works', () =>
    ledgerUnavailable(w));
});

async function insufficientForetold(w: World): Promise<void> {
  const { server, page } = w;
  const { email, password, account } = await walletAccount(server, 1);
  await signIn(page, server.url, email, password, `/dataset/${DATASET}`);
  await page.getByText('would be refused: insufficient_tokens').waitFor();
  assert.ok(await page.getByRole('button', { name: /^Read/ }).isDisabled(), 'a read that would be refused');
  await screenshot(page, '08-refused-402');
  await page.getByTestId('buy-link').click();
  await page.waitForURL(/\/terminal\/wallet#buy$/);
  // No card payments on this service: a pack is requested, and an operator credits it.
  await page.getByRole('button', { name: 'Request 1,000 tokens' }).click();
  await page.getByTestId('token-requests').getByText('open').waitFor();
  const [open] = await server.deps.billing.openRequests();
  assert.equal(open?.accountId, account.id);
  await server.deps.billing.settle(open?.id as string, { credit: true, actor: 'test' });
  await page.reload();
  await page.getByTestId('token-requests').getByText('credited').waitFor();
  assert.equal(await page.getByTestId('wallet-balance').textContent(), '1001 tokens');
  await assertAccessible(page, 'wallet, tokens requested');
}

async function insufficientSpentMeanwhile(w: World): Promise<void> {
  const { server, page } = w;
  const { email, password, account } = await walletAccount(server, 3);
  await page.context().clearCookies();
  await signIn(page, server.url, email, password, `/dataset/${DATASET}`);
  await page.getByTestId('estimate-cost').waitFor();
  // Spent from another client after the price was shown.
  await server.deps.store.debit({
    walletId: account.walletId,
    amountMicros: 2_500_000n,
    month: '2026-11',
    usage: {
      requestId: 'req_elsewhere',
      keyId: null,
      accountId: account.id,
      walletId: account.walletId,
      dataset: DATASET,
      channel: 'rest',
      listCostMicros: 2_500_000n,
      costMicros: 2_500_000n,
      burnedMicros: 2_500_000n,
      outcome: 'charged',
      rows: 1,
      at: Date.now(),
    },
  });
  await page.getByRole('button', { name: /^Read/ }).click();
  const alert = page.getByRole('alert').filter({ hasText: 'insufficient_tokens' });
  await alert.waitFor();
  const text = (await alert.textContent()) ?? '';
  assert.match(text, /402/);
  assert.match(text, /This read costs 2\.7 tokens and the wallet holds 0\.5/);
  assert.match(text, /What to do:.*Buy tokens on the Wallet page/);
  assert.equal(
    await alert.getByRole('link', { name: 'Buy tokens' }).getAttribute('href'),
    '/terminal/wallet#buy',
  );
  assert.equal(
    (await server.deps.store.getWallet(account.walletId))?.balanceMicros,
    500_000n,
    'nothing charged',
  );
  await assertAccessible(page, 'refusal 402');
}

async function notEntitledKey(w: World): Promise<void> {
  const { server, page } = w;
  const { key } = await publicTestKey(server);
  await page.getByLabel('An API key (API price)').check();
  await page.getByLabel('API key (kept in this page only)').fill(key);
  await page.getByText('would be refused: not_entitled').waitFor();
  assert.ok(await page.getByRole('button', { name: /^Read/ }).isDisabled(), 'a read that would be refused');
}

async function rateLimited(w: World): Promise<void> {
  const { server, page } = w;
  const { email, password } = await walletAccount(server, 100);
  await page.context().clearCookies();
  await signIn(page, server.url, email, password, `/dataset/${DATASET}`);
  await page.getByTestId('estimate-cost').waitFor();
  // Spend the minute's allowance on free requests, from the page itself.
  const spent = await page.evaluate(async () => {
    for (let i = 0; i < 500; i++) {
      if ((await fetch('/api/v1/me')).status === 429) return i;
    }
    return -1;
  });
  assert.ok(spent > 0, 'the per-minute limit was reached');
  try {
    await page.getByRole('button', { name: /^Read/ }).click();
    const alert = page.getByRole('alert').filter({ hasText: '429' });
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /rate_limited.*What to do:.*wait for the countdown/s);
    const first = Number(await page.getByTestId('countdown').textContent());
    assert.ok(first > 0 && first <= 60, `countdown ${first}`);
    assert.ok(await page.getByRole('button', { name: 'Try again' }).isDisabled());
    await page.waitForFunction(
      (start) => Number(document.querySelector('[data-testid=countdown]')?.textContent) < start,
      first,
      { timeout: 5000 },
    );
    await screenshot(page, '09-refused-429');
  } finally {
    // The next test starts in a fresh minute.
    server.clock.advance(61_000);
  }
}

async function ledgerUnavailable(w: World): Promise<void> {
  const { server, page } = w;
  await page.goto(`${server.url}/terminal/dataset/${DATASET}`);
  await page.getByTestId('estimate-cost').waitFor();
  // Another writer holds the database (as `tmd import` can): the debit waits out busy_timeout, then 503.
  const holder = new DatabaseSync(join(server.dir, 'tmd.sqlite'));
  holder.exec('BEGIN EXCLUSIVE');
  try {
    await page.getByRole('button', { name: /^Read/ }).click();
    const alert = page.getByRole('alert').filter({ hasText: '503' });
    await alert.waitFor({ timeout: 20_000 });
    assert.match((await alert.textContent()) ?? '', /What to do:.*Nothing was charged: try again/s);
    await screenshot(page, '10-refused-503');
  } finally {
    holder.exec('ROLLBACK');
    holder.close();
  }
  await page.getByRole('button', { name: 'Try again' }).click();
  await page.getByTestId('cost-charged').waitFor();
  assert.equal(await page.getByRole('alert').count(), 0);
}
