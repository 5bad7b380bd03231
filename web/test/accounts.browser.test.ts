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

describe('accounts in the Terminal', { skip }, () => {
  let server: TestServer;
  let smtp: TestSmtp;
  let browser: BrowserSession;
  let page: Page;
  const email = `returning${Date.now()}@example.com`;
  const password = 'a long enough password';
  const newPassword = 'another long password';
  let firstKey = '';

  before(async () => {
    buildTerminal();
    smtp = await startSmtp();
    server = await startServer({
      listen: true,
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'TMD <no-reply@tmd.test>' },
    });
    browser = await launch();
    page = browser.page;
    page.on('pageerror', (error) => assert.fail(`page error: ${error.message}`));
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
  });

  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  };

  const fillRegister = async () => {
    await page.getByRole('button', { name: 'Register for the public test' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Register and sign in' }).click();
  };

  test("the welcome page gives the key's expiry and the public-test window apart; the Keys page the same", async () => {
    await page.goto(`${server.url}/terminal/sign-in`);
    await fillRegister();
    await page.getByRole('heading', { name: 'Welcome' }).waitFor();
    firstKey = await page.getByRole('textbox', { name: 'Public-test key' }).inputValue();
    const me = (await server.request('GET', '/api/v1/me', { headers: bearer(firstKey) })).json;
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
    await signOut();
  });

  test('registering again offers sign-in instead, and signs in', async () => {
    await fillRegister();
    const refusal = page.getByRole('alert').filter({ hasText: 'An account with this email exists' });
    await refusal.waitFor();
    await assertAccessible(page, 'account exists');
    await screenshot(page, 'accounts-02-exists');
    await refusal.getByRole('button', { name: 'Sign in instead' }).click();
    await page.getByRole('heading', { name: 'Catalog explorer' }).waitFor();
    const stillWorks = await server.request('GET', '/api/v1/me', { headers: bearer(firstKey) });
    assert.equal(stillWorks.status, 200, 'registering again revoked nothing');
    await signOut();
  });

  test('a new public-test key only after the page says what it does and the user confirms', async () => {
    await fillRegister();
    const refusal = page.getByRole('alert').filter({ hasText: 'An account with this email exists' });
    await refusal.getByRole('button', { name: 'Get a new public-test key…' }).click();
    await refusal.getByText('The key it has now stops working at once').waitFor();
    assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(firstKey) })).status, 200);
    await refusal.getByRole('button', { name: 'Yes, replace the key' }).click();
    await page.getByRole('heading', { name: 'Your new public-test key' }).waitFor();
    const newKey = await page.getByRole('textbox', { name: 'Public-test key' }).inputValue();
    assert.notEqual(newKey, firstKey);
    const old = await server.request('GET', '/api/v1/me', { headers: bearer(firstKey) });
    assert.equal(old.status, 401);
    assert.equal(old.json.code, 'key_revoked');
    assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(newKey) })).status, 200);
    await page.getByRole('button', { name: 'Continue to the explorer' }).click();
    await signOut();
  });

  test('a forgotten password: the mailed link sets a new one and ends every session', async () => {
    const elsewhere = (await server.request('POST', '/api/v1/auth/login', { body: { email, password } })).json
      .token;
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await assertAccessible(page, 'reset request');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    await page
      .getByText('If an account has this email, a link to reset its password is on its way')
      .waitFor();

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

    await page
      .getByRole('region', { name: 'Password changed' })
      .getByRole('link', { name: 'Sign in' })
      .click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(newPassword);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Catalog explorer' }).waitFor();
    await signOut();

    await page.goto(link.href);
    await page.getByLabel('New password', { exact: true }).fill('yet another password');
    await page.getByLabel('Repeat the new password').fill('yet another password');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'invalid_reset_token' });
    await refused.getByText('This password-reset link has already been used.').waitFor();
  });
});
