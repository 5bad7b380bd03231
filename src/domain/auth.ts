/** Turns presented credentials into a Caller. Keys are looked up by SHA-256 digest only. */
import { AppError } from '../errors.ts';
import type { KeyContext, Ledger } from '../store/port.ts';
import type { Caller } from './caller.ts';
import type { OAuthServer } from './connections.ts';
import { digestKey, digestsEqual, looksLikeKey } from './keys.ts';
import type { Channel } from './pricing.ts';
import { keyExpiresAt } from './public-test.ts';
import type { Sessions } from './sessions.ts';

export interface PresentedCredential {
  /** The token from `Authorization: Bearer`, `X-API-Key`, or the session cookie. */
  token: string;
}

const jwtShape = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** An OAuth access token of ours: 43 base64url characters (node-oidc-provider's opaque format). */
const looksLikeAccessToken = (token: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(token);

/** Whether a token has the shape of a session JWT (three base64url parts, of a sane length). */
export const looksLikeSession = (token: string): boolean => token.length < 4096 && jwtShape.test(token);

export class Authenticator {
  readonly #store: Ledger;
  readonly #sessions: Sessions;
  readonly #now: () => number;
  readonly #publicTestEndsAt: () => number | null;
  readonly #oauth: OAuthServer | null;

  constructor(
    store: Ledger,
    sessions: Sessions,
    now: () => number,
    publicTestEndsAt: () => number | null,
    oauth: OAuthServer | null = null,
  ) {
    this.#store = store;
    this.#sessions = sessions;
    this.#now = now;
    this.#publicTestEndsAt = publicTestEndsAt;
    this.#oauth = oauth;
  }

  async authenticate(token: string, channel: Channel): Promise<Caller> {
    if (token.startsWith('tmd_')) return this.#byKey(token, channel);
    if (looksLikeSession(token)) return this.#bySession(token, channel);
    if (this.#oauth && looksLikeAccessToken(token)) return this.#byAccessToken(this.#oauth, token, channel);
    throw new AppError('invalid_key', 'The key is not a valid key of this service.');
  }

  async #byKey(secret: string, channel: Channel): Promise<Caller> {
    if (!looksLikeKey(secret))
      throw new AppError('invalid_key', 'The key is not a valid key of this service.');
    const digest = digestKey(secret);
    const found = await this.#store.findKeyByDigest(digest);
    if (!found || !digestsEqual(found.key.digest, digest)) {
      throw new AppError('invalid_key', 'The key is not a valid key of this service.');
    }
    return this.#asCaller(found, channel);
  }

  /**
   * An OAuth access token reads as the key of its connection. It is issued for the MCP endpoint (its
   * audience, checked by verifyAccessToken) and taken nowhere else.
   */
  async #byAccessToken(oauth: OAuthServer, token: string, channel: Channel): Promise<Caller> {
    const invalid = () =>
      new AppError(
        'invalid_token',
        'The access token is not valid here: it is unknown, expired, revoked or issued for another resource.',
      );
    if (channel !== 'mcp') throw invalid();
    const granted = await oauth.verifyAccessToken(token);
    const key = granted ? await this.#store.getKey(granted.keyId) : null;
    const found = key ? await this.#store.findKeyByDigest(key.digest) : null;
    if (!found || found.key.id !== granted?.keyId) throw invalid();
    if (found.key.revokedAt !== null)
      throw new AppError(
        'invalid_token',
        "This connection was revoked on the account's Keys page: sign in again from the client to reconnect.",
      );
    return this.#asCaller(found, channel);
  }

  #asCaller(found: KeyContext, channel: Channel): Caller {
    const { key, wallet, account } = found;
    const now = this.#now();
    if (key.revokedAt !== null) throw new AppError('key_revoked', 'This key has been revoked.');
    const expiresAt = keyExpiresAt(key, this.#publicTestEndsAt());
    if (expiresAt !== null && expiresAt <= now) {
      throw new AppError('key_expired', `This key expired at ${new Date(expiresAt).toISOString()}.`, {
        expired_at: new Date(expiresAt).toISOString(),
      });
    }
    return { kind: key.kind, key, account, wallet, channel, expiresAt };
  }

  async #bySession(token: string, channel: Channel): Promise<Caller> {
    const claims = await this.#sessions.verify(token);
    const account = await this.#store.getAccount(claims.accountId);
    if (!account) throw new AppError('invalid_session', 'The session token is not valid.');
    const wallet = await this.#store.getWallet(account.walletId);
    if (!wallet) throw new AppError('invalid_session', 'The session token is not valid.');
    // A Terminal session's reads carry the Terminal surcharge whatever face they come through.
    const effective: Channel = claims.channel === 'terminal' ? 'terminal' : channel;
    return {
      kind: 'session',
      key: null,
      account,
      wallet,
      channel: effective,
      expiresAt: claims.expiresAt,
      sessionId: claims.sessionId,
    };
  }
}
