/**
 * MCP sign-in (OAuth) as a client goes through it: the official SDK's OAuthClientProvider kept in
 * memory, a loopback callback server that receives the code, and a user agent made of fetch calls with
 * a cookie jar, for the flows the browser test does not drive through Chromium.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { MCP_PATH, toolCall } from './mcp.ts';
import { bearer, type TestResponse, type TestServer } from './server.ts';

export class MemoryOAuthClient implements OAuthClientProvider {
  information: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  verifier = '';
  discovery: OAuthDiscoveryState | undefined;
  /** Where the SDK sent the user agent to sign in. */
  authorizationUrl: URL | null = null;
  readonly #redirectUrl: string;
  readonly #name: string;
  readonly clientMetadataUrl?: string;

  constructor(redirectUrl: string, name = 'Test Agent', clientMetadataUrl?: string) {
    this.#redirectUrl = redirectUrl;
    this.#name = name;
    if (clientMetadataUrl) this.clientMetadataUrl = clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.#redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.#name,
      redirect_uris: [this.#redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.information;
  }

  saveClientInformation(information: StoredOAuthClientInformation) {
    this.information = information;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }

  discoveryState() {
    return this.discovery;
  }
}

/** A loopback server standing for the client's redirect URI: it hands over each callback's query. */
export async function callbackServer() {
  const waiting: ((params: URLSearchParams) => void)[] = [];
  const received: URLSearchParams[] = [];
  const server = createServer((req, res) => {
    const params = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
    const next = waiting.shift();
    if (next) next(params);
    else received.push(params);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next(): Promise<URLSearchParams> {
      const ready = received.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * A user agent of fetch calls: follows the OAuth server's redirects with its cookies, approves (or
 * declines) the pending sign-in through the Terminal's API with the session, and returns the query
 * the client's redirect URI receives.
 */
export async function signInByApi(
  server: TestServer,
  authorizationUrl: URL | string,
  session: string,
  answer: { approve: boolean; caps?: { daily_tokens?: number | null; monthly_tokens?: number | null } },
): Promise<{ params: URLSearchParams; uid: string }> {
  const jar = new Map<string, string>();
  const get = async (url: string) => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = (pair as string).indexOf('=');
      jar.set((pair as string).slice(0, eq), (pair as string).slice(eq + 1));
    }
    return response;
  };
  const start = await get(String(authorizationUrl));
  assert.equal(start.status, 303, await start.text());
  const consent = new URL(start.headers.get('location') as string, server.url);
  const uid = /^\/terminal\/connect\/([^/]+)$/.exec(consent.pathname)?.[1];
  assert.ok(uid, `the sign-in goes to the Terminal: ${consent}`);
  const decided = await server.request(
    'POST',
    `/api/v1/connect/${uid}/${answer.approve ? 'approve' : 'deny'}`,
    { headers: bearer(session), body: answer.caps ?? {} },
  );
  assert.equal(decided.status, 200, decided.text);
  let next = new URL(decided.json.redirect_to as string, server.url).href;
  for (let hops = 0; hops < 5; hops++) {
    const response = await get(next);
    assert.equal(response.status, 303, await response.text());
    const location = new URL(response.headers.get('location') as string, next);
    if (location.origin !== new URL(server.url).origin) return { params: location.searchParams, uid };
    next = location.href;
  }
  throw new Error('the sign-in never returned to the client');
}

/** One free MCP call (get_account) with an access token, as a client sends it. */
export function mcpCallWith(server: TestServer, token: string): Promise<TestResponse> {
  return server.request('POST', MCP_PATH, {
    headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json' },
    raw: JSON.stringify(toolCall('get_account', {})),
  });
}
