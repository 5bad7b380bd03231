/**
 * Every page of the Terminal at a laptop's width (1366 px) and a phone's (390 px): no horizontal page
 * scroll, everything the header offers reachable (on a phone through its menu), axe clean at both.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { operatorAccount } from '../../test/helpers/operator.ts';
import { startServer, type TestServer } from '../../test/helpers/server.ts';
import {
  assertAccessible,
  type BrowserSession,
  browserSkipReason,
  buildTerminal,
  launch,
  screenshot,
} from './browser.ts';

const skip = browserSkipReason();

const widths = [
  { name: 'laptop', width: 1366, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/** The pages a signed-in user reaches, and what shows each has drawn. */
const pages = [
  { path: '/explorer', ready: (p: Page) => p.getByRole('heading', { name: 'Explorer' }).waitFor() },
  {
    path: '/dataset/equities/stock-prices',
    ready: (p: Page) =>
      p
        .getByRole('heading', { name: /stock-prices|Stock prices/i })
        .first()
        .waitFor(),
  },
  { path: '/wallet', ready: (p: Page) => p.getByRole('heading', { name: 'Wallet and usage' }).waitFor() },
  { path: '/keys', ready: (p: Page) => p.getByRole('heading', { name: 'Keys' }).waitFor() },
  { path: '/analyze', ready: (p: Page) => p.getByRole('heading', { name: /^Composer/ }).waitFor() },
  { path: '/packages', ready: (p: Page) => p.getByRole('heading', { name: 'Packages' }).waitFor() },
];

async function assertNoHorizontalScroll(page: Page, where: string): Promise<void> {
  const { scroll, inner } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    inner: window.innerWidth,
  }));
  assert.ok(scroll <= inner, `${where}: the page is ${scroll} px wide in a ${inner} px window`);
}

describe('the Terminal at a laptop and a phone width', { skip }, () => {
  let server: TestServer;
  let browser: BrowserSession;
  let account: Awaited<ReturnType<typeof operatorAccount>>;

  before(async () => {
    buildTerminal();
    // Two passes over every page in a minute: more requests than a Recruit's 60 a minute.
    server = await startServer({
      listen: true,
      config: (config) => {
        for (const tier of config.pricing.loyalty_tiers) tier.rate_limit = 10_000;
      },
    });
    // The Workbench package, so the Analyze page shows its composer, not the notice.
    account = await operatorAccount(server, { tokens: 1000, pkg: 'workbench' });
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  for (const size of widths) {
    test(`${size.name} (${size.width} px): signed out, then every page signed in`, async () => {
      const { page, context } = browser;
      await context.clearCookies();
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.goto(`${server.url}/terminal/`);
      await page.getByRole('heading', { name: /paid by the read/ }).waitFor();
      await page.waitForLoadState('networkidle');
      await assertNoHorizontalScroll(page, `${size.name} landing`);
      await assertAccessible(page, `${size.name} landing`);
      await screenshot(page, `layout-${size.name}-landing`);
      await page.goto(`${server.url}/terminal/sign-in`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await assertNoHorizontalScroll(page, `${size.name} sign-in`);
      await assertAccessible(page, `${size.name} sign-in`);

      await page.getByLabel('Email').fill(account.email);
      await page.getByLabel('Password').fill(account.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(/\/terminal\/explorer/);
      for (const { path, ready } of pages) {
        await page.goto(`${server.url}/terminal${path}`);
        await ready(page);
        await page.waitForLoadState('networkidle');
        const where = `${size.name} ${path}`;
        await assertNoHorizontalScroll(page, where);
        await assertAccessible(page, where);
        await screenshot(page, `layout-${size.name}${path.replaceAll('/', '-')}`);
      }

      // A paid read from the dataset page: the cost tiles and the chart fit the window too.
      await page.goto(`${server.url}/terminal/dataset/equities/stock-prices`);
      await page.getByTestId('estimate-cost').waitFor();
      // A wallet pays for open data: the badge says open data, not free.
      await page.getByRole('heading', { level: 1 }).getByText('open data (P0)').waitFor();
      await page.getByLabel('symbol (comma-separated)').fill('AAPL,MSFT');
      await page.getByLabel('Rows per page').press('Enter');
      assert.equal(
        await page.getByTestId('cost-charged').textContent(),
        await page.getByTestId('estimate-cost').textContent(),
      );
      await page
        .getByRole('figure', { name: /one line per entity/ })
        .locator('[data-drawn=true] canvas')
        .waitFor();
      await assertNoHorizontalScroll(page, `${size.name} dataset after a read`);
      await screenshot(page, `layout-${size.name}-read`);

      // What the header offers is reachable: on a phone, behind its menu button.
      await page.goto(`${server.url}/terminal/explorer`);
      const nav = page.getByRole('navigation', { name: 'Main' });
      if (size.name === 'phone') {
        const menu = page.getByRole('button', { name: 'Menu' });
        assert.equal(await menu.getAttribute('aria-expanded'), 'false');
        await menu.click();
        assert.equal(await menu.getAttribute('aria-expanded'), 'true');
      }
      assert.equal(await nav.getByRole('link', { name: 'Manual' }).getAttribute('href'), '/manual/');
      assert.equal(await nav.getByRole('link', { name: 'API', exact: true }).getAttribute('href'), '/docs');
      await nav.getByRole('link', { name: 'Wallet' }).click();
      await page.waitForURL(/\/terminal\/wallet/);
      if (size.name === 'phone') await page.getByRole('button', { name: 'Menu' }).click();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/terminal\/(sign-in|$)/);
    });
  }
});
