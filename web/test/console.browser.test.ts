/**
 * A signed-out visitor's first load of the Terminal (the landing page, then sign-in): no failed request
 * and no error in the browser's console (the session check answers 200 either way).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../../test/helpers/server.ts';
import { type BrowserSession, browserSkipReason, buildTerminal, launch } from './browser.ts';

const skip = browserSkipReason();

describe('the Terminal for a signed-out visitor', { skip }, () => {
  let server: TestServer;
  let browser: BrowserSession;

  before(async () => {
    buildTerminal();
    server = await startServer({ listen: true });
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('the first load makes no failed request and logs no error', async () => {
    const { page } = browser;
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('response', (response) => {
      if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${server.url}/terminal/`);
    await page.getByRole('heading', { name: /paid by the read/ }).waitFor();
    await page.waitForLoadState('networkidle');
    await page.getByRole('link', { name: 'Sign in' }).first().click();
    await page.getByLabel('Email').waitFor();
    await page.waitForLoadState('networkidle');
    assert.deepEqual(errors, []);
  });
});
