/**
 * The parts of the Wallet page (web/src/pages/wallet/), each through the running Terminal: the wallet
 * card and the next tier, the low-balance notice set and cleared, and a read with a key shown in the
 * ledger, the top datasets and the usage chart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, walletAccount } from '../../test/helpers/server.ts';
import { browserSkipReason, closeTerminal, openTerminal, signIn, type Terminal } from './browser.ts';

const skip = browserSkipReason();
const DATASET = 'stocks/prices';

interface World extends Terminal {
  account: Awaited<ReturnType<typeof walletAccount>>;
}

const w = {} as World;

describe('the parts of the Wallet page', { skip }, () => {
  before(async () => {
    Object.assign(w, await openTerminal());
    w.account = await walletAccount(w.server, 100);
    await signIn(w.page, w.server.url, w.account.email, w.account.password, '/wallet');
  });

  after(() => closeTerminal(w));

  test('WalletCard: the balance, the tier, and the progress to the next tier', () => walletCard(w));
  test('LowBalanceForm: a threshold above the balance brings the notice; an empty one clears it', () =>
    lowBalance(w));
  test('LedgerTable, TopDatasets and UsageChart: a read with a key, as the wallet shows it', () =>
    readShown(w));
});

async function walletCard({ server, page, account }: World): Promise<void> {
  const me = (await server.request('GET', '/api/v1/me', { headers: bearer(account.session) })).json;
  const card = page.getByRole('region', { name: 'Wallet' });
  assert.equal(await card.getByTestId('wallet-balance').textContent(), '100 tokens');
  assert.match((await card.textContent()) ?? '', new RegExp(`Level ${me.tier.level}, ${me.tier.name}:`));
  await card.getByRole('heading', { name: 'Next tier' }).waitFor();
  const progress = card.getByRole('progressbar', { name: /^Progress to level/ });
  assert.equal(await progress.getAttribute('value'), '0');
  assert.equal(await progress.getAttribute('max'), String(me.next_tier.min_tokens));
}

async function lowBalance({ page }: World): Promise<void> {
  assert.equal(await page.getByTestId('low-balance').count(), 0);
  await page.getByLabel('None; new threshold (tokens, empty for none)').fill('200');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  const notice = page.getByRole('status').filter({ hasText: 'below your low-balance notice' });
  await notice.waitFor();
  assert.equal(
    ((await notice.textContent()) ?? '').replace(/\s+/g, ' ').trim(),
    'Your balance (100 tokens) is below your low-balance notice (200 tokens). Buy tokens',
  );
  assert.equal(await notice.getByRole('link', { name: 'Buy tokens' }).getAttribute('href'), '#buy');
  await page.getByLabel('Below 200 tokens; new threshold (tokens, empty for none)').fill('');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await notice.waitFor({ state: 'detached' });
  await page.getByLabel('None; new threshold (tokens, empty for none)').waitFor();
}

async function readShown({ server, page, account }: World): Promise<void> {
  const read = await fetch(`${server.url}/api/v1/data/${DATASET}?limit=1`, { headers: bearer(account.key) });
  assert.equal(read.status, 200);
  const cost = read.headers.get('x-token-cost') ?? '';
  await page.reload();
  const ledger = page.getByRole('table', { name: 'Ledger entries, newest first' });
  const newest = ledger.getByRole('row').nth(1);
  await newest
    .getByTestId('ledger-read')
    .filter({ hasText: `${DATASET} · rest · key test` })
    .waitFor();
  const cells = await newest.getByRole('cell').allTextContents();
  assert.equal(cells[1], 'burn');
  assert.equal(cells[2], `-${cost}`);
  assert.equal(
    await newest.getByRole('link', { name: DATASET }).getAttribute('href'),
    `/terminal/dataset/${DATASET}`,
  );
  assert.equal(await page.getByText('Page 1', { exact: true }).count(), 1);
  assert.ok(await page.getByRole('button', { name: 'Newer entries' }).isDisabled());
  assert.ok(await page.getByRole('button', { name: 'Older entries' }).isDisabled(), 'two entries, one page');
  const top = page.getByRole('region', { name: 'Top datasets, last 30 days' });
  await top.getByText(DATASET).waitFor();
  await top.getByText(`${cost} (1 reads)`).waitFor();
  await page
    .getByRole('figure', { name: 'Tokens burned per day by channel' })
    .locator('[data-drawn=true] canvas')
    .waitFor();
}
