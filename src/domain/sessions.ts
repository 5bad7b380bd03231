/** Session JWTs for login accounts: HS256 pinned, 12 hours, revocable through the store. */
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { AppError } from '../errors.ts';
import type { Ledger, SessionRecord } from '../store/port.ts';
import { newId } from './ids.ts';
import type { Channel } from './pricing.ts';

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const ALGORITHM = 'HS256';
const ISSUER = 'token-metered-data';

export interface SessionClaims {
  sessionId: string;
  accountId: string;
  channel: Extract<Channel, 'rest' | 'terminal'>;
  expiresAt: number;
}

export class Sessions {
  readonly #store: Ledger;
  readonly #secret: Uint8Array;
  readonly #now: () => number;

  constructor(store: Ledger, secret: Uint8Array, now: () => number) {
    this.#store = store;
    this.#secret = secret;
    this.#now = now;
  }

  async issue(
    accountId: string,
    channel: SessionClaims['channel'],
  ): Promise<{ token: string; session: SessionRecord }> {
    const now = this.#now();
    const session: SessionRecord = {
      id: newId('ses'),
      accountId,
      createdAt: now,
      expiresAt: now + SESSION_TTL_MS,
      revokedAt: null,
    };
    await this.#store.createSession(session);
    const token = await new SignJWT({ chn: channel })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(accountId)
      .setJti(session.id)
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor(session.expiresAt / 1000))
      .sign(this.#secret);
    return { token, session };
  }

  async verify(token: string): Promise<SessionClaims> {
    let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
    try {
      ({ payload } = await jwtVerify(token, this.#secret, {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        currentDate: new Date(this.#now()),
      }));
    } catch (error) {
      const expired = error instanceof joseErrors.JWTExpired;
      throw new AppError(
        'invalid_session',
        expired ? 'The session has expired: log in again.' : 'The session token is not valid.',
      );
    }
    const sessionId = payload.jti;
    const accountId = payload.sub;
    if (typeof sessionId !== 'string' || typeof accountId !== 'string' || typeof payload.exp !== 'number') {
      throw new AppError('invalid_session', 'The session token is not valid.');
    }
    const session = await this.#store.getSession(sessionId);
    if (!session || session.accountId !== accountId)
      throw new AppError('invalid_session', 'The session token is not valid.');
    if (session.revokedAt !== null)
      throw new AppError('invalid_session', 'The session has ended (logged out).');
    // The stored end holds too, whatever the token says (one signed with a leaked secret and a later exp).
    if (session.expiresAt <= this.#now())
      throw new AppError('invalid_session', 'The session has expired: log in again.');
    return {
      sessionId,
      accountId,
      channel: payload.chn === 'terminal' ? 'terminal' : 'rest',
      expiresAt: session.expiresAt,
    };
  }

  async revoke(sessionId: string): Promise<void> {
    await this.#store.revokeSession(sessionId, this.#now());
  }
}
