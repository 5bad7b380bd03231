/**
 * The Ledger contract's cases for password resets (src/store/password-reset-port.ts), run by every
 * adapter inside runLedgerContract: a reset completes once, before it expires, and ends the account's
 * sessions with the new password in one step.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.ts';
import type { AccountRecord, Ledger } from '../../src/store/port.ts';

const T0 = Date.parse('2026-11-21T15:00:00Z');
const MINUTE = 60_000;

export function passwordResetStoreCases(store: () => Ledger, account: () => Promise<AccountRecord>): void {
  describe('password resets', () => {
    const reset = (accountId: string, createdAt = T0) => ({
      digest: randomBytes(32).toString('hex'),
      accountId,
      createdAt,
      expiresAt: createdAt + 30 * MINUTE,
      usedAt: null,
    });
    const session = (accountId: string) => ({
      id: newId('ses'),
      accountId,
      createdAt: T0,
      expiresAt: T0 + 12 * 60 * MINUTE,
      revokedAt: null,
    });

    test('a reset is found by its digest only; an unknown digest finds nothing', async () => {
      const s = store();
      const owner = await account();
      const made = reset(owner.id);
      await s.insertPasswordReset(made);
      assert.deepEqual(await s.findPasswordReset(made.digest), made);
      assert.equal(await s.findPasswordReset(reset(owner.id).digest), null);
    });

    test('completing sets the password, ends every open session of the account only, and works once', async () => {
      const s = store();
      const owner = await account();
      const other = await account();
      const open = [session(owner.id), session(owner.id)];
      const ended = { ...session(owner.id), revokedAt: T0 + 1 };
      const others = session(other.id);
      for (const one of [...open, ended, others]) await s.createSession(one);
      const made = reset(owner.id);
      await s.insertPasswordReset(made);

      const done = await s.completePasswordReset(made.digest, 'argon2$new', T0 + 5 * MINUTE);
      assert.deepEqual(done, { accountId: owner.id, sessionsEnded: 2 });
      assert.equal((await s.getAccount(owner.id))?.passwordHash, 'argon2$new');
      assert.equal((await s.getAccount(other.id))?.passwordHash, other.passwordHash);
      for (const one of open)
        assert.equal((await s.getSession(one.id))?.revokedAt, T0 + 5 * MINUTE, 'an open session ends');
      assert.equal((await s.getSession(ended.id))?.revokedAt, T0 + 1, 'an ended one keeps its end');
      assert.equal((await s.getSession(others.id))?.revokedAt, null, "another account's stays");
      assert.deepEqual(await s.findPasswordReset(made.digest), { ...made, usedAt: T0 + 5 * MINUTE });

      assert.equal(await s.completePasswordReset(made.digest, 'argon2$again', T0 + 6 * MINUTE), null);
      assert.equal(
        (await s.getAccount(owner.id))?.passwordHash,
        'argon2$new',
        'a used reset changes nothing',
      );
    });

    test('an expired or unknown reset completes nothing; completing one voids the others of its account', async () => {
      const s = store();
      const owner = await account();
      const [first, second, third] = [reset(owner.id), reset(owner.id), reset(owner.id, T0 + MINUTE)];
      for (const one of [first, second, third]) await s.insertPasswordReset(one);
      assert.equal(await s.completePasswordReset(first.digest, 'argon2$x', first.expiresAt), null, 'expired');
      assert.equal(await s.completePasswordReset(reset(owner.id).digest, 'argon2$x', T0), null, 'unknown');
      assert.equal((await s.getAccount(owner.id))?.passwordHash, owner.passwordHash);

      assert.ok(await s.completePasswordReset(third.digest, 'argon2$third', T0 + 2 * MINUTE));
      assert.equal((await s.findPasswordReset(second.digest))?.usedAt, T0 + 2 * MINUTE, 'voided');
      assert.equal(await s.completePasswordReset(second.digest, 'argon2$second', T0 + 3 * MINUTE), null);
    });

    test('two completions of one reset at once: exactly one succeeds', async () => {
      const s = store();
      const owner = await account();
      const made = reset(owner.id);
      await s.insertPasswordReset(made);
      const results = await Promise.all(
        ['argon2$a', 'argon2$b', 'argon2$c'].map((hash) => s.completePasswordReset(made.digest, hash, T0)),
      );
      assert.equal(results.filter((r) => r !== null).length, 1);
    });
  });
}
