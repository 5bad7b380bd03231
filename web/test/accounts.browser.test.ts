/**
 * Accounts in the Terminal, as a returning user meets them: the key's expiry and the public-test window
 * told apart, registering again with an email that has an account, and a forgotten password reset
 * through the link the service mails (captured by a real SMTP server).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { bearer, startServer, type TestServer } from '../../test/helpers/server.ts';
import { resetLinkOf, startSmtp, type TestSmtp } from '../../test/helpers/smtp.ts';
import {
  assertAccessible,
  type BrowserSession,
  browserSkipReason,
  buildTerminal,
  launch,
  screenshot,
} from './browser.ts';

const skip = browserSkipReason();

/** An API instant as the Terminal shows it. */
const shown = (iso: string) => iso.replace('T', ' ').replace(/(\.\d+)?Z$/, ' UTC');

async function text(page: Page, testId: string): Promise<string> {
  return ((await page.getByTestId(testId).textContent()) ?? '').replace(/\s+/g, ' ').trim();
}

/** What the steps share: the service, its mail, the browser, and the returning user. */
interface World {
  server: TestServer;
  smtp: TestSmtp;
  browser: BrowserSession;
  page: Page;
  email: string;
  password: string;
  newPassword: string;
  firstKey: string;
}

const w = {
  email: `returning${Date.now()}@example.com`,
  password: 'a long enough password',
  newPassword: 'another long password',
  firstKey: '',
} as World;

async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
}

async function fillRegister({ page, email, password }: World): Promise<void> {
  await page.getByRole('button', { name: 'Register for the public test' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Register and sign in' }).click();
}

describe('accounts in the Terminal', { skip }, () => {
  before(async () => {
    buildTerminal();
    w.smtp = await startSmtp();
    w.server = await startServer({
      listen: true,
      env: { SMTP_URL: w.smtp.url, MAIL_FROM: 'TMD <no-reply@tmd.test>' },
    });
    w.browser = await launch();
    w.page = w.browser.page;
    w.page.on('pageerror', (error) => assert.fail(`page error: ${error.message}`));
  });

  after(async () => {
    await w.browser?.close();
    await w.server?.close();
    await w.smtp?.close();
  });

  test("the welcome page gives the key's expiry and the public-test window apart; the Keys page the same", () =>
    welcomeTellsExpiryAndWindow(w));
  test('registering again offers sign-in instead, and signs in', () => registerAgainSignsIn(w));
  test('a new public-test key only after the page says what it does and the user confirms', () =>
    newPublicTestKey(w));
  test('a forgotten password: the mailed link sets a new one and ends every session', () =>
    forgottenPassword(w));
});

async function welcomeTellsExpiryAndWindow(w: World): Promise<void> {
  const { server, page, email, password } = w;
  await page.goto(`${server.url}/terminal/sign-in`);
  await fillRegister(w);
  await page.getByRole('heading', { name: 'Welcome' }).waitFor();
  w.firstKey = await page.getByRole('textbox', { name: 'Public-test key' }).inputValue();
  const me = (await server.request('GET', '/api/v1/me', { headers: bearer(w.firstKey) })).json;
  const keyExpires = me.credential.expires_at as string;
  const listed = await server.request('GET', '/api/v1/keys', {
    headers: bearer(
      (await server.request('POST', '/api/v1/auth/login', { body: { email, password } })).json.token,
    ),
  });
  assert.equal(listed.json.data[0].expires_at, keyExpires, 'the API gives the key one expiry');
  assert.equal(await text(page, 'key-expires'), shown(keyExpires));
  const windowText = await text(page, 'window-ends');
  assert.match(windowText, /^free reads of P0 datasets until /);
  assert.ok(!windowText.includes(shown(keyExpires)), 'the window end is another date than the key expiry');
  await screenshot(page, 'accounts-01-welcome');

  await page.getByRole('button', { name: 'Continue to the explorer' }).click();
  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByRole('heading', { name: 'Keys' }).waitFor();
  assert.equal(await text(page, 'public-test-expires'), shown(keyExpires));
  assert.equal(
    `free reads of P0 datasets until ${await text(page, 'public-test-window')} (a new key can be had until then)`,
    windowText,
  );
  await signOut(page);
}

async function registerAgainSignsIn(w: World): Promise<void> {
  const { server, page } = w;
  await fillRegister(w);
  const refusal = page.getByRole('alert').filter({ hasText: 'An account with this email exists' });
  await refusal.waitFor();
  await assertAccessible(page, 'account exists');
  await screenshot(page, 'accounts-02-exists');
  await refusal.getByRole('button', { name: 'Sign in instead' }).click();
  await page.getByRole('heading', { name: 'Catalog explorer' }).waitFor();
  const stillWorks = await server.request('GET', '/api/v1/me', { headers: bearer(w.firstKey) });
  assert.equal(stillWorks.status, 200, 'registering again revoked nothing');
  await signOut(page);
}

async function newPublicTestKey(w: World): Promise<void> {
  const { server, page } = w;
  await fillRegister(w);
  const refusal = page.getByRole('alert').filter({ hasText: 'An account with this email exists' });
  await refusal.getByRole('button', { name: 'Get a new public-test key…' }).click();
  await refusal.getByText('The key it has now stops working at once').waitFor();
  assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(w.firstKey) })).status, 200);
  await refusal.getByRole('button', { name: 'Yes, replace the key' }).click();
  await page.getByRole('heading', { name: 'Your new public-test key' }).waitFor();
  const newKey = await page.getByRole('textbox', { name: 'Public-test key' }).inputValue();
  assert.notEqual(newKey, w.firstKey);
  const old = await server.request('GET', '/api/v1/me', { headers: bearer(w.firstKey) });
  assert.equal(old.status, 401);
  assert.equal(old.json.code, 'key_revoked');
  assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(newKey) })).status, 200);
  await page.getByRole('button', { name: 'Continue to the explorer' }).click();
  await signOut(page);
}

async function forgottenPassword(w: World): Promise<void> {
  const { server, smtp, page, email, password, newPassword } = w;
  const elsewhere = (await server.request('POST', '/api/v1/auth/login', { body: { email, password } })).json
    .token;
  await page.getByRole('link', { name: 'Forgot password?' }).click();
  await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
  await assertAccessible(page, 'reset request');
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Send the link' }).click();
  await page.getByRole('heading', { name: 'Check your email' }).waitFor();
  await page.getByText('If an account has this email, a link to reset its password is on its way').waitFor();

  const link = resetLinkOf(await smtp.next());
  assert.equal(link.origin, server.url);
  await page.goto(link.href);
  await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
  await assertAccessible(page, 'new password');
  await page.getByLabel('New password', { exact: true }).fill(newPassword);
  await page.getByLabel('Repeat the new password').fill(`${newPassword}!`);
  await page.getByRole('button', { name: 'Set the new password' }).click();
  await page.getByRole('alert').filter({ hasText: 'The two passwords differ.' }).waitFor();
  await page.getByLabel('Repeat the new password').fill(newPassword);
  await page.getByRole('button', { name: 'Set the new password' }).click();
  await page.getByRole('heading', { name: 'Password changed' }).waitFor();
  await screenshot(page, 'accounts-03-password-changed');
  const ended = await server.request('GET', '/api/v1/me', { headers: bearer(elsewhere) });
  assert.equal(ended.status, 401, 'the session signed in elsewhere has ended');

  await page.getByRole('region', { name: 'Password changed' }).getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(newPassword);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Catalog explorer' }).waitFor();
  await signOut(page);

  await page.goto(link.href);
  await page.getByLabel('New password', { exact: true }).fill('yet another password');
  await page.getByLabel('Repeat the new password').fill('yet another password');
  await page.getByRole('button', { name: 'Set the new password' }).click();
  const refused = page.getByRole('alert').filter({ hasText: 'invalid_reset_token' });
  await refused.getByText('This password-reset link has already been used.').waitFor();
}
