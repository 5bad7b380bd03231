/**
 * A hosted agent signs in to the account over OAuth, through the whole path in Chromium: the official
 * SDK client is refused and sent to sign in, the browser signs in to the Terminal, the consent page
 * shows who asks and where it returns, the user sets caps and approves, the client gets its code and
 * reads (charged once, a retry charged nothing); the Keys page lists the connection with its caps, and
 * revoking it there makes the client's next call a 401.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { MCP_PATH } from '../../test/helpers/mcp.ts';
import { callbackServer, MemoryOAuthClient, mcpCallWith } from '../../test/helpers/oauth.ts';
import {
  assertLedgerBalanced,
  freePort,
  startServer,
  type TestServer,
  walletAccount,
} from '../../test/helpers/server.ts';
import {
  assertAccessible,
  type BrowserSession,
  browserSkipReason,
  buildTerminal,
  launch,
  screenshot,
} from './browser.ts';

const skip = browserSkipReason();

describe('an agent connects through the Terminal', { skip }, () => {
  let server: TestServer;
  let browser: BrowserSession;
  let callback: Awaited<ReturnType<typeof callbackServer>>;

  before(async () => {
    buildTerminal();
    callback = await callbackServer();
    const port = await freePort();
    server = await startServer({ listen: true, port, env: { BASE_URL: `http://127.0.0.1:${port}` } });
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    await assertLedgerBalanced(server);
    await server?.close();
    await callback?.close();
  });

  test('sign in, approve with caps, read charged once, revoke on the Keys page', async () => {
    const account = await walletAccount(server, 500);
    const provider = new MemoryOAuthClient(callback.url, 'Browser Agent');
    const mcpUrl = new URL(`${server.url}${MCP_PATH}`);
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await assert.rejects(new Client({ name: 'agent', version: '1.0.0' }).connect(first), UnauthorizedError);
    assert.ok(provider.authorizationUrl);

    const { page } = browser;
    const answered = callback.next();
    await page.goto(provider.authorizationUrl.href);
    // Signed out: the Terminal asks to sign in and comes back to the consent page.
    await page.waitForURL(/\/terminal\/sign-in\?next=%2Fconnect%2F/);
    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(/\/terminal\/connect\//);
    await page.getByRole('heading', { name: 'Connect an agent' }).waitFor();
    assert.equal(await page.getByTestId('client-name').textContent(), 'Browser Agent');
    assert.equal(await page.getByTestId('redirect-host').textContent(), new URL(callback.url).host);
    await assertAccessible(page, 'connect');
    await screenshot(page, '40-connect');
    // A cap that is not a number is refused before anything is sent.
    await page.getByLabel('Cap per day (tokens)').fill('ten');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('alert').filter({ hasText: 'whole number of tokens' }).waitFor();
    await page.getByLabel('Cap per day (tokens)').fill('20');
    await page.getByLabel('Cap per month (tokens)').fill('');
    await page.getByRole('button', { name: 'Approve' }).click();
    const params = await answered;
    assert.ok(params.get('code'), 'the client got its code');
    assert.equal(params.get('iss'), server.url);

    await first.finishAuth(params.get('code') as string, params.get('iss') as string);
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const args = { dataset: 'equities/stock-prices', limit: 2 };
    const _meta = { idempotency_key: 'browser-agent-1' };
    const read = await client.callTool({ name: 'read_dataset', arguments: args, _meta });
    const again = await client.callTool({ name: 'read_dataset', arguments: args, _meta });
    assert.deepEqual(again.structuredContent, read.structuredContent);
    const burns = (await server.deps.store.listEntries(account.account.walletId)).filter(
      (e) => e.kind === 'burn',
    );
    assert.equal(burns.length, 1, 'charged once, the retry charged nothing');

    // The Keys page lists the connection beside the keys, with its caps and last use.
    await page.goto(`${server.url}/terminal/keys`);
    const row = page.getByTestId('connection');
    // Its read shows as its last use (the usage arrives in its own answer, after the list).
    await row.filter({ hasNotText: 'not recently' }).waitFor();
    const text = (await row.textContent()) ?? '';
    assert.match(text, /Browser Agent/);
    assert.match(text, /20 tokens \/ none/);
    await assertAccessible(page, 'keys-connections');
    await screenshot(page, '41-keys-connections');
    await row.getByRole('button', { name: 'Revoke Browser Agent' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.filter({ hasText: 'revoked' }).waitFor();

    const res = await mcpCallWith(server, provider.saved?.access_token as string);
    assert.equal(res.status, 401);
    assert.equal(res.json.code, 'invalid_token');
  });
});
