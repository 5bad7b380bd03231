/**
 * The parts of the Analyze page (web/src/pages/analyze/), each through the running Terminal: a Workbench
 * analyst adds and removes series, saves, duplicates and deletes analyses, meets a run that waits for a
 * confirmation, reads a statistics output as a table, and picks a candidate the assistant offers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type OperatorAccount, operatorAccount } from '../../test/helpers/operator.ts';
import { assertLedgerBalanced } from '../../test/helpers/server.ts';
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

interface World extends Terminal {
  analyst: OperatorAccount;
}

const w = {} as World;

describe('the parts of the Analyze page', { skip }, () => {
  before(async () => {
    Object.assign(
      w,
      await openTerminal({
        config: (c) => {
          const sku = c.pricing.commercial_skus.find((s) => s.id === 'workbench');
          // Two reads at the Terminal price (5.4 tokens) ask for a confirmation; one (2.7) does not.
          if (sku?.fair_use) sku.fair_use = { ...sku.fair_use, reuse_minutes: 0, confirm_above_tokens: 3 };
        },
      }),
    );
    w.analyst = await operatorAccount(w.server, { pkg: 'workbench' });
    await signIn(w.page, w.server.url, w.analyst.email, w.analyst.password, '/analyze');
  });

  after(async () => {
    if (w.server) await assertLedgerBalanced(w.server);
    await closeTerminal(w);
  });

  test('Composer and SeriesFieldset: a series is added with defaults, and removed again', () =>
    seriesRows(w));
  test('SavedList: Save lists the analysis as open; Duplicate opens a copy; Delete removes it', () =>
    savedList(w));
  test('RunEstimate: every read at your price; a run above the confirmation line waits for the tick', () =>
    confirmedRun(w));
  test('ResultView and OutputView: a statistics output is a table of the series, with a CSV link', () =>
    statisticsTable(w));
  test('Assistant and AssistantAnswer: a question asked back offers candidates, free', () => candidates(w));
});

async function seriesRows({ page }: World): Promise<void> {
  await page.getByRole('heading', { name: 'Composer' }).waitFor();
  assert.equal(await page.getByLabel('Series 1 dataset').inputValue(), 'stocks/prices');
  assert.equal(await page.getByLabel('Series 1 field').inputValue(), 'close');
  assert.equal(await page.getByRole('button', { name: /^Remove series/ }).count(), 0, 'one series stays');
  await page.getByRole('button', { name: 'Add series' }).click();
  assert.equal(await page.getByLabel('Series 2 id').inputValue(), 's2');
  assert.equal(await page.getByLabel('Series 2 field').inputValue(), 'close');
  await page.getByLabel('Series 2 entity').fill('symbol=MSFT');
  await page.getByRole('button', { name: 'Remove series 2' }).click();
  assert.equal(await page.getByLabel('Series 2 id').count(), 0);
  assert.equal(await page.getByRole('group', { name: 'Series 1' }).count(), 1);
}

async function savedList({ page }: World): Promise<void> {
  await page.getByLabel('Analysis name').fill('One close');
  await page.getByLabel('Series 1 entity').fill('symbol=AAPL');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  const list = page.getByRole('list', { name: 'Saved analyses' });
  const original = list.getByRole('button', { name: 'One close', exact: true });
  await original.waitFor();
  assert.equal(await original.getAttribute('aria-pressed'), 'true');
  await page.getByRole('heading', { name: 'Composer: One close' }).waitFor();

  await list.getByRole('button', { name: 'Duplicate One close' }).click();
  await list.getByRole('listitem').nth(1).waitFor();
  const heading = (await page.getByRole('heading', { name: /^Composer: / }).textContent()) ?? '';
  const copy = heading.replace('Composer: ', '');
  assert.notEqual(copy, 'One close');
  assert.equal(
    await list.getByRole('button', { name: copy, exact: true }).getAttribute('aria-pressed'),
    'true',
  );
  assert.equal(await original.getAttribute('aria-pressed'), 'false');
  assert.equal(await page.getByLabel('Series 1 entity').inputValue(), 'symbol=AAPL');

  await list.getByRole('button', { name: `Delete ${copy}` }).click();
  await list.getByRole('button', { name: copy, exact: true }).waitFor({ state: 'detached' });
  assert.equal(await list.getByRole('listitem').count(), 1);
  await original.click();
  await page.getByRole('heading', { name: 'Composer: One close' }).waitFor();
}

async function confirmedRun({ page }: World): Promise<void> {
  await page.getByRole('button', { name: 'Add series' }).click();
  await page.getByLabel('Series 2 entity').fill('symbol=MSFT');
  await page.getByRole('button', { name: 'Estimate' }).click();
  const estimate = page.getByRole('region', { name: 'Estimate' });
  await estimate.getByTestId('estimate-total').waitFor();
  const reads = estimate.getByRole('table', { name: 'Every read the run will make, at your price now' });
  assert.deepEqual(await reads.getByRole('row').nth(1).getByRole('cell').allTextContents(), [
    's1',
    'stocks/prices',
    'close',
    '2.7',
  ]);
  assert.equal(await estimate.getByTestId('estimate-total').textContent(), '5.4');
  const run = page.getByRole('button', { name: 'Run', exact: true });
  assert.ok(await run.isDisabled(), 'not offered before the tick');
  await estimate.getByLabel('Spend 5.4 tokens on this run').check();
  assert.ok(await run.isEnabled());
}

async function statisticsTable({ page }: World): Promise<void> {
  await page
    .getByLabel(/^Outputs/)
    .fill('[{"kind": "stats", "values": ["s1", "s2"], "title": "Two closes"}]');
  const before = await headerBalance(page);
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  const result = page.getByRole('region', { name: 'Result' });
  await result.getByTestId('run-burned').waitFor();
  assert.match(
    (await result.getByRole('status').textContent()) ?? '',
    /^2 metered reads, 5\.4 tokens burned/,
  );
  assert.equal(micros(before) - micros(await balanceAfter(page, before)), 5_400_000n);
  const table = result.getByRole('region', { name: 'Table: Two closes' }).getByRole('table');
  assert.deepEqual(await table.getByRole('columnheader').allTextContents(), [
    'series',
    'count',
    'first date',
    'last date',
    'mean',
    'std',
    'min',
    'max',
    'last',
  ]);
  assert.deepEqual(
    await table.getByRole('row').evaluateAll((rows) => rows.slice(1).map((r) => r.firstChild?.textContent)),
    ['AAPL close', 'MSFT close'],
  );
  const csv = result.getByRole('link', { name: 'Download CSV' });
  assert.match((await csv.getAttribute('href')) ?? '', /^\/api\/v1\/analyses\/[^/]+\/result\.csv$/);
}

async function candidates({ page }: World): Promise<void> {
  const before = await headerBalance(page);
  await page.getByLabel('Question').fill('chart the treasury spread');
  await page.getByRole('button', { name: 'Ask' }).click();
  const answer = page.getByRole('status', { name: 'Assistant answer' });
  await answer.getByText(/^Which Treasury yields\?/).waitFor();
  const offered = answer.getByRole('list', { name: 'Candidates' });
  assert.equal(await offered.getByRole('button').count(), 3);
  await offered.getByRole('button', { name: '10-year minus 2-year' }).click();
  assert.equal(
    await page.getByLabel('Question').inputValue(),
    'chart the treasury spread 10-year minus 2-year Treasury yield',
  );
  assert.equal(await headerBalance(page), before, 'asking back is free');
}
