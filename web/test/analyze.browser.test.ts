/**
 * The Analyze page in a real browser against the real service: a Workbench analyst composes an analysis,
 * sees its estimate, runs it and sees the chart, and the wallet falls by exactly the estimate; asks the
 * assistant and gets an analysis; meets the fair-use limit; a Pro account is shown what the Workbench is.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { type OperatorAccount, operatorAccount } from '../../test/helpers/operator.ts';
import { assertLedgerBalanced, startServer, type TestServer } from '../../test/helpers/server.ts';
import {
  assertAccessible,
  type BrowserSession,
  browserSkipReason,
  buildTerminal,
  headerBalance,
  launch,
  micros,
  screenshot,
  signIn,
} from './browser.ts';

const skip = browserSkipReason();

/** What the steps share: the service (three runs a day), the browser, and a Workbench analyst. */
interface World {
  server: TestServer;
  browser: BrowserSession;
  page: Page;
  analyst: OperatorAccount;
}

const w = {} as World;

describe('the Analyze page', { skip }, () => {
  before(async () => {
    buildTerminal();
    w.server = await startServer({
      listen: true,
      config: (c) => {
        const sku = c.pricing.commercial_skus.find((s) => s.id === 'workbench');
        if (sku) sku.fair_use = { runs_per_day: 3, reuse_minutes: 0 };
      },
    });
    w.browser = await launch();
    w.page = w.browser.page;
    w.page.on('pageerror', (error) => assert.fail(`page error: ${error.message}`));
    w.analyst = await operatorAccount(w.server, { pkg: 'workbench' });
  });

  after(async () => {
    await w.browser?.close();
    if (w.server) await assertLedgerBalanced(w.server);
    await w.server?.close();
  });

  test('a Workbench analyst composes, sees the estimate, runs and sees the chart; the wallet falls by the estimate', () =>
    composeEstimateRun(w));
  test('the assistant estimates a question before Ask, answers it in the composer, and saves it only when asked', () =>
    assistantAnswers(w));
  test('a forecast is declined plainly, for free, and does not use one of the day’s runs', () =>
    forecastDeclined(w));
  test('past the day’s runs the page shows 429 fair_use_limit with a countdown; nothing is charged', () =>
    fairUseLimit(w));
  test('a JSON typo in the composer is reported where it is, and nothing is sent', () => jsonTypoNotSent(w));
  test('a Pro account is refused, with what the Workbench is and which package brings it', () =>
    proAccountRefused(w));
});

async function composeEstimateRun(w: World): Promise<void> {
  const { server, page, analyst } = w;
  await signIn(page, server.url, analyst.email, analyst.password, '/analyze');
  await page.getByRole('heading', { name: 'Analyze', level: 1 }).waitFor();
  await page.getByLabel('Analysis name').fill('AAPL and MSFT');
  await page.getByLabel('Series 1 entity').fill('symbol=AAPL');
  await page.getByRole('button', { name: 'Add series' }).click();
  await page.getByLabel('Series 2 entity').fill('symbol=MSFT');
  await page.getByRole('button', { name: 'Estimate' }).click();
  const estimate = (await page.getByTestId('estimate-total').textContent())?.trim() ?? '';
  // Two reads of stocks/prices (2 tokens each) at the Terminal price: 2 × 2.7.
  assert.equal(estimate, '5.4');
  const reads = page.getByRole('table', { name: 'Every read the run will make, at your price now' });
  assert.equal(await reads.getByRole('row').count(), 3);
  await assertAccessible(page, 'analyze-estimate');
  const before = await headerBalance(page);

  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await page.getByTestId('run-burned').waitFor();
  assert.equal((await page.getByTestId('run-burned').textContent())?.trim(), estimate);
  const chart = page.getByRole('figure', { name: 'Chart: AAPL close, MSFT close' });
  await chart.waitFor();
  await chart.locator('[data-drawn="true"]').waitFor();
  await page.getByRole('region', { name: /Table: AAPL close, MSFT close/ }).waitFor();
  await page.waitForFunction(
    (old) => document.querySelector('[data-testid="header-balance"]')?.textContent?.trim() !== old,
    before,
  );
  assert.equal(micros(before) - micros(await headerBalance(page)), micros(estimate));
  const wallet = await server.deps.store.getWallet(analyst.walletId);
  assert.equal(wallet?.balanceMicros, micros(await headerBalance(page)));
  const usage = await server.deps.store.listUsage({ accountId: analyst.id }, null, 10);
  assert.deepEqual(
    usage.map((u) => [u.dataset, u.channel, u.burnedMicros]),
    [
      ['stocks/prices', 'terminal', 2_700_000n],
      ['stocks/prices', 'terminal', 2_700_000n],
    ],
  );
  await assertLedgerBalanced(server);
  await assertAccessible(page, 'analyze-result');
  await screenshot(page, 'analyze-01-composed');
}

async function assistantAnswers(w: World): Promise<void> {
  const { server, page } = w;
  const before = await headerBalance(page);
  await page.getByLabel('Question').fill('rebase AAPL and MSFT to 100 from 2026-10-15');
  const estimate = page.getByTestId('question-estimate');
  await estimate.getByText('This question will cost about 5.4 tokens (2 metered reads).').waitFor();
  assert.equal(await headerBalance(page), before, 'the estimate is free');
  await page.getByRole('button', { name: 'Ask' }).click();
  const explanation = page.getByTestId('explanation');
  await explanation.waitFor();
  assert.match((await explanation.textContent()) ?? '', /rebased to 100 .* burned 5\.4 tokens/);
  await page
    .getByRole('status', { name: 'Assistant answer' })
    .getByText('Answered by the built-in planner')
    .waitFor();
  assert.equal(
    await page.getByLabel('Analysis name').inputValue(),
    'rebase AAPL and MSFT to 100 from 2026-10-15',
  );
  assert.equal(await page.getByLabel('Series 1 entity').inputValue(), 'symbol=AAPL');
  await page.getByRole('figure', { name: 'Chart: Rebased to 100 on 2026-10-15' }).waitFor();
  await page.waitForFunction(
    (old) => document.querySelector('[data-testid="header-balance"]')?.textContent?.trim() !== old,
    before,
  );
  assert.equal(micros(before) - micros(await headerBalance(page)), 5_400_000n);
  // Not saved until asked: then it is in the saved list.
  const savedList = page.getByRole('list', { name: 'Saved analyses' });
  assert.equal(await savedList.getByText('rebase AAPL and MSFT to 100 from 2026-10-15').count(), 0);
  await page.getByRole('button', { name: 'Save this analysis' }).click();
  await savedList
    .getByRole('button', { name: 'rebase AAPL and MSFT to 100 from 2026-10-15', exact: true })
    .waitFor();
  await page.getByText('Saved to your analyses.').waitFor();
  await assertLedgerBalanced(server);
  await screenshot(page, 'analyze-02-assistant');
}

async function forecastDeclined(w: World): Promise<void> {
  const { server, page, analyst } = w;
  const before = await headerBalance(page);
  await page.getByLabel('Question').fill('what will AAPL close at next week');
  await page
    .getByTestId('question-estimate')
    .getByText('This question would not be answered as it stands: asking it is free.')
    .waitFor();
  await page.getByRole('button', { name: 'Ask' }).click();
  const message = page.getByTestId('clarification');
  await message.waitFor();
  assert.match(
    (await message.textContent()) ?? '',
    /charts and computes on past data only: it does not forecast/,
  );
  assert.equal(await headerBalance(page), before);
  assert.equal(await server.deps.store.countAnalysisRuns(analyst.id, 0), 2);
}

async function fairUseLimit(w: World): Promise<void> {
  const { server, page, analyst } = w;
  // Runs today: the composed run and the question. The third run is the last one allowed.
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await page.getByTestId('run-burned').filter({ hasText: '5.4' }).waitFor();
  await page.waitForTimeout(200);
  const before = await headerBalance(page);
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  const alert = page.getByRole('alert').filter({ hasText: 'fair_use_limit' });
  await alert.waitFor();
  const text = (await alert.textContent()) ?? '';
  assert.match(text, /429/);
  assert.match(text, /started its 3 analysis runs/);
  await page.getByTestId('countdown').waitFor();
  assert.equal(await headerBalance(page), before);
  assert.equal((await server.deps.store.getWallet(analyst.walletId))?.balanceMicros, micros(before));
  await assertLedgerBalanced(server);
  await screenshot(page, 'analyze-03-fair-use');
}

async function jsonTypoNotSent(w: World): Promise<void> {
  const { page } = w;
  const sent: string[] = [];
  const record = (request: { url: () => string }) => {
    if (request.url().includes('/api/v1/analyses')) sent.push(request.url());
  };
  page.on('request', record);
  await page.getByLabel(/^Steps/).fill('[{"op": "pct_change",\n "input": "aapl" "as": "r"}]');
  await page.getByRole('button', { name: 'Estimate' }).click();
  const alert = page.getByRole('alert', { name: 'Check your input' });
  await alert.waitFor();
  const text = (await alert.textContent()) ?? '';
  assert.match(text, /Steps is not valid JSON: .*line 2 column 18.*Nothing was sent\./);
  assert.doesNotMatch(text, /Could not reach the service/);
  page.off('request', record);
  assert.deepEqual(sent, []);
  await screenshot(page, 'analyze-04-json-typo');
}

async function proAccountRefused(w: World): Promise<void> {
  const { server, page } = w;
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/terminal\/sign-in/);
  const pro = await operatorAccount(server, { pkg: 'pro' });
  await signIn(page, server.url, pro.email, pro.password, '/analyze');
  const notice = page.getByRole('region', { name: 'The Workbench is not part of your package' });
  await notice.waitFor();
  const text = (await notice.textContent()) ?? '';
  assert.match(text, /It comes with the Workbench package/);
  assert.match(text, /this account has the Pro package/);
  assert.equal(await page.getByRole('heading', { name: /^Composer/ }).count(), 0);
  await assertAccessible(page, 'analyze-not-entitled');
  await screenshot(page, 'analyze-05-not-entitled');
  const usage = await server.deps.store.listUsage({ accountId: pro.id }, null, 10);
  assert.deepEqual(usage, []);
}
