/**
 * OAuth connections (MCP authorization): a hosted agent signs in through the service's own OAuth server
 * and the account approves it in the Terminal. Each approved connection is a live key of the account
 * whose secret nobody holds: its OAuth tokens read as that key (API price, the account's tier, package
 * and limits, the key's own spending caps, the same ledger), and revoking the key ends the connection.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../errors.ts';
import type { OAuthConnection } from '../store/oauth-port.ts';
import type { AccountRecord, KeyRecord, Ledger } from '../store/port.ts';
import type { Caller } from './caller.ts';
import { newId } from './ids.ts';
import { newKey } from './keys.ts';

/** What the OAuth server asks the account to approve. */
export interface PendingConsent {
  uid: string;
  clientId: string;
  clientName: string;
  /** Where the client is sent back: its host is shown, so a user can tell a look-alike. */
  redirectUri: string;
  scopes: string[];
  resource: string;
  expiresAt: number;
}

/** The OAuth authorization server, as the domain uses it (its adapter wraps node-oidc-provider). */
export interface OAuthServer {
  /** The protected resource (the MCP endpoint's URL) tokens must be issued for. */
  readonly resource: string;
  /** Where its RFC 9728 metadata is served: named in every 401 of the MCP endpoint. */
  readonly resourceMetadataUrl: string;
  /** Serves an OAuth endpoint or the server's discovery document from the raw request. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** RFC 9728 metadata of the MCP endpoint. */
  resourceMetadata(): Record<string, unknown>;
  /** The key an access token for `resource` was issued to, or null (unknown, expired, other audience). */
  verifyAccessToken(token: string): Promise<{ keyId: string } | null>;
  pending(uid: string): Promise<PendingConsent | null>;
  /** Finishes the interaction as approved for the key; returns where the browser goes next. */
  approve(consent: PendingConsent, keyId: string): Promise<string>;
  /** Finishes the interaction as refused; returns where the browser goes next. */
  deny(uid: string): Promise<string>;
}

export interface ConnectionCaps {
  dailyCapMicros: bigint | null;
  monthlyCapMicros: bigint | null;
}

export interface ConnectionView {
  connection: OAuthConnection;
  key: KeyRecord;
}

const notPending = () =>
  new AppError(
    'not_found',
    'This sign-in request is unknown or has expired: start the connection again from the client.',
  );

export class Connections {
  readonly #store: Ledger;
  readonly #server: OAuthServer | null;
  readonly #now: () => number;

  constructor(store: Ledger, server: OAuthServer | null, now: () => number) {
    this.#store = store;
    this.#server = server;
    this.#now = now;
  }

  get enabled(): boolean {
    return this.#server !== null;
  }

  #oauth(): OAuthServer {
    if (!this.#server)
      throw new AppError('not_found', 'OAuth sign-in is off on this service (BASE_URL is not set).');
    return this.#server;
  }

  async pending(uid: string): Promise<PendingConsent> {
    const consent = await this.#oauth().pending(uid);
    if (!consent) throw notPending();
    return consent;
  }

  /** Approves a pending sign-in for the caller's account: a new connection with its caps. */
  async approve(
    caller: Caller,
    uid: string,
    caps: ConnectionCaps,
  ): Promise<{ redirectTo: string; view: ConnectionView }> {
    const account = accountOf(caller);
    const server = this.#oauth();
    const consent = await server.pending(uid);
    if (!consent) throw notPending();
    const now = this.#now();
    const fresh = newKey('live');
    const key: KeyRecord = {
      id: newId('key'),
      kind: 'live',
      digest: fresh.digest,
      displayPrefix: 'OAuth',
      name: consent.clientName,
      accountId: account.id,
      walletId: account.walletId,
      createdAt: now,
      expiresAt: null,
      revokedAt: null,
      dailyCapMicros: caps.dailyCapMicros,
      monthlyCapMicros: caps.monthlyCapMicros,
    };
    const connection: OAuthConnection = {
      keyId: key.id,
      accountId: account.id,
      clientId: consent.clientId,
      clientName: consent.clientName,
      redirectHost: new URL(consent.redirectUri).host,
      createdAt: now,
    };
    await this.#store.insertKey(key);
    await this.#store.insertOAuthConnection(connection);
    const redirectTo = await server.approve(consent, key.id);
    return { redirectTo, view: { connection, key } };
  }

  async deny(caller: Caller, uid: string): Promise<string> {
    accountOf(caller);
    const server = this.#oauth();
    if (!(await server.pending(uid))) throw notPending();
    return server.deny(uid);
  }

  /** The account's connections, newest first, with their keys (caps, revocation). */
  async list(caller: Caller): Promise<ConnectionView[]> {
    const account = accountOf(caller);
    const [connections, keys] = await Promise.all([
      this.#store.listOAuthConnections(account.id),
      this.#store.listKeys(account.id),
    ]);
    const byId = new Map(keys.map((k) => [k.id, k]));
    return connections.flatMap((connection) => {
      const key = byId.get(connection.keyId);
      return key ? [{ connection, key }] : [];
    });
  }
}

function accountOf(caller: Caller): AccountRecord {
  if (!caller.account)
    throw new AppError('forbidden', 'Connections are approved by a logged-in account session.');
  return caller.account;
}
