/**
 * Password reset by email, over HTTP, with a real SMTP server capturing what the service sends: the link
 * works once and expires, ends every session, and the request answers the same for any email.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { ConfigError, parseEnv } from '../src/config.ts';
import { freshIp } from './helpers/operator.ts';
import { bearer, publicTestKey, startServer, type TestServer } from './helpers/server.ts';
import { resetLinkOf, startSmtp, type TestSmtp } from './helpers/smtp.ts';

const MINUTE = 60_000;
const NEW_PASSWORD = 'a brand new passphrase';
const P0_READ = '/api/v1/data/cftc/legacy_futures-facts?limit=1';

let smtp: TestSmtp;
let server: TestServer;
before(async () => {
  smtp = await startSmtp();
  server = await startServer({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'TMD <no-reply@tmd.test>' } });
});
after(async () => {
  await server.close();
  await smtp.close();
});

const ask = (email: string, ip = freshIp()) =>
  server.request('POST', '/api/v1/auth/password-reset', {
    body: { email },
    headers: { 'x-forwarded-for': ip },
  });
const confirm = (token: string, password = NEW_PASSWORD) =>
  server.request('POST', '/api/v1/auth/password-reset/confirm', { body: { token, password } });
const login = (email: string, password: string) =>
  server.request('POST', '/api/v1/auth/login', {
    body: { email, password },
    headers: { 'x-forwarded-for': freshIp() },
  });

/** Asks for a link for `email` and returns its token, read from the mail. */
async function mailedToken(email: string): Promise<string> {
  assert.equal((await ask(email)).status, 202);
  const mail = await smtp.next();
  assert.deepEqual(mail.to, [email]);
  return resetLinkOf(mail).searchParams.get('token') as string;
}

describe('asking for a link', () => {
  test('an account is mailed a single link to the Terminal page; the answer is 202', async () => {
    const { email } = await publicTestKey(server);
    const res = await ask(email.toUpperCase());
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(res.json, {
      detail:
        'If an account has this email, a link to reset its password is on its way there. It works once, for 30 minutes.',
      link_ttl_minutes: 30,
    });
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const mail = await smtp.next();
    assert.deepEqual(mail.to, [email]);
    assert.equal(mail.from, 'no-reply@tmd.test');
    assert.equal(mail.subject, 'Reset your password');
    const link = resetLinkOf(mail);
    assert.equal(link.origin, server.origin, 'the request origin, without BASE_URL');
    assert.equal(link.pathname, '/terminal/reset-password');
    assert.match(link.searchParams.get('token') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.match(mail.text, /works once, until 2026-11-21 15:30 UTC/);
    assert.match(mail.text, /If you did not ask for this, ignore this mail/);
  });

  test('an unknown email gets the same answer, and no mail', async () => {
    const { email } = await publicTestKey(server);
    const known = await ask(email);
    const unknown = await ask('nobody-here@example.com');
    assert.equal(unknown.status, known.status);
    assert.equal(unknown.text, known.text);
    for (const header of ['content-type', 'cache-control', 'content-length'])
      assert.equal(unknown.headers.get(header), known.headers.get(header), header);
    const mail = await smtp.next();
    assert.deepEqual(mail.to, [email]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(smtp.mails.length, smtp.mails.indexOf(mail) + 1, 'nothing was mailed for the unknown email');
  });

  test('3 requests per email an hour, whether or not it has an account; then 429 with Retry-After', async () => {
    const { email } = await publicTestKey(server);
    for (const target of [email, 'no-account-limit@example.com']) {
      for (let i = 0; i < 3; i++) assert.equal((await ask(target)).status, 202, `${target} #${i + 1}`);
      const refused = await ask(target);
      assert.equal(refused.status, 429, refused.text);
      assert.equal(refused.json.code, 'password_reset_limited');
      assert.equal(refused.headers.get('retry-after'), '3600');
      assert.equal(refused.json.retry_after, 3600);
    }
    for (let i = 0; i < 3; i++) await smtp.next();
    server.clock.advance(60 * MINUTE);
    assert.equal((await ask(email)).status, 202, 'the window slides');
    await smtp.next();
  });

  test('10 requests per client IP an hour, over any emails', async () => {
    const ip = freshIp();
    for (let i = 0; i < 10; i++) assert.equal((await ask(`ip-limit-${i}@example.com`, ip)).status, 202);
    const refused = await ask('ip-limit-10@example.com', ip);
    assert.equal(refused.status, 429);
    assert.equal(refused.json.code, 'password_reset_limited');
    assert.equal((await ask('ip-limit-10@example.com')).status, 202, 'another address is not limited');
  });

  test('the token is stored only as its SHA-256 digest', async () => {
    const { email, accountId } = await publicTestKey(server);
    const token = await mailedToken(email);
    const db = new DatabaseSync(server.deps.env.DATABASE_URL, { readOnly: true });
    try {
      const rows = db.prepare('SELECT * FROM password_resets WHERE account_id = ?').all(accountId);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.digest, createHash('sha256').update(token).digest('hex'));
      assert.ok(!JSON.stringify(rows).includes(token));
    } finally {
      db.close();
    }
  });
});

describe('using the link', () => {
  test('sets the password, ends every session of the account, and keeps its API key', async () => {
    const { email, password, key } = await publicTestKey(server);
    const sessions = [(await login(email, password)).json.token, (await login(email, password)).json.token];
    for (const session of sessions)
      assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(session) })).status, 200);
    const token = await mailedToken(email);
    const done = await confirm(token);
    assert.equal(done.status, 200, done.text);
    assert.deepEqual(done.json, { password_changed: true, sessions_ended: 2 });
    assert.match(done.headers.get('set-cookie') ?? '', /^tmd_session=;/);
    for (const session of sessions) {
      const ended = await server.request('GET', '/api/v1/me', { headers: bearer(session) });
      assert.equal(ended.status, 401);
      assert.equal(ended.json.code, 'invalid_session');
    }
    assert.equal((await login(email, password)).status, 401, 'the old password no longer works');
    assert.equal((await login(email, NEW_PASSWORD)).status, 200, 'the new one does');
    assert.equal(
      (await server.request('GET', P0_READ, { headers: bearer(key) })).status,
      200,
      'the key works',
    );
  });

  test('works once: used again it is 400 invalid_reset_token, and nothing changes', async () => {
    const { email } = await publicTestKey(server);
    const token = await mailedToken(email);
    assert.equal((await confirm(token)).status, 200);
    const session = (await login(email, NEW_PASSWORD)).json.token;
    const again = await confirm(token, 'yet another passphrase');
    assert.equal(again.status, 400, again.text);
    assert.equal(again.json.code, 'invalid_reset_token');
    assert.equal(again.json.title, 'Invalid password-reset link');
    assert.match(again.json.detail, /^This password-reset link has already been used\. Ask for a new link/);
    assert.equal((await login(email, NEW_PASSWORD)).status, 200, 'the password is unchanged');
    assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(session) })).status, 200);
  });

  test('a link used voids the older links of the account', async () => {
    const { email } = await publicTestKey(server);
    const older = await mailedToken(email);
    const newer = await mailedToken(email);
    assert.equal((await confirm(newer)).status, 200);
    const res = await confirm(older, 'yet another passphrase');
    assert.equal(res.status, 400);
    assert.equal(res.json.code, 'invalid_reset_token');
  });

  test('expires 30 minutes after it was asked for', async () => {
    const { email, password } = await publicTestKey(server);
    const token = await mailedToken(email);
    server.clock.advance(30 * MINUTE);
    const expired = await confirm(token);
    assert.equal(expired.status, 400);
    assert.equal(expired.json.code, 'invalid_reset_token');
    assert.match(expired.json.detail, /^This password-reset link expired at 20\d\d-\d\d-\d\dT/);
    assert.equal((await login(email, password)).status, 200, 'the password is unchanged');

    const fresh = await mailedToken(email);
    server.clock.advance(30 * MINUTE - 1);
    assert.equal((await confirm(fresh)).status, 200, 'a moment before it expires it works');
  });

  test('an unknown token is 400 invalid_reset_token; a short password is 400 invalid_request', async () => {
    const unknown = await confirm('x'.repeat(43));
    assert.equal(unknown.status, 400);
    assert.equal(unknown.json.code, 'invalid_reset_token');
    assert.match(unknown.json.detail, /^This password-reset link is not valid/);

    const { email } = await publicTestKey(server);
    const token = await mailedToken(email);
    const short = await confirm(token, 'short');
    assert.equal(short.status, 400);
    assert.equal(short.json.code, 'invalid_request');
    assert.equal((await confirm(token)).status, 200, 'a refused password leaves the link usable');
  });
});

describe('configuration', () => {
  test('BASE_URL, when set, is where the link points', async () => {
    const other = await startServer({
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'no-reply@tmd.test', BASE_URL: 'https://data.example.com' },
    });
    try {
      const { email } = await publicTestKey(other);
      assert.equal(
        (await other.request('POST', '/api/v1/auth/password-reset', { body: { email } })).status,
        202,
      );
      assert.equal(resetLinkOf(await smtp.next()).origin, 'https://data.example.com');
    } finally {
      await other.close();
    }
  });

  test('SMTP_URL must be an smtp:// or smtps:// URL and needs MAIL_FROM: the start fails naming them', () => {
    assert.throws(
      () => parseEnv({ SMTP_URL: 'smtp://127.0.0.1:25' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /env: MAIL_FROM: is required with SMTP_URL/);
        return true;
      },
    );
    assert.throws(
      () => parseEnv({ SMTP_URL: 'http://mail.example.com', MAIL_FROM: 'a@b.c' }),
      /env: SMTP_URL: must be an smtp/,
    );
    assert.equal(
      parseEnv({ SMTP_URL: 'smtps://u:p@mail.example.com:465', MAIL_FROM: 'a@b.c' }).MAIL_FROM,
      'a@b.c',
    );
  });

  test('without SMTP_URL, asking for a link is 503 password_reset_unavailable', async () => {
    const other = await startServer();
    try {
      const res = await other.request('POST', '/api/v1/auth/password-reset', {
        body: { email: 'someone@example.com' },
      });
      assert.equal(res.status, 503, res.text);
      assert.equal(res.json.code, 'password_reset_unavailable');
      assert.match(res.json.detail, /no SMTP server/);
    } finally {
      await other.close();
    }
  });
});
