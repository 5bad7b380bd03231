/** Issuing and managing credentials: sandbox keys, public-test registration, wallet keys, logins. */
import { createHash } from 'node:crypto';
import type { ServiceFile } from '../config.ts';
import { AppError } from '../errors.ts';
import type { Limiter } from '../limits/port.ts';
import type { AccountRecord, KeyRecord, Ledger } from '../store/port.ts';
import { networkDigest } from './client-network.ts';
import { newId } from './ids.ts';
import { type KeyKind, newKey } from './keys.ts';
import { tokensToMicros } from './money.ts';
import { decoyHash, hashPassword, needsRehash, verifyPassword } from './passwords.ts';
import { utcMonth } from './pricing.ts';
import { publicTestWindowEnd } from './public-test.ts';
import type { Sessions } from './sessions.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
export const SIGNUP_GRANT_IDEMPOTENCY_KEY = 'signup-grant';

export interface IssuedKey {
  /** The key string: shown once, never stored. */
  secret: string;
  record: KeyRecord;
}

export interface CredentialDeps {
  store: Ledger;
  limiter: Limiter;
  sessions: Sessions;
  config: ServiceFile;
  now: () => number;
  /** Secret that salts IP digests, so the issuance counter never holds a raw address. */
  ipSalt: string;
}

function keyRecord(
  kind: KeyKind,
  fresh: ReturnType<typeof newKey>,
  walletId: string,
  accountId: string | null,
  now: number,
  expiresAt: number | null,
  name: string | null = null,
): KeyRecord {
  return {
    id: newId('key'),
    kind,
    digest: fresh.digest,
    displayPrefix: fresh.displayPrefix,
    name,
    accountId,
    walletId,
    createdAt: now,
    expiresAt,
    revokedAt: null,
    dailyCapMicros: null,
    monthlyCapMicros: null,
  };
}

/** Password checks in progress at once from one client IP, across every node. */
export const LOGIN_GUESSES_PER_IP = 4;

function throttled(retryAfter: number): AppError {
  return new AppError(
    'login_throttled',
    `Too many login attempts; try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`,
    { retry_after: retryAfter },
    { 'retry-after': String(retryAfter) },
  );
}

export class Credentials {
  readonly #deps: CredentialDeps;

  constructor(deps: CredentialDeps) {
    this.#deps = deps;
  }

  async issueSandbox(clientIp: string): Promise<IssuedKey & { grantMicros: bigint }> {
    const { config, store } = this.#deps;
    if (!config.sandbox.enabled) throw new AppError('forbidden', 'Sandbox key issuance is switched off.');
    const now = this.#deps.now();
    const cap = config.limits.sandbox.issuance_per_ip_per_day;
    await this.#issuancePerIp(
      'issuance',
      cap,
      clientIp,
      now,
      `At most ${cap} sandbox keys per IP address in 24 hours. A registered public-test key (POST /api/v1/auth/public-test) has higher limits.`,
    );
    const walletId = newId('wal');
    await store.createWallet(walletId, null, utcMonth(now));
    const grantMicros = tokensToMicros(config.sandbox.token_grant);
    if (grantMicros > 0n) {
      await store.credit({
        walletId,
        kind: 'grant',
        amountMicros: grantMicros,
        at: now,
        memo: 'sandbox grant',
      });
    }
    const fresh = newKey('sandbox');
    const record = keyRecord('sandbox', fresh, walletId, null, now, now + config.sandbox.ttl_hours * HOUR_MS);
    await store.insertKey(record);
    return { secret: fresh.secret, record, grantMicros };
  }

  /**
   * Counts one issuance against the client IP's cap over 24 hours (sandbox keys, new public-test
   * accounts: each comes with a grant), refusing with 429 issuance_limited once the cap is reached.
   */
  async #issuancePerIp(kind: string, cap: number, clientIp: string, now: number, refusal: string) {
    const decision = await this.#deps.limiter.hit(`${kind}:${this.#ipDigest(clientIp)}`, cap, DAY_MS, now);
    if (decision.allowed) return;
    const retryAfter = Math.ceil(decision.retryAfterMs / 1000);
    throw new AppError(
      'issuance_limited',
      refusal,
      { retry_after: retryAfter },
      { 'retry-after': String(retryAfter) },
    );
  }

  /** The instant the account's public-test window closes: start + window_days, or ends_at if sooner. */
  publicTestWindowEnd(account: AccountRecord): number | null {
    return publicTestWindowEnd(this.#deps.config, account);
  }

  /**
   * Registers an email for the public test: a new account with its grant and key. An email that has an
   * account is refused with 409 account_exists unless `rotateKey` asks, with the right password, to
   * replace the account's public-test key. The refusal is counted against the client IP's cap of new
   * accounts, as probing whether emails are taken is what it answers.
   */
  async registerPublicTest(
    email: string,
    password: string,
    clientIp: string,
    rotateKey = false,
  ): Promise<
    IssuedKey & {
      account: AccountRecord;
      created: boolean;
      rotated: boolean;
      grantCredited: boolean;
      balanceMicros: bigint;
    }
  > {
    const { config, store } = this.#deps;
    const fpt = config.pricing.free_public_test;
    if (!fpt.enabled || !fpt.issuance_enabled)
      throw new AppError('forbidden', 'Public-test registration is closed.');
    const now = this.#deps.now();
    if (fpt.ends_at !== null && Date.parse(fpt.ends_at) <= now) {
      throw new AppError('public_test_window_closed', 'The free public test has ended.');
    }
    const normalized = email.trim().toLowerCase();
    const cap = config.limits.public_test.registrations_per_ip_per_day;
    const capRefusal = `At most ${cap} new public-test accounts per IP address in 24 hours (registering an email that has an account counts too). An existing account signs in, or replaces its key with "rotate_key": true and its password.`;
    const existing = async (found: AccountRecord): Promise<void> => {
      if (rotateKey) return this.#checkPassword(found, normalized, password, clientIp);
      await this.#issuancePerIp('registration', cap, clientIp, now, capRefusal);
      throw new AppError(
        'account_exists',
        'An account with this email exists: sign in (or reset your password). To replace its public-test key, register again with "rotate_key": true and its password.',
      );
    };
    let account = await store.findAccountByEmail(normalized);
    let created = false;
    if (account) {
      await existing(account);
    } else {
      // Each new account is credited the signup grant: new accounts per address are capped; a new key
      // for an existing account is not counted.
      await this.#issuancePerIp('registration', cap, clientIp, now, capRefusal);
      const passwordHash = await hashPassword(password);
      try {
        account = await store.createAccount(
          {
            id: newId('acc'),
            email: normalized,
            passwordHash,
            walletId: newId('wal'),
            createdAt: now,
            publicTestStartedAt: now,
          },
          utcMonth(now),
        );
        created = true;
      } catch {
        // Two registrations raced for the same email: the other one created it.
        account = await store.findAccountByEmail(normalized);
        if (!account) throw new AppError('conflict', 'Registration conflicted with another; try again.');
        await existing(account);
      }
    }
    if (account.publicTestStartedAt === null) {
      await store.updateAccount(account.id, { publicTestStartedAt: now });
      account = { ...account, publicTestStartedAt: now };
    }
    const windowEnd = this.publicTestWindowEnd(account) as number;
    if (windowEnd <= now) {
      throw new AppError(
        'public_test_window_closed',
        `The ${fpt.window_days}-day public-test window of this account closed at ${new Date(windowEnd).toISOString()}.`,
        { closed_at: new Date(windowEnd).toISOString() },
      );
    }
    const grant = await store.credit({
      walletId: account.walletId,
      kind: 'grant',
      amountMicros: tokensToMicros(config.pricing.how_you_pay.signup_grant_tokens_default),
      at: now,
      idempotencyKey: SIGNUP_GRANT_IDEMPOTENCY_KEY,
      memo: 'public-test signup grant',
    });
    const fresh = newKey('public_test');
    const expiresAt = Math.min(now + fpt.key_ttl_days * DAY_MS, windowEnd);
    const record = keyRecord('public_test', fresh, account.walletId, account.id, now, expiresAt);
    // Rotated: a public-test key that still worked is revoked by this one (an account an operator made,
    // registering for the first time, had none).
    const replaced = created
      ? false
      : (await store.listKeys(account.id)).some(
          (k) =>
            k.kind === 'public_test' && k.revokedAt === null && (k.expiresAt === null || k.expiresAt > now),
        );
    await store.replaceKeys(account.id, 'public_test', record, now);
    const wallet = await store.getWallet(account.walletId);
    return {
      balanceMicros: wallet?.balanceMicros ?? 0n,
      secret: fresh.secret,
      record,
      account,
      created,
      rotated: replaced,
      grantCredited: !grant.duplicate,
    };
  }

  /**
   * Wrong passwords are throttled per account and per client IP (counted failures in a sliding window),
   * checked before the password so a throttled guess learns nothing. A check and the count of its
   * failure are two steps, so guesses sent in parallel would all pass the check first: each guess holds
   * a slot while it is checked (one per account, LOGIN_GUESSES_PER_IP per IP, across every node), and
   * a guess that finds the slot taken is throttled for a second.
   */
  async #checkPassword(
    account: AccountRecord | null,
    email: string,
    password: string,
    clientIp: string,
  ): Promise<void> {
    const { limiter } = this.#deps;
    const now = this.#deps.now();
    const ipKey = `login-ip:${this.#ipDigest(clientIp)}`;
    const accountKey = `login-acct:${createHash('sha256').update(email).digest('hex')}`;
    const held: [string, string][] = [];
    try {
      for (const [key, max] of [
        [`${accountKey}:checking`, 1],
        [`${ipKey}:checking`, LOGIN_GUESSES_PER_IP],
      ] as const) {
        const slot = await limiter.admit({ now, windows: [], slot: { key, max, leaseMs: 30_000 } });
        if (!slot.allowed || slot.slotId === null) throw throttled(1);
        held.push([key, slot.slotId]);
      }
      await this.#checkPasswordOnce(account, password, accountKey, ipKey, now);
    } finally {
      await Promise.all(held.map(([key, id]) => limiter.release(key, id).catch(() => {})));
    }
  }

  async #checkPasswordOnce(
    account: AccountRecord | null,
    password: string,
    accountKey: string,
    ipKey: string,
    now: number,
  ): Promise<void> {
    const { limiter, config } = this.#deps;
    const policy = config.limits.login;
    const windowMs = policy.window_minutes * 60_000;
    const [byAccount, byIp] = await Promise.all([
      limiter.peek(accountKey, policy.failures_per_account, windowMs, now),
      limiter.peek(ipKey, policy.failures_per_ip, windowMs, now),
    ]);
    const blocked = [byAccount, byIp].find((d) => !d.allowed);
    if (blocked) throw throttled(Math.max(1, Math.ceil(blocked.retryAfterMs / 1000)));
    const ok = await verifyPassword(password, account?.passwordHash ?? decoyHash);
    if (!ok || !account || account.passwordHash === null) {
      await Promise.all([
        limiter.hit(accountKey, Number.MAX_SAFE_INTEGER, windowMs, now),
        limiter.hit(ipKey, Number.MAX_SAFE_INTEGER, windowMs, now),
      ]);
      throw new AppError('invalid_login', 'Wrong email or password.');
    }
    // A hash of an older scheme or weaker parameters is replaced while the password is at hand.
    if (needsRehash(account.passwordHash)) {
      await this.#deps.store.updateAccount(account.id, { passwordHash: await hashPassword(password) });
    }
  }

  #ipDigest(clientIp: string): string {
    return networkDigest(this.#deps.ipSalt, clientIp);
  }

  async login(email: string, password: string, channel: 'rest' | 'terminal', clientIp: string) {
    const normalized = email.trim().toLowerCase();
    const account = await this.#deps.store.findAccountByEmail(normalized);
    await this.#checkPassword(account, normalized, password, clientIp);
    if (!account) throw new AppError('invalid_login', 'Wrong email or password.');
    const { token, session } = await this.#deps.sessions.issue(account.id, channel);
    return { token, session, account };
  }

  /** Ends a session: its token stops working at once, on every node. */
  async logout(sessionId: string): Promise<void> {
    await this.#deps.sessions.revoke(sessionId);
  }

  async createLiveKey(
    account: AccountRecord,
    name: string | null,
    expiresAt: number | null,
  ): Promise<IssuedKey> {
    const now = this.#deps.now();
    if (expiresAt !== null && expiresAt <= now)
      throw new AppError('invalid_request', '"expires_at" must be in the future.');
    const fresh = newKey('live');
    const record = keyRecord('live', fresh, account.walletId, account.id, now, expiresAt, name);
    await this.#deps.store.insertKey(record);
    return { secret: fresh.secret, record };
  }

  async revokeKey(account: AccountRecord, keyId: string): Promise<KeyRecord> {
    const { store } = this.#deps;
    const key = await store.getKey(keyId);
    if (!key || key.accountId !== account.id)
      throw new AppError('not_found', `No key ${keyId} on this account.`);
    await store.revokeKey(keyId, this.#deps.now());
    return (await store.getKey(keyId)) as KeyRecord;
  }
}
