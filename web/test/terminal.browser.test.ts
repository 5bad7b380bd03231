/**
 * The Terminal in a real browser (Debian's Chromium) against the real service on a fresh SQLite file:
 * a new user's story from registration to signing out, told through the pages as a user sees them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { bearer, startServer, type TestServer } from '../../test/helpers/server.ts';
import {
  assertAccessible,
  type BrowserSession,
  browserSkipReason,
  buildTerminal,
  headerBalance,
  launch,
  micros,
  screenshot,
} from './browser.ts';

const skip = browserSkipReason();
const DATASET = 'analytics/features';
const XSS = '<img src=x onerror="window.__xss=1">';
/** An email-shaped probe (no spaces, so the page's own check lets it through to the server). */
const XSS_EMAIL = '<svg/onload=window.__xss=1>@example.com';

/** Exact: list × (100 − discount)/100 × 135/100, in micro-tokens (DECISIONS "Money"). */
function terminalPrice(listCost: number, discountPct: number): bigint {
  const numerator = BigInt(listCost) * 1_000_000n * BigInt(Math.round((100 - discountPct) * 100)) * 135n;
  const denominator = 10_000n * 100n;
  return (numerator + denominator / 2n) / denominator;
}

/** What the story's steps share: the service, the browser, and the user as registered. */
interface World {
  server: TestServer;
  browser: BrowserSession;
  page: Page;
  email: string;
  password: string;
  publicTestKey: string;
  accountId: string;
}

const w = {
  email: `analyst${Date.now()}@example.com`,
  password: 'a long enough password',
  publicTestKey: '',
  accountId: '',
} as World;

describe('the Terminal, a new user end to end', { skip }, () => {
  before(async () => {
    buildTerminal();
    w.server = await startServer({ listen: true });
    w.browser = await launch();
    w.page = w.browser.page;
    w.page.on('pageerror', (error) => assert.fail(`page error: ${error.message}`));
  });

  after(async () => {
    await w.browser?.close();
    await w.server?.close();
  });

  test('/ is the landing page: prices, free access, the catalog and the docs, with a strict CSP', () =>
    landing(w));
  test('a form refuses bad input before sending, and shows the server refusing what it checks', () =>
    formRefusesBadInput(w));
  test('registering creates the account, shows the public-test key once, and signs in', () => register(w));
  test('the explorer lists every dataset with list price, Terminal and key prices, P0 and data source', () =>
    explorerPrices(w));
  test('a priced read: the price shown before is the charge, and the balance falls by exactly that', () =>
    pricedRead(w));
  test('the chart has drawn one line per entity', () => chartDrawn(w));
  test('the CSV download is one more metered read, charged once', () => csvDownload(w));
  test('rows an importer controls render as text', () => importedRowsAsText(w));
  test("a stock's page says what it holds before the read, and charts the close", () => stockPage(w));
  test('a wallet key: created and shown once, used with plain HTTP, revoked, then refused', () =>
    walletKey(w));
  test('the wallet: the ledger entries sum to the balance; usage is charted by channel', () =>
    walletLedger(w));
  test('packages: the four shapes, yours, and what checkout answers today', () => packages(w));
  test('a 401 anywhere returns to sign-in, and back where the user was afterwards', () =>
    signInAgainAfter401(w));
  test('signing out ends the session: the API refuses it, and the pages ask to sign in', () => signOut(w));
});

async function landing(w: World): Promise<void> {
  const { server, page } = w;
  const response = await page.goto(`${server.url}/`);
  await page.waitForURL(/\/terminal\/$/);
  await page.getByRole('heading', { name: /paid by the read/ }).waitFor();
  await page.getByRole('heading', { name: /The catalog: \d+ datasets in \d+ domains/ }).waitFor();
  assert.match(
    (await page.getByRole('region', { name: 'What a read costs' }).textContent()) ?? '',
    /0\.10 EUR/,
  );
  assert.equal(await page.getByRole('link', { name: 'The manual' }).getAttribute('href'), '/manual/');
  assert.equal(await page.getByRole('link', { name: 'API reference' }).getAttribute('href'), '/docs');
  await assertAccessible(page, 'landing');
  await screenshot(page, '00-landing');
  await page.getByRole('link', { name: 'Sign in' }).first().click();
  await page.waitForURL(/\/terminal\/sign-in$/);
  const csp = (await response?.headerValue('content-security-policy')) ?? '';
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(await response?.headerValue('x-content-type-options'), 'nosniff');
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await assertAccessible(page, 'sign-in');
  await screenshot(page, '01-sign-in');
}

async function formRefusesBadInput(w: World): Promise<void> {
  const { page, password } = w;
  await page.getByRole('button', { name: 'Register for the public test' }).click();
  await page.getByLabel('Email').fill('not-an-email');
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Register and sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'Enter an email address' }).waitFor();
  // Markup in an email passes the page's loose check; the server refuses it, and its detail is text.
  await page.getByLabel('Email').fill(XSS_EMAIL);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Register and sign in' }).click();
  await page.getByRole('alert').filter({ hasText: '400' }).waitFor();
  assert.equal(await page.evaluate(() => (window as { __xss?: number }).__xss), undefined);
}

async function register(w: World): Promise<void> {
  const { server, browser, page, email, password } = w;
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Register and sign in' }).click();
  await page.getByRole('heading', { name: 'Welcome' }).waitFor();
  w.publicTestKey = await page.getByLabel('Public-test key').inputValue();
  assert.match(w.publicTestKey, /^tmd_fpt_/);
  const me = await server.request('GET', '/api/v1/me', { headers: bearer(w.publicTestKey) });
  w.accountId = me.json.account.id;
  assert.equal(me.json.account.email, email);
  // The session is the server's HttpOnly cookie; nothing of it is in the page's storage.
  const cookies = await browser.context.cookies();
  const session = cookies.find((c) => c.name === 'tmd_session');
  assert.ok(session?.httpOnly && session.sameSite === 'Strict');
  const stored = await page.evaluate(
    () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
  );
  assert.equal(stored, '{}{}');
  assert.equal(await headerBalance(page), '10000');
  await screenshot(page, '02-registered');
}

async function explorerPrices(w: World): Promise<void> {
  const { server, page } = w;
  await page.getByRole('button', { name: 'Continue to the explorer' }).click();
  await page.getByRole('heading', { name: 'Catalog explorer' }).waitFor();
  const catalog = await server.request('GET', '/api/v1/catalog');
  await page.getByText(`${catalog.json.data.length} of ${catalog.json.data.length} datasets`).waitFor();
  await screenshot(page, '03-explorer');
  await page.getByLabel('Search').fill('volatility');
  const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: DATASET }) });
  await row.waitFor();
  const listCost = catalog.json.data.find((d: { key: string }) => d.key === DATASET).list_cost;
  const expected = terminalPrice(listCost, 0);
  assert.equal(micros((await row.getByTestId('terminal-price').textContent()) ?? ''), expected);
  assert.match((await row.textContent()) ?? '', /paid/);
  assert.match((await row.textContent()) ?? '', /402 not_entitled/, 'why a free key may not read it');
  await page.getByLabel('Search').fill('');
  await page.getByLabel('Access').selectOption('p0');
  await page.getByLabel('Domain').selectOption('stocks');
  assert.ok((await page.getByRole('row').count()) > 1);
  await assertAccessible(page, 'explorer');
  await screenshot(page, '03-explorer-filtered');
}

async function pricedRead(w: World): Promise<void> {
  const { server, page } = w;
  await page.getByLabel('Domain').selectOption('');
  await page.getByLabel('Access').selectOption('');
  await page.getByLabel('Search').fill(DATASET);
  await page.getByRole('link', { name: DATASET }).click();
  await page.getByRole('heading', { name: /Price-derived analytics features/ }).waitFor();
  const shown = (await page.getByTestId('estimate-cost').textContent()) ?? '';
  const me = (await server.request('GET', '/api/v1/me', { headers: bearer(w.publicTestKey) })).json;
  assert.equal(micros(shown), terminalPrice(2, me.tier.discount_pct), 'tier discount, then ×1.35');
  const before = micros(await headerBalance(page));
  await page.getByLabel('symbol (comma-separated)').fill('AAPL,AMZN,BA');
  await page.getByLabel('Rows per page').fill('120');
  // From the keyboard: Enter in the form reads.
  await page.getByLabel('Rows per page').press('Enter');
  const charged = (await page.getByTestId('cost-charged').textContent()) ?? '';
  assert.equal(charged, shown);
  assert.equal(await page.getByTestId('cost-burned').textContent(), shown);
  const remaining = (await page.getByTestId('cost-remaining').textContent()) ?? '';
  assert.equal(micros(remaining), before - micros(shown));
  await page.waitForFunction(
    (r) => document.querySelector('[data-testid=header-balance]')?.textContent === r,
    remaining,
  );
  // The ledger agrees: one burn of exactly the shown price.
  const entries = await server.deps.store.listEntries(me.wallet.id);
  assert.equal(entries.at(-1)?.kind, 'burn');
  assert.equal(entries.at(-1)?.amountMicros, -micros(shown));
}

async function chartDrawn(w: World): Promise<void> {
  const { page } = w;
  const figure = page.getByRole('figure', { name: /one line per entity/ });
  await figure.locator('[data-drawn=true] canvas').waitFor();
  const painted = await figure.locator('canvas').evaluate((canvas: HTMLCanvasElement) => {
    const ctx = canvas.getContext('2d');
    if (!ctx) return 0;
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    for (let i = 3; i < data.length; i += 4) if ((data[i] as number) > 0) n++;
    return n;
  });
  assert.ok(painted > 500, `the canvas has ${painted} painted pixels`);
  const legend = (await figure.locator('.u-legend').textContent()) ?? '';
  for (const symbol of ['AAPL', 'AMZN', 'BA']) assert.ok(legend.includes(symbol), `${symbol} in ${legend}`);
  // Hovering shows the values under the cursor; dragging across zooms in on that span of time.
  const plot = figure.locator('.u-over');
  await plot.scrollIntoViewIfNeeded();
  const box = await plot.boundingBox();
  assert.ok(box);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForFunction(() =>
    [...document.querySelectorAll('.u-legend .u-value')].some((v) => /\d/.test(v.textContent ?? '')),
  );
  // The time under the same point of the plot moves once the chart is zoomed in.
  const timeUnderCursor = () => figure.locator('.u-legend .u-value').first().textContent();
  const before = await timeUnderCursor();
  // Daily rows: the time is the row's own date (UTC), in a browser five hours behind UTC.
  const rowDates = await page.locator('table tbody tr td:nth-child(2)').allTextContents();
  assert.match(before ?? '', /^\d{4}-\d{2}-\d{2}$/);
  assert.ok(rowDates.includes(before ?? ''), `${before} is a row's date`);
  const ticks = (await figure.locator('.u-axis').first().textContent()) ?? '';
  assert.doesNotMatch(ticks, /am|pm/i, 'daily data is ticked by day');
  await page.mouse.move(box.x + box.width * 0.1, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 2 });
  assert.notEqual(await timeUnderCursor(), before, 'zoomed in by dragging');
  await assertAccessible(page, 'dataset');
  await screenshot(page, '04-dataset-chart');
}

async function csvDownload(w: World): Promise<void> {
  const { server, page } = w;
  const me = (await server.request('GET', '/api/v1/me', { headers: bearer(w.publicTestKey) })).json;
  const burnsBefore = (await server.deps.store.listEntries(me.wallet.id)).filter((e) => e.kind === 'burn');
  const shown = (await page.getByTestId('estimate-cost').textContent()) ?? '';
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: /Download CSV \(one more metered read/ }).click();
  const file = await (await download).path();
  const csv = readFileSync(file, 'utf8');
  assert.match(csv, /^symbol,date,/);
  assert.equal(csv.trim().split(/\r?\n/).length, 121, 'a header and the 120 rows of the page');
  const burnsAfter = (await server.deps.store.listEntries(me.wallet.id)).filter((e) => e.kind === 'burn');
  assert.equal(burnsAfter.length, burnsBefore.length + 1);
  assert.equal(burnsAfter.at(-1)?.amountMicros, -micros(shown));
  const panel = page.getByRole('region', { name: 'Cost of the CSV download' });
  assert.equal(await panel.getByTestId('cost-charged').textContent(), shown);
}

async function importedRowsAsText(w: World): Promise<void> {
  const { server, page } = w;
  const entry = server.deps.catalog.resolve('open-data/silso-monthly');
  assert.ok(entry);
  const rows = [0, 1, 2].map((i) =>
    Object.fromEntries(
      entry.dataset.fields.map((f) => [
        f.name,
        f.name === 'series'
          ? XSS
          : f.type === 'date'
            ? `2026-0${i + 1}-01`
            : f.type === 'string'
              ? `<script>window.__xss=2</script>${i}`
              : i + 1,
      ]),
    ),
  );
  await server.deps.store.loadRows(
    entry.dataset.key,
    entry.dataset.time_field,
    rows,
    'import',
    entry.columns,
  );
  await page.goto(`${server.url}/terminal/dataset/open-data/silso-monthly`);
  await page.getByRole('button', { name: /^Read/ }).click();
  await page.getByRole('cell', { name: XSS, exact: true }).first().waitFor();
  assert.equal(await page.evaluate(() => (window as { __xss?: number }).__xss), undefined);
  // Imported rows are not presented as samples: the page says where they came from.
  await page.getByText(/^Imported from published files\./).waitFor();
  assert.equal(await page.getByText('Generated sample data, not real observations.').count(), 0);
  assert.equal(await page.locator('main img').count(), 0);
}

async function stockPage(w: World): Promise<void> {
  const { server, page } = w;
  // A minute passes, so this page's requests do not count against the next pages' rate limit.
  server.clock.advance(60_000);
  await page.goto(`${server.url}/terminal/dataset/stocks/prices`);
  await page.getByRole('heading', { name: /stocks\/prices/ }).waitFor();
  await page.getByText(/^Source: Sample data generated by the service \(not from NYSE/).waitFor();
  const coverage = page.getByRole('region', { name: 'Coverage' });
  assert.match((await coverage.textContent()) ?? '', /not real observations/);
  // 34 symbols over the 44 trading days up to Friday 2026-11-20: the clock stands on a Saturday.
  assert.equal(await coverage.getByTestId('coverage-first').textContent(), '2026-09-22');
  assert.equal(await coverage.getByTestId('coverage-last').textContent(), '2026-11-20');
  assert.equal(await coverage.getByTestId('coverage-rows').textContent(), '1,496');
  assert.match(
    (await coverage.getByTestId('coverage-units').textContent()) ?? '',
    /USD: open, high, low, close, adj_close · shares: volume/,
  );
  await page.getByLabel('symbol (comma-separated)').fill('AAPL');
  await page.getByRole('button', { name: /^Read/ }).click();
  await page.getByRole('figure', { name: /^close over date/ }).waitFor();
  assert.equal(await page.getByLabel('Field to chart').inputValue(), 'close');
}

async function walletKey(w: World): Promise<void> {
  const { server, page } = w;
  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByRole('heading', { name: 'Keys', exact: true }).waitFor();
  await page.getByLabel('New key name (optional)').fill(XSS);
  await page.getByRole('button', { name: 'Create wallet key' }).click();
  const key = await page.getByLabel('New key', { exact: true }).inputValue();
  assert.match(key, /^tmd_live_/);
  await page.getByRole('button', { name: 'Copy the new key' }).click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);
  await page.getByRole('cell', { name: XSS, exact: true }).waitFor();
  assert.equal(await page.evaluate(() => (window as { __xss?: number }).__xss), undefined);
  // The Connect snippets name this service's own URLs, each client in its own syntax.
  const snippet = page.getByTestId('connect-snippet');
  assert.match((await snippet.textContent()) ?? '', /curl -sS --fail-with-body .*\/api\/v1\/data\//s);
  await page.getByRole('button', { name: 'Claude Code', exact: true }).click();
  assert.match(
    (await snippet.textContent()) ?? '',
    new RegExp(`^claude mcp add --transport http tmd ${server.url}/mcp/jsonrpc`),
  );
  await page.getByRole('button', { name: 'Cursor', exact: true }).click();
  assert.match((await snippet.textContent()) ?? '', /"Bearer \$\{env:TMD_KEY\}"/);
  await page.getByRole('button', { name: 'VS Code', exact: true }).click();
  assert.match((await snippet.textContent()) ?? '', /"Bearer \$\{input:tmd-key\}"/);
  await assertAccessible(page, 'keys');
  await screenshot(page, '05-keys');

  const read = await fetch(`${server.url}/api/v1/data/${DATASET}?limit=1`, { headers: bearer(key) });
  assert.equal(read.status, 200);
  // A key pays the API price: the tier discount, no Terminal surcharge.
  assert.equal(read.headers.get('x-token-cost'), '2');

  // The key's row now says when it last read.
  await page.reload();
  const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: XSS, exact: true }) });
  await row.getByTestId('last-used').filter({ hasText: 'UTC' }).waitFor();
  assert.equal(await row.getByTestId('burned-this-month').textContent(), '2');
  assert.equal(await row.getByTestId('recent-reads').textContent(), '1');
  await page.getByRole('button', { name: `Revoke ${XSS}` }).click();
  await page.getByRole('button', { name: 'Yes, revoke' }).click();
  await page.getByRole('row').filter({ hasText: 'revoked' }).waitFor();
  const refused = await fetch(`${server.url}/api/v1/data/${DATASET}?limit=1`, { headers: bearer(key) });
  assert.equal(refused.status, 401);
  assert.equal(((await refused.json()) as { code: string }).code, 'key_revoked');
}

async function walletLedger(w: World): Promise<void> {
  const { page } = w;
  await page.getByRole('link', { name: 'Wallet' }).click();
  await page.getByRole('heading', { name: 'Wallet and usage' }).waitFor();
  await page.getByTestId('ledger-amount').first().waitFor();
  // A burn says what it paid for: the dataset, the channel and the credential.
  await page
    .getByTestId('ledger-read')
    .filter({ hasText: `${DATASET} · terminal · session` })
    .first()
    .waitFor();
  let sum = 0n;
  for (;;) {
    for (const amount of await page.getByTestId('ledger-amount').allTextContents()) sum += micros(amount);
    const older = page.getByRole('button', { name: 'Older entries' });
    if (await older.isDisabled()) break;
    const first = await page.getByTestId('ledger-amount').first().textContent();
    await older.click();
    await page.waitForFunction(
      (f) => document.querySelector('[data-testid=ledger-amount]')?.textContent !== f,
      first,
    );
  }
  const balance = (await page.getByTestId('wallet-balance').textContent())?.replace(' tokens', '') ?? '';
  assert.equal(sum, micros(balance));
  assert.equal(balance, await headerBalance(page));
  await page
    .getByRole('figure', { name: 'Tokens burned per day by channel' })
    .locator('[data-drawn=true] canvas')
    .waitFor();
  await page.getByText(`${DATASET}`).first().waitFor();
  await assertAccessible(page, 'wallet');
  await screenshot(page, '06-wallet');
}

async function packages(w: World): Promise<void> {
  const { server, page } = w;
  await page.getByRole('link', { name: 'Packages' }).click();
  await page.getByRole('heading', { name: 'Packages' }).waitFor();
  const pricing = (await server.request('GET', '/api/v1/pricing')).json;
  assert.equal(pricing.commercial_skus.length, 4);
  for (const sku of pricing.commercial_skus) await page.getByRole('heading', { name: sku.name }).waitFor();
  assert.equal(await page.getByTestId('own-package').textContent(), 'none');
  // An operator assigns a package: the page shows it as the user's own.
  const assigned = await server.request('PUT', `/api/v1/admin/accounts/${w.accountId}/package`, {
    headers: bearer('admin-token-for-tests-0123456789'),
    body: { package: pricing.commercial_skus[1].id },
  });
  assert.equal(assigned.status, 200, assigned.text);
  await page.reload();
  await page.getByTestId('own-package').filter({ hasText: pricing.commercial_skus[1].name }).waitFor();
  await page.getByRole('heading', { name: `${pricing.commercial_skus[1].name} yours` }).waitFor();
  await page.getByRole('button', { name: `Check out ${pricing.commercial_skus[0].name}` }).click();
  await page.getByRole('status').filter({ hasText: '501' }).waitFor();
  await page.getByText(/Checkout is not live/).waitFor();
  await assertAccessible(page, 'packages');
  await screenshot(page, '07-packages');
}

async function signInAgainAfter401(w: World): Promise<void> {
  const { server, browser, page, email, password } = w;
  // The session ends behind the page's back (logged out elsewhere).
  const { token } = (
    await server.request('POST', '/api/v1/auth/login', { body: { email, password, client: 'terminal' } })
  ).json;
  const cookie = (await browser.context.cookies()).find((c) => c.name === 'tmd_session');
  assert.ok(cookie);
  await server.request('POST', '/api/v1/auth/logout', { headers: bearer(cookie.value) });
  await page.getByRole('link', { name: 'Wallet' }).click();
  await page.waitForURL(/\/terminal\/sign-in\?next=%2Fwallet/);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Wallet and usage' }).waitFor();
  assert.ok(token);
}

async function signOut(w: World): Promise<void> {
  const { server, page } = w;
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  const status = await page.evaluate(async () => (await fetch('/api/v1/me')).status);
  assert.equal(status, 401);
  await page.goto(`${server.url}/terminal/keys`);
  await page.waitForURL(/\/terminal\/sign-in\?next=%2Fkeys/);
  assert.ok(w.accountId);
}
