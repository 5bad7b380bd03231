/**
 * Password reset by email. Asking for a link answers the same whether or not the email has an account
 * (no enumeration); only an existing account is mailed. The link's token is random, kept as its SHA-256
 * digest only, works once and expires. Using it sets the new password and ends every session of the
 * account; the account's API keys are left as they are (its owner revokes them on the Keys page).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ServiceFile } from '../config.ts';
import { AppError } from '../errors.ts';
import type { Limiter } from '../limits/port.ts';
import type { Ledger } from '../store/port.ts';
import { networkDigest } from './client-network.ts';
import type { Mailer } from './mail.ts';
import { hashPassword } from './passwords.ts';

const HOUR_MS = 3_600_000;

/** The page of the Terminal that takes a reset link's token. */
export const RESET_PAGE = '/terminal/reset-password';

export interface PasswordResetDeps {
  store: Ledger;
  limiter: Limiter;
  /** Null when no SMTP server is configured: password reset is then unavailable (503). */
  mailer: Mailer | null;
  config: ServiceFile;
  now: () => number;
  /** Secret that salts IP digests, so the request counters never hold a raw address. */
  ipSalt: string;
  /** A mail the SMTP server did not accept (sent after the answer, so only the log hears of it). */
  onMailFailure: (error: unknown) => void;
}

const digestOf = (value: string): string => createHash('sha256').update(value).digest('hex');

function invalidLink(why: string): AppError {
  return new AppError(
    'invalid_reset_token',
    `${why} Ask for a new link: "Forgot password?" on the sign-in page.`,
  );
}

export class PasswordResets {
  readonly #deps: PasswordResetDeps;

  constructor(deps: PasswordResetDeps) {
    this.#deps = deps;
  }

  /**
   * Mails a reset link to the account with this email, if there is one, and answers the same either
   * way. `origin` is where the link points: the service's public address.
   */
  async request(email: string, clientIp: string, origin: string): Promise<void> {
    const { mailer, store, config } = this.#deps;
    if (!mailer) {
      throw new AppError(
        'password_reset_unavailable',
        'Password reset by email is not set up on this service (its operator configured no SMTP server).',
      );
    }
    const policy = config.password_reset;
    const normalized = email.trim().toLowerCase();
    // Counted whether or not the email has an account, so a refusal tells nothing about it either.
    await this.#limit(
      `reset-ip:${networkDigest(this.#deps.ipSalt, clientIp)}`,
      policy.requests_per_ip_per_hour,
    );
    await this.#limit(`reset-email:${digestOf(normalized)}`, policy.requests_per_email_per_hour);
    const account = await store.findAccountByEmail(normalized);
    if (!account || account.email === null) return;
    const now = this.#deps.now();
    const token = randomBytes(32).toString('base64url');
    const expiresAt = now + policy.link_ttl_minutes * 60_000;
    await store.insertPasswordReset({
      digest: digestOf(token),
      accountId: account.id,
      createdAt: now,
      expiresAt,
      usedAt: null,
    });
    const link = `${origin}${RESET_PAGE}?token=${token}`;
    // Sent after the answer: waiting for the SMTP server only when the account exists would tell by timing.
    mailer
      .send({
        to: account.email,
        subject: 'Reset your password',
        text: [
          `Someone, hopefully you, asked to reset the password of the account ${account.email} at ${origin}.`,
          '',
          `Choose a new password here. The link works once, until ${new Date(expiresAt).toISOString().slice(0, 16).replace('T', ' ')} UTC:`,
          link,
          '',
          'Resetting the password ends every session of the account (every signed-in browser); its API keys keep working.',
          'If you did not ask for this, ignore this mail: the password stays as it is.',
          '',
        ].join('\n'),
      })
      .catch(this.#deps.onMailFailure);
  }

  /** Sets the new password with a link's token; ends every session of the account. */
  async confirm(token: string, password: string): Promise<{ sessionsEnded: number }> {
    const { store } = this.#deps;
    const digest = digestOf(token);
    const reset = await store.findPasswordReset(digest);
    const now = this.#deps.now();
    if (!reset) throw invalidLink('This password-reset link is not valid (it may be incomplete).');
    if (reset.usedAt !== null) throw invalidLink('This password-reset link has already been used.');
    if (reset.expiresAt <= now) {
      throw invalidLink(`This password-reset link expired at ${new Date(reset.expiresAt).toISOString()}.`);
    }
    // Hashed before the token is spent: a failure here leaves the link usable.
    const passwordHash = await hashPassword(password);
    const done = await store.completePasswordReset(digest, passwordHash, this.#deps.now());
    if (!done) throw invalidLink('This password-reset link has already been used.');
    return { sessionsEnded: done.sessionsEnded };
  }

  async #limit(key: string, perHour: number): Promise<void> {
    const decision = await this.#deps.limiter.hit(key, perHour, HOUR_MS, this.#deps.now());
    if (decision.allowed) return;
    const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    throw new AppError(
      'password_reset_limited',
      `Too many password-reset requests; try again in ${retryAfter} seconds. A link already sent works until it expires.`,
      { retry_after: retryAfter },
      { 'retry-after': String(retryAfter) },
    );
  }
}
