/** Passwords: argon2id at OWASP's parameters; older scrypt hashes still log in and are upgraded then. */
import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { after, before, test } from 'node:test';
import { decoyHash, hashPassword, needsRehash, verifyPassword } from '../../src/domain/passwords.ts';
import { freshIp } from '../helpers/operator.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/** A hash as the service wrote it before argon2id: scrypt, N=2^14, r=8, p=1. */
function legacyScryptHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize('NFKC'), salt, 32, { N: 16384, r: 8, p: 1 });
  return `scrypt$16384$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(() => server.close());

test('new hashes are argon2id with 19 MiB, 2 passes, 1 lane; they verify and need no rehash', async () => {
  const hash = await hashPassword('correct horse battery');
  assert.match(hash, /^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
  assert.equal(await verifyPassword('correct horse battery', hash), true);
  assert.equal(await verifyPassword('correct horse batterY', hash), false);
  assert.equal(needsRehash(hash), false);
});

test('a scrypt hash of an earlier version verifies and is marked for a rehash; garbage matches nothing', async () => {
  const legacy = legacyScryptHash('ünïcode pässword');
  assert.equal(await verifyPassword('ünïcode pässword', legacy), true);
  assert.equal(await verifyPassword('unicode password', legacy), false);
  assert.equal(needsRehash(legacy), true);
  assert.equal(await verifyPassword('x', '$argon2id$broken'), false);
  assert.equal(await verifyPassword('x', 'plain'), false);
});

test('the decoy hash, checked when no account matches, is argon2id and verifies no guess', async () => {
  assert.match(decoyHash, /^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
  assert.equal(await verifyPassword('', decoyHash), false);
});

test('a login with a scrypt hash succeeds and upgrades it to argon2id; a wrong password changes nothing', async () => {
  const email = 'legacy-hash@example.com';
  const password = 'an old passphrase';
  const { store } = server.deps;
  const created = await server.request('POST', '/api/v1/admin/accounts', {
    headers: { authorization: 'Bearer admin-token-for-tests-0123456789', 'x-forwarded-for': freshIp() },
    body: { email },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.json.id as string;
  const legacy = legacyScryptHash(password);
  await store.updateAccount(id, { passwordHash: legacy });

  const login = (pw: string) =>
    server.request('POST', '/api/v1/auth/login', {
      headers: { 'x-forwarded-for': freshIp() },
      body: { email, password: pw },
    });
  assert.equal((await login('not the passphrase')).status, 401);
  assert.equal(
    (await store.findAccountByEmail(email))?.passwordHash,
    legacy,
    'a failed login rewrites nothing',
  );

  assert.equal((await login(password)).status, 200);
  const upgraded = (await store.findAccountByEmail(email))?.passwordHash as string;
  assert.match(upgraded, /^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
  assert.equal(await verifyPassword(password, upgraded), true);

  assert.equal((await login(password)).status, 200, 'the upgraded hash logs in');
  assert.equal((await store.findAccountByEmail(email))?.passwordHash, upgraded, 'and is not rewritten again');
});
