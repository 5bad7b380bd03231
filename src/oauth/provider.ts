/**
 * The service's OAuth 2.1 authorization server for MCP, on node-oidc-provider (the certified reference
 * implementation; hand-written OAuth flows are where the security bugs live). It issues opaque access
 * tokens for one resource, the MCP endpoint: authorization code with PKCE (S256), resource indicators
 * (RFC 8707), the `iss` response parameter (RFC 9207), rotating refresh tokens, dynamic registration
 * (RFC 7591) and client ID metadata documents. Login and consent happen in the Terminal
 * (/terminal/connect/<uid>); the provider's records live in the store (`oauth_records`).
 */
import { createHmac, createPrivateKey, createPublicKey } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider, { type Adapter, type AdapterPayload, type Configuration, errors } from 'oidc-provider';
import type { OAuthServer, PendingConsent } from '../domain/connections.ts';
import type { OAuthStore } from '../store/oauth-port.ts';
import type { KeyRecord } from '../store/port.ts';

export const MCP_SCOPE = 'mcp';
/** Scopes clients may register and ask for: `mcp` is also the resource's (getResourceServerInfo). */
const SCOPES = [MCP_SCOPE, 'offline_access'];
const ACCESS_TOKEN_TTL_S = 3600;
/** Expired records dropped with each write of a record. */
const PRUNE_PER_WRITE = 20;
const REFRESH_TOKEN_TTL_S = 30 * 86_400;

/** The Terminal page where a signed-in user approves a connection. */
export const consentPath = (uid: string) => `/terminal/connect/${encodeURIComponent(uid)}`;

export interface OAuthOptions {
  /** The service's public origin (BASE_URL): the issuer, and the base of the MCP resource. */
  baseUrl: string;
  mcpPath: string;
  /** Secret the signing key and cookie keys are derived from (the session secret). */
  secret: Buffer;
  store: OAuthStore;
  getKey(id: string): Promise<KeyRecord | null>;
  now: () => number;
  /** Behind a proxy that sets X-Forwarded-Proto (TRUST_PROXY): honour it. */
  proxy: boolean;
  /**
   * How client ID metadata documents are fetched; the library's default refuses private and loopback
   * addresses. Tests pass one that reaches their local document server.
   */
  fetch?: typeof globalThis.fetch;
}

function derive(secret: Buffer, purpose: string): Buffer {
  return createHmac('sha256', secret).update(`oauth:${purpose}`).digest();
}

/** An Ed25519 signing key from a 32-byte seed, as a private JWK (every node derives the same one). */
function signingJwk(seed: Buffer) {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  const jwk = key.export({ format: 'jwk' });
  const kid = createHmac('sha256', createPublicKey(key).export({ format: 'der', type: 'spki' }))
    .update('kid')
    .digest('base64url')
    .slice(0, 16);
  return { ...jwk, kid, alg: 'Ed25519', use: 'sig' };
}

/** The library's storage contract over the store: one JSON record per model and id. */
function storeAdapter(store: OAuthStore, now: () => number) {
  return class StoreAdapter implements Adapter {
    readonly #model: string;
    constructor(model: string) {
      this.#model = model;
    }
    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      // Bounded upkeep: a few expired codes, tokens and interactions go with each write.
      await store.pruneOAuthRecords(now(), PRUNE_PER_WRITE);
      await store.upsertOAuthRecord(this.#model, id, {
        payload: JSON.stringify(payload),
        grantId: payload.grantId ?? null,
        uid: payload.uid ?? null,
        userCode: payload.userCode ?? null,
        expiresAt: expiresIn ? now() + expiresIn * 1000 : null,
      });
    }
    async find(id: string): Promise<AdapterPayload | undefined> {
      return payloadOf(await store.findOAuthRecord(this.#model, id, now()));
    }
    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return payloadOf(await store.findOAuthRecordBy(this.#model, 'uid', uid, now()));
    }
    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return payloadOf(await store.findOAuthRecordBy(this.#model, 'user_code', userCode, now()));
    }
    async consume(id: string): Promise<void> {
      await store.consumeOAuthRecord(this.#model, id, now());
    }
    async destroy(id: string): Promise<void> {
      await store.destroyOAuthRecord(this.#model, id);
    }
    async revokeByGrantId(grantId: string): Promise<void> {
      await store.revokeOAuthGrant(grantId);
    }
  };
}

function payloadOf(
  record: { payload: string; consumedAt: number | null } | null,
): AdapterPayload | undefined {
  if (!record) return undefined;
  const payload = JSON.parse(record.payload) as AdapterPayload;
  // The library tells a replayed authorization code by `consumed` (seconds).
  if (record.consumedAt !== null) payload.consumed = Math.floor(record.consumedAt / 1000);
  return payload;
}

const asList = (value: unknown): string[] =>
  Array.isArray(value) ? value.map(String) : typeof value === 'string' && value ? [value] : [];

export class OidcOAuthServer implements OAuthServer {
  readonly resource: string;
  readonly resourceMetadataUrl: string;
  readonly issuer: string;
  readonly #provider: Provider;
  readonly #handler: (req: IncomingMessage, res: ServerResponse) => void;

  constructor(options: OAuthOptions) {
    const base = new URL(options.baseUrl);
    this.issuer = base.origin;
    this.resource = `${base.origin}${options.mcpPath}`;
    this.resourceMetadataUrl = `${base.origin}/.well-known/oauth-protected-resource${options.mcpPath}`;
    const resource = this.resource;
    const signing = signingJwk(derive(options.secret, 'signing').subarray(0, 32));
    const configuration: Configuration = {
      adapter: storeAdapter(options.store, options.now),
      clients: [],
      async findAccount(_ctx, sub) {
        // The subject is the connection's key: a revoked key signs nobody in and refreshes nothing.
        const key = await options.getKey(sub);
        if (!key || key.revokedAt !== null) return undefined;
        return { accountId: sub, claims: () => ({ sub }) };
      },
      jwks: { keys: [signing] },
      cookies: { keys: [derive(options.secret, 'cookies').toString('base64url')] },
      scopes: SCOPES,
      claims: { openid: ['sub'] },
      responseTypes: ['code'],
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        id_token_signed_response_alg: 'Ed25519',
      },
      enabledJWA: { idTokenSigningAlgValues: ['Ed25519'] },
      pkce: { required: () => true },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        revocation: { enabled: true },
        clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => resource,
          useGrantedResource: () => true,
          getResourceServerInfo(_ctx, indicator) {
            if (indicator !== resource) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
            return {
              scope: MCP_SCOPE,
              audience: resource,
              accessTokenTTL: ACCESS_TOKEN_TTL_S,
              accessTokenFormat: 'opaque',
            };
          },
        },
      },
      // Every authorization asks the account again: each approval is its own connection with its caps.
      async loadExistingGrant(ctx) {
        const grantId = ctx.oidc.result?.consent?.grantId;
        return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
      },
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      ttl: {
        AccessToken: ACCESS_TOKEN_TTL_S,
        AuthorizationCode: 60,
        RefreshToken: REFRESH_TOKEN_TTL_S,
        Interaction: 600,
        Session: 600,
        Grant: REFRESH_TOKEN_TTL_S,
      },
      interactions: { url: (_ctx, interaction) => consentPath(interaction.uid) },
      routes: {
        authorization: '/oauth/authorize',
        token: '/oauth/token',
        registration: '/oauth/register',
        revocation: '/oauth/revoke',
        jwks: '/oauth/jwks',
        userinfo: '/oauth/userinfo',
        end_session: '/oauth/logout',
        pushed_authorization_request: '/oauth/par',
      },
      ...(options.fetch && { fetch: options.fetch }),
    };
    this.#provider = new Provider(this.issuer, configuration);
    this.#provider.proxy = options.proxy;

    this.#handler = this.#provider.callback();
  }

  /** Serves an OAuth endpoint (or its discovery document) from the raw request. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    this.#handler(req, res);
  }

  resourceMetadata(): Record<string, unknown> {
    return {
      resource: this.resource,
      authorization_servers: [this.issuer],
      scopes_supported: [MCP_SCOPE],
      bearer_methods_supported: ['header'],
      resource_name: 'Token-metered data (MCP)',
      resource_documentation: `${this.issuer}/manual/agents`,
    };
  }

  async verifyAccessToken(token: string): Promise<{ keyId: string } | null> {
    const found = await this.#provider.AccessToken.find(token);
    if (!found?.accountId || found.isExpired) return null;
    const audience = asList(found.aud);
    if (audience.length !== 1 || audience[0] !== this.resource) return null;
    if (!found.scopes.has(MCP_SCOPE)) return null;
    return { keyId: found.accountId };
  }

  async pending(uid: string): Promise<PendingConsent | null> {
    const interaction = await this.#provider.Interaction.find(uid);
    if (!interaction || interaction.result) return null;
    const params = interaction.params as Record<string, unknown>;
    const client = await this.#provider.Client.find(String(params.client_id));
    if (!client) return null;
    const resources = asList(params.resource);
    return {
      uid,
      clientId: client.clientId,
      clientName: String(client.metadata().client_name ?? client.clientId),
      redirectUri: String(params.redirect_uri),
      scopes: String(params.scope ?? MCP_SCOPE)
        .split(' ')
        .filter((s) => s !== ''),
      resource: resources[0] ?? this.resource,
      expiresAt: interaction.exp * 1000,
    };
  }

  async approve(consent: PendingConsent, keyId: string): Promise<string> {
    const interaction = await this.#provider.Interaction.find(consent.uid);
    if (!interaction) throw new Error('the interaction expired');
    const grant = new this.#provider.Grant({ accountId: keyId, clientId: consent.clientId });
    grant.addResourceScope(this.resource, MCP_SCOPE);
    // What was asked for among the server's scopes, so the provider finds nothing left to consent to.
    const granted = consent.scopes.filter((s) => s === 'openid' || SCOPES.includes(s));
    if (granted.length > 0) grant.addOIDCScope(granted.join(' '));
    const grantId = await grant.save();
    interaction.result = { login: { accountId: keyId }, consent: { grantId } };
    await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
    return interaction.returnTo;
  }

  async deny(uid: string): Promise<string> {
    const interaction = await this.#provider.Interaction.find(uid);
    if (!interaction) throw new Error('the interaction expired');
    interaction.result = {
      error: 'access_denied',
      error_description: 'The account holder declined the connection.',
    };
    await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
    return interaction.returnTo;
  }
}
