/**
 * The parts of a dataset's page (web/src/pages/dataset/), each through the running Terminal: a wallet
 * account reads stocks/prices, checking the heading and fields, the price before the read, the checks on
 * the read form, the fields picked, paging, the chart's field, and reading with an API key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, walletAccount } from '../../test/helpers/server.ts';
import {
  balanceAfter,
  browserSkipReason,
  closeTerminal,
  headerBalance,
  micros,
  openTerminal,
  signIn,
  type Terminal,
} from './browser.ts';

const skip = browserSkipReason();
const DATASET = 'stocks/prices';

interface World extends Terminal {
  account: Awaited<ReturnType<typeof walletAccount>>;
}

const w = {} as World;

describe('the parts of a dataset page', { skip }, () => {
  before(async () => {
    Object.assign(w, await openTerminal());
    w.account = await walletAccount(w.server, 100);
    await signIn(w.page, w.server.url, w.account.email, w.account.password, `/dataset/${DATASET}`);
  });

  after(() => closeTerminal(w));

  test('DatasetHeading and FieldsTable: title, access and source, the fields folded under a summary', () =>
    headingAndFields(w));
  test('PriceBefore: the price of the read and the balance after it; the Read button names the price', () =>
    priceBefore(w));
  test('ReadFilters: a page size out of range, or From after To, is refused before anything is sent', () =>
    filtersRefused(w));
  test('FieldPicker and RowsTable: the fields ticked are the columns read, a row per observation', () =>
    fieldsPicked(w));
  test('RowPager: the next page and back again are one more read each', () => paging(w));
  test('DatasetChart: the numeric fields with their units; a field not read has nothing to chart', () =>
    chartField(w));
  test('ReadAs: an API key is asked for before sending, then reads at the API price', () => readAsKey(w));
});

async function headingAndFields({ server, page }: World): Promise<void> {
  const ds = (await server.request('GET', `/api/v1/catalog/${DATASET}`)).json;
  const heading = page.getByRole('heading', { level: 1 });
  await heading.filter({ hasText: DATASET }).waitFor();
  assert.match((await heading.textContent()) ?? '', ds.p0 ? /open data \(P0\)$/ : /paid$/);
  await page.getByText(`list price ${ds.list_cost} tokens per read`).waitFor();
  const fields = page.getByRole('table', { name: `Fields of ${DATASET}` });
  assert.equal(await fields.isVisible(), false, 'folded until asked');
  await page.getByText(`Fields (${ds.fields.length})`).click();
  await fields.waitFor();
  assert.equal(await fields.getByRole('row').count(), ds.fields.length + 1);
  const field = ds.fields.find((f: { name: string }) => f.name === 'close');
  const close = fields
    .getByRole('row')
    .filter({ has: page.getByRole('cell', { name: 'close', exact: true }) });
  assert.deepEqual((await close.getByRole('cell').allTextContents()).slice(0, 3), [
    field.name,
    field.type,
    field.unit ?? '',
  ]);
}

async function priceBefore({ page }: World): Promise<void> {
  // Asked as the page asks it, with the Terminal session: the Terminal price.
  const estimate = await page.evaluate(
    async (dataset) => (await fetch(`/api/v1/estimate?dataset=${dataset}`)).json(),
    DATASET,
  );
  const price = page.getByRole('region', { name: 'Price before reading' });
  await price.getByTestId('estimate-cost').waitFor();
  const text = (await price.textContent()) ?? '';
  assert.match(text, new RegExp(`This read costs ${estimate.token_cost} tokens`));
  assert.match(text, /balance 100 → 9\d(\.\d+)?\./);
  assert.equal(
    await page.getByRole('button', { name: /^Read/ }).textContent(),
    `Read (${estimate.token_cost} tokens)`,
  );
}

async function filtersRefused({ page }: World): Promise<void> {
  const sent: string[] = [];
  const record = (request: { url: () => string }) => {
    if (request.url().includes('/api/v1/data/')) sent.push(request.url());
  };
  page.on('request', record);
  const balance = await headerBalance(page);
  await page.getByLabel('Rows per page').fill('0');
  await page.getByRole('button', { name: /^Read/ }).click();
  await page
    .getByRole('alert')
    .filter({ hasText: 'Rows per page must be a whole number from 1 to 1000.' })
    .waitFor();
  await page.getByLabel('Rows per page').fill('5');
  await page.getByLabel('From', { exact: true }).fill('2026-11-10');
  await page.getByLabel('To', { exact: true }).fill('2026-11-01');
  await page.getByRole('button', { name: /^Read/ }).click();
  await page.getByRole('alert').filter({ hasText: 'From must not be after To.' }).waitFor();
  page.off('request', record);
  assert.deepEqual(sent, []);
  assert.equal(await headerBalance(page), balance, 'nothing charged');
  await page.getByLabel('From', { exact: true }).fill('');
  await page.getByLabel('To', { exact: true }).fill('');
}

async function fieldsPicked({ page }: World): Promise<void> {
  const balance = await headerBalance(page);
  const shown = (await page.getByTestId('estimate-cost').textContent()) ?? '';
  await page.getByLabel('symbol (comma-separated)').fill('AAPL');
  for (const field of ['symbol', 'date', 'close']) {
    await page.getByRole('checkbox', { name: field, exact: true }).check();
  }
  const read = page.waitForRequest((r) => r.url().includes('/api/v1/data/'));
  await page.getByRole('button', { name: /^Read/ }).click();
  assert.equal(new URL((await read).url()).searchParams.get('fields'), 'symbol,date,close');
  const rows = page.getByRole('table', { name: `Rows read from ${DATASET}` });
  await rows.waitFor();
  const columns = await rows.getByRole('columnheader').allTextContents();
  assert.deepEqual(columns.sort(), ['close', 'date', 'symbol']);
  assert.equal(await rows.getByRole('row').count(), 6, 'a header and five rows');
  assert.equal(await rows.getByRole('cell', { name: 'AAPL', exact: true }).count(), 5);
  const cost = page.getByRole('region', { name: 'Cost of this read' });
  assert.equal(await cost.getByTestId('cost-charged').textContent(), shown);
  assert.equal(micros(balance) - micros(await balanceAfter(page, balance)), micros(shown));
}

async function paging({ page }: World): Promise<void> {
  const rows = page.getByRole('table', { name: `Rows read from ${DATASET}` });
  await page.getByText('Page 1, 5 rows').waitFor();
  assert.ok(await page.getByRole('button', { name: 'Previous page (one more read)' }).isDisabled());
  const firstPage = await rows.getByRole('row').nth(1).textContent();
  const balance = await headerBalance(page);
  await page.getByRole('button', { name: 'Next page (one more read)' }).click();
  await page.getByText('Page 2, 5 rows').waitFor();
  assert.notEqual(await rows.getByRole('row').nth(1).textContent(), firstPage);
  const afterNext = await balanceAfter(page, balance);
  assert.ok(micros(afterNext) < micros(balance), 'the next page was a read');
  await page.getByRole('button', { name: 'Previous page (one more read)' }).click();
  await page.getByText('Page 1, 5 rows').waitFor();
  assert.equal(await rows.getByRole('row').nth(1).textContent(), firstPage);
  assert.ok(micros(await balanceAfter(page, afterNext)) < micros(afterNext), 'back was a read too');
}

async function chartField({ page }: World): Promise<void> {
  const select = page.getByLabel('Field to chart');
  assert.equal(await select.inputValue(), 'close');
  const options = await select.getByRole('option').allTextContents();
  assert.ok(options.includes('close (USD)'), `${options}`);
  assert.ok(options.includes('volume (shares)'), `${options}`);
  await page.getByRole('figure', { name: 'close over date, one line per entity' }).waitFor();
  await select.selectOption('volume');
  await page.getByText('Nothing numeric to chart in this page (read the field to chart it).').waitFor();
  assert.equal(await page.getByRole('figure', { name: /over date/ }).count(), 0);
  await select.selectOption('close');
  await page.getByRole('figure', { name: 'close over date, one line per entity' }).waitFor();
}

async function readAsKey({ server, page, account }: World): Promise<void> {
  const terminalPrice = (await page.getByTestId('estimate-cost').textContent()) ?? '';
  await page.getByLabel('An API key (API price)').check();
  await page.getByText('No price available before reading.').waitFor();
  await page.getByRole('button', { name: /^Read/ }).click();
  await page.getByRole('alert').filter({ hasText: 'Paste the API key to read with.' }).waitFor();
  const estimate = (
    await server.request('GET', `/api/v1/estimate?dataset=${DATASET}`, { headers: bearer(account.key) })
  ).json;
  await page.getByLabel('API key (kept in this page only)').fill(account.key);
  await page.getByTestId('estimate-cost').filter({ hasText: estimate.token_cost }).waitFor();
  await page.getByRole('button', { name: `Read (${estimate.token_cost} tokens)` }).click();
  const cost = page.getByRole('region', { name: 'Cost of this read' });
  await cost.getByTestId('cost-charged').filter({ hasText: estimate.token_cost }).waitFor();
  const usage = await server.deps.store.listUsage({ accountId: account.account.id }, null, 1);
  assert.equal(usage[0]?.keyId, account.keyId, 'read with the key, not the session');
  assert.ok(micros(estimate.token_cost) < micros(terminalPrice), 'no Terminal surcharge on a key');
}
