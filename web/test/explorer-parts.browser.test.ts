/**
 * The parts of the catalog explorer (web/src/pages/explorer/), each through the running Terminal: the
 * filters and the address, a max list cost that is not a number, sorting by a column, what each row
 * says about access, and clearing filters that match nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { walletAccount } from '../../test/helpers/server.ts';
import { browserSkipReason, closeTerminal, openTerminal, signIn, type Terminal } from './browser.ts';

const skip = browserSkipReason();

interface Entry {
  key: string;
  domain: string;
  p0: boolean;
  list_cost: number;
}

interface World extends Terminal {
  catalog: Entry[];
}

const w = {} as World;

describe('the parts of the catalog explorer', { skip }, () => {
  before(async () => {
    Object.assign(w, await openTerminal());
    w.catalog = (await w.server.request('GET', '/api/v1/catalog')).json.data;
    const account = await walletAccount(w.server, 100);
    await signIn(w.page, w.server.url, account.email, account.password, '/explorer');
  });

  after(() => closeTerminal(w));

  test('CatalogFilters: domain and access narrow the list, live in the address and come back on reload', () =>
    filtersInAddress(w));
  test('CatalogFilters: a max list cost that is not a whole number is flagged and ignored', () =>
    maxCostChecked(w));
  test('SortHeader: a column sorts ascending, then descending, and says so', () => sortByColumn(w));
  test('CatalogTable and AccessBadge: each row says its access and who may read it', () => accessPerRow(w));
  test('No dataset matches: Clear the filters brings every dataset back', () => clearFilters(w));
});

const summary = (page: Page, shown: number, all: number) => page.getByText(`${shown} of ${all} datasets`);

function table(page: Page) {
  return page.getByRole('table', { name: 'Datasets and what a read costs you' });
}

/** The list prices of the rows shown, top to bottom. */
async function listPrices(page: Page): Promise<number[]> {
  const rows = table(page).getByRole('row');
  const prices: number[] = [];
  for (let i = 1; i < (await rows.count()); i++) {
    prices.push(Number(await rows.nth(i).getByRole('cell').nth(3).textContent()));
  }
  return prices;
}

async function filtersInAddress({ page, catalog }: World): Promise<void> {
  await summary(page, catalog.length, catalog.length).waitFor();
  const paidStocks = catalog.filter((e) => e.domain === 'stocks' && !e.p0).length;
  await page.getByLabel('Domain').selectOption('stocks');
  await page.getByLabel('Access').selectOption('paid');
  await summary(page, paidStocks, catalog.length).waitFor();
  // The count can match before the address does (every stock may be paid): wait for both filters there.
  await page.waitForFunction(() => {
    const params = new URL(location.href).searchParams;
    return params.get('domain') === 'stocks' && params.get('free') === 'paid';
  });
  const address = new URL(page.url());
  assert.equal(address.searchParams.get('domain'), 'stocks');
  assert.equal(address.searchParams.get('free'), 'paid');
  await page.reload();
  await summary(page, paidStocks, catalog.length).waitFor();
  assert.equal(await page.getByLabel('Domain').inputValue(), 'stocks');
  assert.equal(await page.getByLabel('Access').inputValue(), 'paid');
  assert.equal(await table(page).getByRole('row').count(), paidStocks + 1);
}

async function maxCostChecked({ page, catalog }: World): Promise<void> {
  await page.getByLabel('Domain').selectOption('');
  await page.getByLabel('Access').selectOption('');
  const maxCost = page.getByLabel('Max list cost');
  await maxCost.fill('abc');
  await page
    .getByRole('alert')
    .filter({ hasText: 'Max list cost must be a whole number of tokens.' })
    .waitFor();
  assert.equal(await maxCost.getAttribute('aria-invalid'), 'true');
  await summary(page, catalog.length, catalog.length).waitFor();
  await maxCost.fill('1');
  const cheap = catalog.filter((e) => e.list_cost <= 1).length;
  await summary(page, cheap, catalog.length).waitFor();
  assert.equal(await page.getByRole('alert').count(), 0);
  assert.ok((await listPrices(page)).every((p) => p <= 1));
  await maxCost.fill('');
}

async function sortByColumn({ page, catalog }: World): Promise<void> {
  await summary(page, catalog.length, catalog.length).waitFor();
  const header = table(page).getByRole('columnheader', { name: /List price/ });
  assert.equal(await header.getAttribute('aria-sort'), 'none');
  await header.getByRole('button').click();
  assert.equal(await header.getAttribute('aria-sort'), 'ascending');
  const ascending = await listPrices(page);
  assert.deepEqual(
    ascending,
    [...ascending].sort((a, b) => a - b),
  );
  await header.getByRole('button').click();
  assert.equal(await header.getAttribute('aria-sort'), 'descending');
  const descending = await listPrices(page);
  assert.deepEqual(descending, [...ascending].reverse());
  assert.notDeepEqual(descending, ascending, 'the catalog has more than one price');
}

async function accessPerRow({ page, catalog }: World): Promise<void> {
  const open = catalog.find((e) => e.p0);
  const paid = catalog.find((e) => !e.p0);
  assert.ok(open && paid);
  const row = (key: string) =>
    table(page)
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: key, exact: true }) });
  const openText = (await row(open.key).textContent()) ?? '';
  assert.match(openText, /open data \(P0\)/);
  assert.match(openText, /Free keys too \(public test: no burn\)\./);
  const paidText = (await row(paid.key).textContent()) ?? '';
  assert.match(paidText, /paid/);
  assert.match(paidText, /Not free keys: a sandbox or public-test key gets 402 not_entitled/);
  await row(paid.key).getByRole('link', { name: paid.key }).click();
  await page.waitForURL(new RegExp(`/terminal/dataset/${paid.key}$`));
  await page.goBack();
  await table(page).waitFor();
}

async function clearFilters({ page, catalog }: World): Promise<void> {
  await page.getByLabel('Search').fill('zzzz no such dataset');
  await page.getByText('No dataset matches.').waitFor();
  await summary(page, 0, catalog.length).waitFor();
  await page.getByRole('button', { name: 'Clear the filters' }).click();
  await summary(page, catalog.length, catalog.length).waitFor();
  assert.equal(await page.getByLabel('Search').inputValue(), '');
  // The address follows the render: wait for it rather than read it at once.
  await page.waitForFunction(() => location.search === '');
  assert.equal(new URL(page.url()).search, '');
}
