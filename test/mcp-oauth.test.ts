/**
 * MCP sign-in (OAuth 2.1) with the official SDK client, the account's approval given through the
 * Terminal's API (the browser test drives the same through Chromium): discovery, registration by
 * dynamic registration and by client ID metadata document, a charged read, a retry charged nothing,
 * refresh with rotation, revocation; and forged, expired, replayed and wrong-audience codes and tokens.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { auth, Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { freshDatabase, type TestDatabase } from './helpers/backends.ts';
import { MCP_PATH, toolCall } from './helpers/mcp.ts';
import { callbackServer, MemoryOAuthClient, mcpCallWith, signInByApi } from './helpers/oauth.ts';
import {
  assertLedgerBalanced,
  bearer,
  freePort,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

type Callback = Awaited<ReturnType<typeof callbackServer>>;

let server: TestServer;
let db: TestDatabase | null = null;
let callback: Callback;
let metadataServer: Callback & { document: Record<string, unknown> };
const METADATA_URL = 'https://agent.example/oauth/client.json';

for (const backend of ['sqlite', 'postgres'] as const)
  describe(backend, () => {
    before(async () => {
      callback = await callbackServer();
      // The client ID metadata document, served by a loopback server the OAuth server's fetch reaches.
      const docs = await callbackServer();
      const document = {
        client_id: METADATA_URL,
        client_name: 'Metadata Agent',
        redirect_uris: [callback.url],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
      metadataServer = { ...docs, document };
      if (backend === 'postgres') {
        const made = await freshDatabase();
        if ('skip' in made) throw new Error(made.skip);
        db = made;
      }
      const port = await freePort();
      server = await startServer({
        listen: true,
        port,
        env: { BASE_URL: `http://127.0.0.1:${port}`, ...(db ? { DATABASE_URL: db.url } : {}) },
        oauthFetch: async (url) => {
          assert.equal(String(url), METADATA_URL);
          return new Response(JSON.stringify(document), {
            headers: { 'content-type': 'application/json', 'cache-control': 'max-age=60' },
          });
        },
      });
    });

    after(async () => {
      await assertLedgerBalanced(server);
      await server.close();
      await callback.close();
      await metadataServer.close();
      await db?.drop();
    });

    const mcpUrl = () => new URL(`${server.url}${MCP_PATH}`);

    /** Connects the SDK client with its OAuth provider: the first try asks to sign in, the second reads. */
    async function connectWithOAuth(provider: MemoryOAuthClient, session: string, caps = {}) {
      const first = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
      const refused = new Client({ name: 'agent', version: '1.0.0' });
      await assert.rejects(refused.connect(first), UnauthorizedError);
      assert.ok(provider.authorizationUrl, 'the SDK was sent to sign in');
      const { params, uid } = await signInByApi(server, provider.authorizationUrl, session, {
        approve: true,
        caps,
      });
      assert.equal(params.get('iss'), server.url, 'RFC 9207: the answer names its issuer');
      await first.finishAuth(params.get('code') as string, params.get('iss') as string);
      const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
      const client = new Client({ name: 'agent', version: '1.0.0' });
      await client.connect(transport);
      return { client, uid };
    }

    async function burns(walletId: string): Promise<number> {
      return (await server.deps.store.listEntries(walletId)).filter((e) => e.kind === 'burn').length;
    }

    describe('discovery', () => {
      test('a call without a token gets 401 naming the resource metadata, which names the server', async () => {
        const res = await server.request('POST', MCP_PATH, {
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          raw: JSON.stringify(toolCall('read_dataset', { dataset: 'equities/stock-prices' })),
        });
        assert.equal(res.status, 401);
        const challenge = res.headers.get('www-authenticate') ?? '';
        const metadataUrl = `${server.url}/.well-known/oauth-protected-resource${MCP_PATH}`;
        assert.match(challenge, new RegExp(`resource_metadata="${metadataUrl}"`));
        assert.match(challenge, /scope="mcp"/);
        const resource = (await (await fetch(metadataUrl)).json()) as Record<string, unknown>;
        assert.equal(resource.resource, `${server.url}${MCP_PATH}`);
        assert.deepEqual(resource.authorization_servers, [server.url]);
        const as = (await (
          await fetch(`${server.url}/.well-known/oauth-authorization-server`)
        ).json()) as Record<string, unknown>;
        assert.equal(as.issuer, server.url);
        assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
        assert.equal(as.authorization_response_iss_parameter_supported, true);
        assert.equal(as.client_id_metadata_document_supported, true);
        assert.ok(as.registration_endpoint);
      });
    });

    describe('the SDK client signs in and reads', () => {
      let account: Awaited<ReturnType<typeof walletAccount>>;
      let provider: MemoryOAuthClient;
      let client: Client;

      before(async () => {
        account = await walletAccount(server, 1000);
        provider = new MemoryOAuthClient(callback.url);
        ({ client } = await connectWithOAuth(provider, account.session, { daily_tokens: 50 }));
      });

      test('registered dynamically, it reads once charged, and a retry with its key is charged nothing', async () => {
        assert.ok(provider.information?.client_id, 'dynamic registration gave a client id');
        const args = { dataset: 'equities/stock-prices', filters: { symbol: 'AAPL' }, limit: 3 };
        const meta = { idempotency_key: 'oauth-read-1' };
        const first = (await client.callTool({ name: 'read_dataset', arguments: args, _meta: meta })) as {
          structuredContent: { meta: { cost: { token_cost: string } } };
        };
        assert.equal(first.structuredContent.meta.cost.token_cost, '2');
        const again = await client.callTool({ name: 'read_dataset', arguments: args, _meta: meta });
        assert.deepEqual(again.structuredContent, first.structuredContent);
        assert.equal(await burns(account.account.walletId), 1);
        // The connection reads as a key of the account, at the API price, with the caps approved.
        const listed = await server.request('GET', '/api/v1/connections', {
          headers: bearer(account.session),
        });
        assert.equal(listed.status, 200, listed.text);
        const [connection] = listed.json.data;
        assert.equal(connection.client_name, 'Test Agent');
        assert.equal(connection.redirect_host, new URL(callback.url).host);
        assert.deepEqual(connection.key.spending_caps, { daily: '50', monthly: null });
        const usage = await server.deps.store.listUsage({ accountId: account.account.id }, null, 10);
        assert.equal(usage[0]?.keyId, connection.key.id);
        assert.equal(usage[0]?.channel, 'mcp');
      });

      test('the refresh token rotates; the used one, sent again, is refused and ends the grant', async () => {
        const before = provider.saved;
        assert.ok(before?.refresh_token, 'a refresh token was issued');
        const result = await auth(provider, { serverUrl: mcpUrl() });
        assert.equal(result, 'AUTHORIZED');
        assert.notEqual(provider.saved?.refresh_token, before.refresh_token);
        assert.notEqual(provider.saved?.access_token, before.access_token);
        const tools = await client.listTools();
        assert.ok(tools.tools.length > 0, 'the refreshed token is used');
        // A refresh token used twice was stolen or leaked: the server refuses it and revokes the grant.
        const reused = await fetch(`${server.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: before.refresh_token as string,
            client_id: provider.information?.client_id as string,
          }),
        });
        assert.equal(reused.status, 400);
        assert.equal(((await reused.json()) as { error: string }).error, 'invalid_grant');
        const res = await mcpCallWith(server, provider.saved?.access_token as string);
        assert.equal(res.status, 401, 'the grant of the reused token is gone');
      });

      test('a connection revoked on the Keys page is 401 on its next call, and refreshes nothing', async () => {
        const agent = new MemoryOAuthClient(callback.url, 'Second Agent');
        const { client: second } = await connectWithOAuth(agent, account.session);
        assert.ok((await second.listTools()).tools.length > 0);
        const listed = await server.request('GET', '/api/v1/connections', {
          headers: bearer(account.session),
        });
        const connection = listed.json.data.find(
          (c: { client_name: string }) => c.client_name === 'Second Agent',
        );
        const revoked = await server.request('DELETE', `/api/v1/keys/${connection.key.id}`, {
          headers: bearer(account.session),
        });
        assert.equal(revoked.status, 200, revoked.text);
        const res = await mcpCallWith(server, agent.saved?.access_token as string);
        assert.equal(res.status, 401, res.text);
        assert.equal(res.json.code, 'invalid_token');
        assert.match(res.headers.get('www-authenticate') ?? '', /resource_metadata=.*error="invalid_token"/);
        const refreshed = await fetch(`${server.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: agent.saved?.refresh_token as string,
            client_id: agent.information?.client_id as string,
          }),
        });
        assert.equal(refreshed.status, 400);
      });
    });

    describe('registration by client ID metadata document', () => {
      test('the client id is the document URL; the consent shows its name and the client reads', async () => {
        const account = await walletAccount(server, 100);
        const provider = new MemoryOAuthClient(callback.url, 'Metadata Agent', METADATA_URL);
        const { client } = await connectWithOAuth(provider, account.session);
        assert.equal(provider.information?.client_id, METADATA_URL);
        const read = await client.callTool({
          name: 'read_dataset',
          arguments: { dataset: 'equities/stock-prices', limit: 1 },
        });
        assert.equal(read.isError, undefined);
        const listed = await server.request('GET', '/api/v1/connections', {
          headers: bearer(account.session),
        });
        assert.equal(listed.json.data[0].client_name, 'Metadata Agent');
        assert.equal(listed.json.data[0].client_id, METADATA_URL);
        assert.equal(await burns(account.account.walletId), 1);
      });
    });

    describe('refused codes and tokens', () => {
      const form = (body: Record<string, string>) => ({
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      });

      async function registered() {
        const res = await fetch(`${server.url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...new MemoryOAuthClient(callback.url).clientMetadata }),
        });
        assert.equal(res.status, 201);
        return ((await res.json()) as { client_id: string }).client_id;
      }

      async function authorizationUrl(clientId: string, extra: Record<string, string> = {}) {
        const { createHash, randomBytes } = await import('node:crypto');
        const verifier = randomBytes(32).toString('base64url');
        const url = new URL(`${server.url}/oauth/authorize`);
        url.search = new URLSearchParams({
          response_type: 'code',
          client_id: clientId,
          redirect_uri: callback.url,
          scope: 'mcp',
          resource: `${server.url}${MCP_PATH}`,
          code_challenge: createHash('sha256').update(verifier).digest('base64url'),
          code_challenge_method: 'S256',
          state: 'st',
          ...extra,
        }).toString();
        return { url, verifier };
      }

      const mcpCall = (token: string) => mcpCallWith(server, token);

      /** Trades an authorization code for tokens, as a public client does. */
      async function exchange(clientId: string, code: string, verifier: string) {
        const res = await fetch(
          `${server.url}/oauth/token`,
          form({
            grant_type: 'authorization_code',
            code,
            redirect_uri: callback.url,
            client_id: clientId,
            code_verifier: verifier,
          }),
        );
        assert.equal(res.status, 200);
        return (await res.json()) as { access_token: string };
      }

      test('a forged token, and a real token on REST, are 401 and change nothing', async () => {
        const forged = await mcpCall('A'.repeat(43));
        assert.equal(forged.status, 401);
        assert.equal(forged.json.code, 'invalid_token');
        const account = await walletAccount(server, 10);
        const clientId = await registered();
        const { url, verifier } = await authorizationUrl(clientId);
        const { params } = await signInByApi(server, url, account.session, { approve: true });
        const token = await exchange(clientId, params.get('code') as string, verifier);
        assert.equal((await mcpCall(token.access_token)).status, 200);
        const rest = await server.request('GET', '/api/v1/me', { headers: bearer(token.access_token) });
        assert.equal(rest.status, 401, 'the token is for the MCP endpoint only');
        assert.equal(rest.json.code, 'invalid_token');
      });

      test('a PKCE verifier that does not match, a plain challenge and another resource are refused', async () => {
        const account = await walletAccount(server, 10);
        const clientId = await registered();
        const { url } = await authorizationUrl(clientId);
        const { params } = await signInByApi(server, url, account.session, { approve: true });
        const wrong = await fetch(
          `${server.url}/oauth/token`,
          form({
            grant_type: 'authorization_code',
            code: params.get('code') as string,
            redirect_uri: callback.url,
            client_id: clientId,
            code_verifier: 'x'.repeat(43),
          }),
        );
        assert.equal(wrong.status, 400);
        assert.equal(((await wrong.json()) as { error: string }).error, 'invalid_grant');

        const plain = await fetch(
          (await authorizationUrl(clientId, { code_challenge_method: 'plain' })).url,
          {
            redirect: 'manual',
          },
        );
        const plainAnswer = new URL(plain.headers.get('location') as string);
        assert.equal(plainAnswer.searchParams.get('error'), 'invalid_request');

        const elsewhere = await fetch(
          (await authorizationUrl(clientId, { resource: 'https://other.example/mcp' })).url,
          { redirect: 'manual' },
        );
        const elsewhereAnswer = new URL(elsewhere.headers.get('location') as string);
        assert.equal(elsewhereAnswer.searchParams.get('error'), 'invalid_target');
      });

      test('a replayed code is refused and revokes what the first use got', async () => {
        const account = await walletAccount(server, 10);
        const clientId = await registered();
        const { url, verifier } = await authorizationUrl(clientId);
        const { params } = await signInByApi(server, url, account.session, { approve: true });
        const exchange = {
          grant_type: 'authorization_code',
          code: params.get('code') as string,
          redirect_uri: callback.url,
          client_id: clientId,
          code_verifier: verifier,
        };
        const first = await fetch(`${server.url}/oauth/token`, form(exchange));
        assert.equal(first.status, 200);
        const token = (await first.json()) as { access_token: string };
        assert.equal((await mcpCall(token.access_token)).status, 200);
        const replay = await fetch(`${server.url}/oauth/token`, form(exchange));
        assert.equal(replay.status, 400);
        assert.equal(((await replay.json()) as { error: string }).error, 'invalid_grant');
        assert.equal((await mcpCall(token.access_token)).status, 401, 'the replay revoked the grant');
      });

      test('an expired code and an expired access token are refused', async () => {
        const account = await walletAccount(server, 10);
        const clientId = await registered();
        const { url, verifier } = await authorizationUrl(clientId);
        const { params } = await signInByApi(server, url, account.session, { approve: true });
        server.clock.advance(61_000);
        const late = await fetch(
          `${server.url}/oauth/token`,
          form({
            grant_type: 'authorization_code',
            code: params.get('code') as string,
            redirect_uri: callback.url,
            client_id: clientId,
            code_verifier: verifier,
          }),
        );
        assert.equal(late.status, 400);
        assert.equal(((await late.json()) as { error: string }).error, 'invalid_grant');

        const again = await authorizationUrl(clientId);
        const fresh = await signInByApi(server, again.url, account.session, { approve: true });
        const token = await exchange(clientId, fresh.params.get('code') as string, again.verifier);
        assert.equal((await mcpCall(token.access_token)).status, 200);
        server.clock.advance(3_601_000);
        assert.equal((await mcpCall(token.access_token)).status, 401, 'an hour later the token is expired');
      });

      test('a declined sign-in sends the client access_denied and creates no connection', async () => {
        const account = await walletAccount(server, 10);
        const clientId = await registered();
        const { url } = await authorizationUrl(clientId);
        const { params } = await signInByApi(server, url, account.session, { approve: false });
        assert.equal(params.get('error'), 'access_denied');
        assert.equal(params.get('state'), 'st');
        const listed = await server.request('GET', '/api/v1/connections', {
          headers: bearer(account.session),
        });
        assert.equal(listed.json.data.length, 0);
      });

      test('a key cannot approve a sign-in, and an unknown sign-in is 404', async () => {
        const account = await walletAccount(server, 10);
        const byKey = await server.request('POST', '/api/v1/connect/nope/approve', {
          headers: bearer(account.key),
          body: {},
        });
        assert.equal(byKey.status, 403);
        const unknown = await server.request('GET', '/api/v1/connect/nope', {
          headers: bearer(account.session),
        });
        assert.equal(unknown.status, 404);
        assert.equal(unknown.json.code, 'not_found');
      });
    });
  });
