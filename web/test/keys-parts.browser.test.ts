/**
 * The parts of the Keys page (web/src/pages/keys/), each through the running Terminal: the keys table,
 * creating a key (refused input, shown once, copied), revoking after a confirmation, the connections
 * table with none yet, and the cost headers explained.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, walletAccount } from '../../test/helpers/server.ts';
import { browserSkipReason, closeTerminal, openTerminal, signIn, type Terminal } from './browser.ts';

const skip = browserSkipReason();

interface World extends Terminal {
  account: Awaited<ReturnType<typeof walletAccount>>;
}

const w = {} as World;

describe('the parts of the Keys page', { skip }, () => {
  before(async () => {
    Object.assign(w, await openTerminal());
    w.account = await walletAccount(w.server, 100);
    await signIn(w.page, w.server.url, w.account.email, w.account.password, '/keys');
  });

  after(() => closeTerminal(w));

  test('KeysTable: each key with its kind, prefix, use this month and status', () => keysListed(w));
  test('CreateKey: a name with a control character is refused before sending', () => nameRefused(w));
  test('CreateKey and CopyButton: a new key is shown once, copied, then put away', () => keyCreated(w));
  test('RevokeControl: Revoke asks first; Cancel keeps the key; Yes, revoke ends it', () => revokeKey(w));
  test('ConnectionsTable and CostHeaders: no agent yet, and the four cost headers explained', () =>
    connectionsAndHeaders(w));
});

function keysTable(page: Terminal['page']) {
  return page.getByRole('table', { name: 'Your keys' });
}

async function keysListed({ server, page, account }: World): Promise<void> {
  const listed = (await server.request('GET', '/api/v1/keys', { headers: bearer(account.session) })).json
    .data;
  const key = listed.find((k: { id: string }) => k.id === account.keyId);
  const row = keysTable(page)
    .getByRole('row')
    .filter({ has: page.getByRole('cell', { name: 'test', exact: true }) });
  await row.waitFor();
  const cells = await row.getByRole('cell').allTextContents();
  assert.equal(cells[1], key.kind);
  assert.equal(cells[2], key.prefix);
  assert.equal(cells[4], 'not recently');
  assert.equal(cells[5], '0', 'no reads yet');
  assert.equal(cells[6], key.burned_this_month);
  assert.equal(cells[8], 'active');
  await row.getByRole('button', { name: 'Revoke test' }).waitFor();
}

async function nameRefused({ server, page, account }: World): Promise<void> {
  const before = (await server.request('GET', '/api/v1/keys', { headers: bearer(account.session) })).json
    .data;
  await page.getByLabel('New key name (optional)').fill('bell\u0007name');
  await page.getByRole('button', { name: 'Create wallet key' }).click();
  await page
    .getByRole('alert')
    .filter({ hasText: 'A key name has at most 100 characters and no control characters.' })
    .waitFor();
  const after = (await server.request('GET', '/api/v1/keys', { headers: bearer(account.session) })).json.data;
  assert.equal(after.length, before.length, 'nothing was created');
}

async function keyCreated({ page }: World): Promise<void> {
  await page.getByLabel('New key name (optional)').fill('reporting');
  await page.getByRole('button', { name: 'Create wallet key' }).click();
  const shown = page.getByRole('region', { name: 'New key “reporting”' });
  await shown.waitFor();
  assert.equal(await page.getByRole('alert').count(), 0);
  const key = await shown.getByLabel('New key', { exact: true }).inputValue();
  assert.match(key, /^tmd_live_/);
  await shown.getByRole('button', { name: 'Copy the new key' }).click();
  await shown.getByRole('button', { name: 'Copy the new key: copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);
  await keysTable(page).getByRole('cell', { name: 'reporting', exact: true }).waitFor();
  await shown.getByRole('button', { name: 'I have copied it' }).click();
  await shown.waitFor({ state: 'detached' });
  assert.equal(await page.getByText(key).count(), 0, 'the key is not shown again');
}

async function revokeKey({ server, page, account }: World): Promise<void> {
  const row = keysTable(page)
    .getByRole('row')
    .filter({ has: page.getByRole('cell', { name: 'reporting', exact: true }) });
  await row.getByRole('button', { name: 'Revoke reporting' }).click();
  await row.getByText('Revoke for good?').waitFor();
  await row.getByRole('button', { name: 'Cancel' }).click();
  await row.getByRole('button', { name: 'Revoke reporting' }).waitFor();
  const listed = async () =>
    (await server.request('GET', '/api/v1/keys', { headers: bearer(account.session) })).json.data.find(
      (k: { name: string | null }) => k.name === 'reporting',
    );
  assert.equal((await listed()).status, 'active', 'Cancel kept the key');
  await row.getByRole('button', { name: 'Revoke reporting' }).click();
  await row.getByRole('button', { name: 'Yes, revoke' }).click();
  await row.getByRole('cell', { name: 'revoked', exact: true }).waitFor();
  assert.equal(await row.getByRole('button').count(), 0, 'nothing left to revoke');
  assert.equal((await listed()).status, 'revoked');
}

async function connectionsAndHeaders({ page }: World): Promise<void> {
  await page.getByRole('heading', { name: 'Agent connections' }).waitFor();
  await page.getByText('No agent has connected yet.').waitFor();
  assert.equal(await page.getByRole('table', { name: 'Agent connections' }).count(), 0);
  await page.getByRole('heading', { name: 'The cost headers of every read' }).waitFor();
  const terms = await page.getByRole('term').allTextContents();
  const headers = terms.filter((t) => t.startsWith('X-'));
  assert.equal(headers.length, 4);
  assert.equal(headers[0], 'X-Token-Cost');
  assert.equal(headers[3], 'X-Credits-Remaining');
}
