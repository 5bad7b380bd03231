/**
 * The Store contract: every adapter (SqliteStore, PostgresStore) runs this same suite against a real,
 * freshly migrated database. Each test makes its own accounts and wallets, so tests share one store.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { csvColumnsKey } from '../../src/catalog/csv.ts';
import type { Row } from '../../src/catalog/types.ts';
import { newId } from '../../src/domain/ids.ts';
import { type KeyKind, newKey } from '../../src/domain/keys.ts';
import {
  BalanceLimitReached,
  type KeyRecord,
  type PageQuery,
  type Store,
  type UsageInput,
  type UsageSum,
} from '../../src/store/port.ts';
import { SCAN_CAP } from '../../src/store/row-scan.ts';
import { pageOfRows } from '../../src/store/rows.ts';
import { analysisStoreCases } from './analysis-store-contract.ts';

const T0 = Date.parse('2026-11-21T15:00:00Z');
const MONTH = '2026-11';
const M = 1_000_000n;

export function runStoreContract(
  name: string,
  makeStore: () => Promise<Store>,
  options: {
    skip?: string | false;
    /**
     * Moves a wallet's balance by `deltaMicros` behind the store's back (raw SQL), so the audit can be
     * shown to find a balance that is not the sum of its entries.
     */
    tamper: (walletId: string, deltaMicros: bigint) => Promise<void>;
  },
): void {
  describe(`Store contract: ${name}`, { skip: options.skip ?? false }, () => {
    let store: Store;
    before(async () => {
      store = await makeStore();
      await store.migrate();
    });
    after(async () => {
      await store?.close();
    });

    const unique = () => randomBytes(6).toString('hex');

    analysisStoreCases(
      () => store,
      () => account(),
    );

    async function account(tokens = 0n, email: string | null = `${unique()}@example.com`) {
      const created = await store.createAccount(
        {
          id: newId('acc'),
          email,
          passwordHash: 'scrypt$hash',
          walletId: newId('wal'),
          createdAt: T0,
          publicTestStartedAt: null,
        },
        MONTH,
      );
      if (tokens > 0n) {
        await store.credit({ walletId: created.walletId, kind: 'topup', amountMicros: tokens, at: T0 });
      }
      return created;
    }

    function keyFor(kind: KeyKind, walletId: string, accountId: string | null, at = T0): KeyRecord {
      const fresh = newKey(kind);
      return {
        id: newId('key'),
        kind,
        digest: fresh.digest,
        displayPrefix: fresh.displayPrefix,
        name: null,
        accountId,
        walletId,
        createdAt: at,
        expiresAt: null,
        revokedAt: null,
        dailyCapMicros: null,
        monthlyCapMicros: null,
      };
    }

    function usage(walletId: string, over: Partial<UsageInput> = {}): UsageInput {
      return {
        requestId: `req_${unique()}`,
        keyId: null,
        accountId: null,
        walletId,
        dataset: 'equities/stock-prices',
        channel: 'rest',
        listCostMicros: 2n * M,
        costMicros: 2n * M,
        burnedMicros: 2n * M,
        outcome: 'charged',
        rows: 10,
        at: T0,
        ...over,
      };
    }

    const debit = (walletId: string, amountMicros: bigint, over: Partial<UsageInput> = {}, month = MONTH) =>
      store.debit({
        walletId,
        amountMicros,
        month,
        usage: usage(walletId, { burnedMicros: amountMicros, costMicros: amountMicros, ...over }),
      });

    describe('schema and connectivity', () => {
      test('migrate is idempotent, also when run concurrently', async () => {
        await Promise.all([store.migrate(), store.migrate()]);
        await store.ping();
      });
    });

    describe('accounts and wallets', () => {
      test('an account comes with its own empty wallet', async () => {
        const created = await account();
        assert.equal(created.plan, 'standard');
        assert.equal(created.packageId, null);
        assert.deepEqual(await store.getAccount(created.id), created);
        assert.deepEqual(await store.getWallet(created.walletId), {
          id: created.walletId,
          accountId: created.id,
          balanceMicros: 0n,
          burnMonth: MONTH,
          burnMonthMicros: 0n,
        });
      });

      test('accounts are found by email; unknown ids and emails are null; emails are unique', async () => {
        const created = await account();
        assert.deepEqual(await store.findAccountByEmail(created.email as string), created);
        assert.equal(await store.findAccountByEmail(`nobody-${unique()}@example.com`), null);
        assert.equal(await store.getAccount('acc_missing'), null);
        assert.equal(await store.getWallet('wal_missing'), null);
        await assert.rejects(account(0n, created.email));
        const noEmail = await account(0n, null);
        assert.equal((await store.getAccount(noEmail.id))?.email, null);
      });

      test('updateAccount changes only the fields given; listAccountsWithPackage finds packaged ones', async () => {
        const created = await account();
        await store.updateAccount(created.id, { plan: 'early_bird', publicTestStartedAt: T0 + 5 });
        await store.updateAccount(created.id, { packageId: 'pro' });
        await store.updateAccount(created.id, {});
        assert.deepEqual(await store.getAccount(created.id), {
          ...created,
          plan: 'early_bird',
          packageId: 'pro',
          publicTestStartedAt: T0 + 5,
        });
        const packaged = await store.listAccountsWithPackage();
        assert.ok(packaged.some((a) => a.id === created.id && a.packageId === 'pro'));
        assert.ok(packaged.every((a) => a.packageId !== null));
        await store.updateAccount(created.id, { packageId: null });
        assert.ok(!(await store.listAccountsWithPackage()).some((a) => a.id === created.id));
      });

      test('a standalone wallet (sandbox) has no account', async () => {
        const id = newId('wal');
        const wallet = await store.createWallet(id, null, MONTH);
        assert.deepEqual(wallet, {
          id,
          accountId: null,
          balanceMicros: 0n,
          burnMonth: MONTH,
          burnMonthMicros: 0n,
        });
        assert.deepEqual(await store.getWallet(id), wallet);
      });
    });

    describe('keys', () => {
      test('a key is found by digest with its wallet and account, or without an account', async () => {
        const owner = await account(5n * M);
        const live = keyFor('live', owner.walletId, owner.id);
        await store.insertKey({ ...live, name: 'laptop', expiresAt: T0 + 1000 });
        const context = await store.findKeyByDigest(live.digest);
        assert.deepEqual(context?.key, { ...live, name: 'laptop', expiresAt: T0 + 1000 });
        assert.equal(context?.wallet.balanceMicros, 5n * M);
        assert.deepEqual(context?.account, owner);
        assert.deepEqual(await store.getKey(live.id), context?.key);

        const walletId = newId('wal');
        await store.createWallet(walletId, null, MONTH);
        const sandbox = keyFor('sandbox', walletId, null);
        await store.insertKey(sandbox);
        const sandboxContext = await store.findKeyByDigest(sandbox.digest);
        assert.equal(sandboxContext?.account, null);
        assert.equal(sandboxContext?.wallet.id, walletId);
        assert.equal(await store.findKeyByDigest('0'.repeat(64)), null);
        assert.equal(await store.getKey('key_missing'), null);
        await assert.rejects(
          store.insertKey({ ...keyFor('live', owner.walletId, owner.id), digest: live.digest }),
        );
      });

      test('listKeys is ordered by creation; revokeKey revokes once', async () => {
        const owner = await account();
        const a = keyFor('live', owner.walletId, owner.id, T0);
        const b = keyFor('live', owner.walletId, owner.id, T0 + 1);
        await store.insertKey(b);
        await store.insertKey(a);
        assert.deepEqual(
          (await store.listKeys(owner.id)).map((k) => k.id),
          [a.id, b.id],
        );
        assert.equal(await store.revokeKey(a.id, T0 + 10), true);
        assert.equal(await store.revokeKey(a.id, T0 + 20), false, 'already revoked');
        assert.equal(await store.revokeKey('key_missing', T0), false);
        assert.equal((await store.getKey(a.id))?.revokedAt, T0 + 10);
        assert.deepEqual(await store.listKeys(`acc_${unique()}`), []);
      });

      test('replaceKeys revokes the live keys of that kind only, and inserts the new key', async () => {
        const owner = await account();
        const oldTest = keyFor('public_test', owner.walletId, owner.id);
        const live = keyFor('live', owner.walletId, owner.id);
        await store.insertKey(oldTest);
        await store.insertKey(live);
        const newTest = keyFor('public_test', owner.walletId, owner.id, T0 + 1);
        await store.replaceKeys(owner.id, 'public_test', newTest, T0 + 100);
        assert.equal((await store.getKey(oldTest.id))?.revokedAt, T0 + 100);
        assert.equal((await store.getKey(live.id))?.revokedAt, null);
        assert.deepEqual(await store.getKey(newTest.id), newTest);
      });

      test('setKeyCaps sets and clears both caps; false for an unknown key', async () => {
        const owner = await account();
        const key = keyFor('live', owner.walletId, owner.id);
        await store.insertKey(key);
        assert.equal(
          await store.setKeyCaps(key.id, { dailyCapMicros: 5n * M, monthlyCapMicros: 50n * M }),
          true,
        );
        const capped = await store.getKey(key.id);
        assert.equal(capped?.dailyCapMicros, 5n * M);
        assert.equal(capped?.monthlyCapMicros, 50n * M);
        await store.setKeyCaps(key.id, { dailyCapMicros: null, monthlyCapMicros: null });
        assert.equal((await store.getKey(key.id))?.dailyCapMicros, null);
        assert.equal(
          await store.setKeyCaps('key_missing', { dailyCapMicros: 1n, monthlyCapMicros: null }),
          false,
        );
      });

      test('setKeyCaps leaves a cap it is not given as stored: concurrent changes of different caps both hold', async () => {
        const owner = await account();
        const key = keyFor('live', owner.walletId, owner.id);
        await store.insertKey(key);
        await Promise.all([
          store.setKeyCaps(key.id, { dailyCapMicros: 7n * M }),
          store.setKeyCaps(key.id, { monthlyCapMicros: 70n * M }),
        ]);
        const both = await store.getKey(key.id);
        assert.deepEqual([both?.dailyCapMicros, both?.monthlyCapMicros], [7n * M, 70n * M]);
        await store.setKeyCaps(key.id, { dailyCapMicros: null });
        const cleared = await store.getKey(key.id);
        assert.deepEqual([cleared?.dailyCapMicros, cleared?.monthlyCapMicros], [null, 70n * M]);
      });
    });

    describe('sessions', () => {
      test('a session is created, read, and revoked once', async () => {
        const owner = await account();
        const session = {
          id: newId('ses'),
          accountId: owner.id,
          createdAt: T0,
          expiresAt: T0 + 3600_000,
          revokedAt: null,
        };
        await store.createSession(session);
        assert.deepEqual(await store.getSession(session.id), session);
        await store.revokeSession(session.id, T0 + 5);
        await store.revokeSession(session.id, T0 + 9);
        assert.deepEqual(await store.getSession(session.id), { ...session, revokedAt: T0 + 5 });
        assert.equal(await store.getSession('ses_missing'), null);
      });
    });

    describe('credits', () => {
      test('a credit raises the balance and appends an entry with the balance after it', async () => {
        const owner = await account();
        const result = await store.credit({
          walletId: owner.walletId,
          kind: 'grant',
          amountMicros: 10_000n * M,
          at: T0,
          memo: 'signup',
          requestId: 'req_credit',
        });
        assert.equal(result.duplicate, false);
        assert.deepEqual(
          { ...result.entry, id: 'x' },
          {
            id: 'x',
            walletId: owner.walletId,
            kind: 'grant',
            amountMicros: 10_000n * M,
            balanceAfterMicros: 10_000n * M,
            createdAt: T0,
            requestId: 'req_credit',
            idempotencyKey: null,
            memo: 'signup',
          },
        );
        const second = await store.credit({
          walletId: owner.walletId,
          kind: 'topup',
          amountMicros: 1n,
          at: T0,
        });
        assert.equal(second.entry.balanceAfterMicros, 10_000n * M + 1n);
        assert.equal((await store.getWallet(owner.walletId))?.balanceMicros, 10_000n * M + 1n);
      });

      test('a credit is applied once per idempotency key (per wallet); a repeat returns the first entry', async () => {
        const a = await account();
        const b = await account();
        const input = {
          walletId: a.walletId,
          kind: 'topup' as const,
          amountMicros: 7n * M,
          at: T0,
          idempotencyKey: 'pay-1',
        };
        const first = await store.credit(input);
        const repeat = await store.credit({ ...input, amountMicros: 9n * M, at: T0 + 1 });
        assert.equal(repeat.duplicate, true);
        assert.deepEqual(repeat.entry, first.entry);
        assert.equal((await store.getWallet(a.walletId))?.balanceMicros, 7n * M);
        const other = await store.credit({ ...input, walletId: b.walletId });
        assert.equal(other.duplicate, false, 'the same key on another wallet is another credit');
      });

      test('concurrent credits with one idempotency key apply exactly once', async () => {
        const owner = await account();
        const results = await Promise.all(
          Array.from({ length: 10 }, () =>
            store.credit({
              walletId: owner.walletId,
              kind: 'topup',
              amountMicros: 3n * M,
              at: T0,
              idempotencyKey: 'race',
            }),
          ),
        );
        assert.equal(results.filter((r) => !r.duplicate).length, 1);
        assert.equal(new Set(results.map((r) => r.entry.id)).size, 1);
        assert.equal((await store.getWallet(owner.walletId))?.balanceMicros, 3n * M);
        assert.equal((await store.listEntries(owner.walletId)).length, 1);
      });

      test('maxBalanceMicros: past it a credit changes nothing; a repeat of a credit made is still its replay', async () => {
        const owner = await account();
        const credit = (amount: bigint, idempotencyKey: string) =>
          store.credit({
            walletId: owner.walletId,
            kind: 'topup',
            amountMicros: amount,
            at: T0,
            idempotencyKey,
            maxBalanceMicros: 10n * M,
          });
        assert.equal((await credit(10n * M, 'fill')).duplicate, false, 'up to the maximum is allowed');
        await assert.rejects(credit(1n, 'more'), BalanceLimitReached);
        assert.equal((await credit(10n * M, 'fill')).duplicate, true);
        // Concurrent credits cannot pass it together: each is checked in its own transaction.
        const other = await account();
        const results = await Promise.allSettled(
          Array.from({ length: 6 }, (_, i) =>
            store.credit({
              walletId: other.walletId,
              kind: 'topup',
              amountMicros: 3n * M,
              at: T0,
              idempotencyKey: `c${i}`,
              maxBalanceMicros: 10n * M,
            }),
          ),
        );
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 3);
        assert.equal((await store.getWallet(other.walletId))?.balanceMicros, 9n * M);
        assert.equal((await store.getWallet(owner.walletId))?.balanceMicros, 10n * M);
        assert.equal((await store.listEntries(owner.walletId)).length, 1);
      });

      test('a credit must be positive and its wallet must exist', async () => {
        const owner = await account();
        await assert.rejects(
          store.credit({ walletId: owner.walletId, kind: 'topup', amountMicros: 0n, at: T0 }),
          RangeError,
        );
        await assert.rejects(
          store.credit({ walletId: owner.walletId, kind: 'topup', amountMicros: -1n, at: T0 }),
          RangeError,
        );
        await assert.rejects(
          store.credit({ walletId: 'wal_missing', kind: 'topup', amountMicros: 1n, at: T0 }),
        );
      });
    });

    describe('debits', () => {
      test('a debit moves the balance, counts the month, and writes one burn entry and one usage event', async () => {
        const owner = await account(10n * M);
        const result = await debit(owner.walletId, 2_500_000n, { requestId: 'req_d1', accountId: owner.id });
        assert.ok(result.ok);
        assert.equal(result.balanceMicros, 7_500_000n);
        assert.equal(result.burnMonthMicros, 2_500_000n);
        const entries = await store.listEntries(owner.walletId);
        assert.equal(entries.length, 2);
        const burn = entries[1];
        assert.equal(burn?.id, result.entryId);
        assert.equal(burn?.kind, 'burn');
        assert.equal(burn?.amountMicros, -2_500_000n);
        assert.equal(burn?.balanceAfterMicros, 7_500_000n);
        assert.equal(burn?.requestId, 'req_d1');
        assert.equal(burn?.createdAt, T0);
        const events = await store.listUsage({ accountId: owner.id }, null, 10);
        assert.equal(events.length, 1);
        assert.equal(events[0]?.requestId, 'req_d1');
        assert.equal(events[0]?.burnedMicros, 2_500_000n);
        const wallet = await store.getWallet(owner.walletId);
        assert.equal(wallet?.burnMonth, MONTH);
        assert.equal(wallet?.burnMonthMicros, 2_500_000n);
      });

      test('a debit in a later month restarts the month counter', async () => {
        const owner = await account(10n * M);
        await debit(owner.walletId, 1n * M);
        const next = await debit(owner.walletId, 2n * M, {}, '2026-12');
        assert.ok(next.ok);
        assert.equal(next.burnMonthMicros, 2n * M);
        const wallet = await store.getWallet(owner.walletId);
        assert.equal(wallet?.burnMonth, '2026-12');
        assert.equal(wallet?.burnMonthMicros, 2n * M);
      });

      test('a debit never overdraws: exactly the balance is allowed, one micro-token more is refused', async () => {
        const owner = await account(5n * M);
        const refused = await debit(owner.walletId, 5n * M + 1n, { accountId: owner.id });
        assert.deepEqual(refused, { ok: false, balanceMicros: 5n * M });
        assert.equal((await store.listEntries(owner.walletId)).length, 1, 'a refusal writes no entry');
        assert.equal(
          (await store.listUsage({ accountId: owner.id }, null, 10)).length,
          0,
          'and no usage event',
        );
        const exact = await debit(owner.walletId, 5n * M);
        assert.ok(exact.ok);
        assert.equal(exact.balanceMicros, 0n);
        assert.deepEqual(await debit(owner.walletId, 1n), { ok: false, balanceMicros: 0n });
      });

      test('a debit must be positive; an unknown wallet is refused with balance 0', async () => {
        const owner = await account(5n * M);
        await assert.rejects(debit(owner.walletId, 0n), RangeError);
        await assert.rejects(debit(owner.walletId, -1n), RangeError);
        assert.deepEqual(await debit('wal_missing', 1n), { ok: false, balanceMicros: 0n });
      });

      test('concurrent debits on one wallet: exactly the affordable ones succeed, each exactly once', async () => {
        const owner = await account(20n * M);
        const results = await Promise.all(
          Array.from({ length: 60 }, (_, i) =>
            debit(owner.walletId, 1n * M, { requestId: `req_c${i}`, accountId: owner.id }),
          ),
        );
        const served = results.filter((r) => r.ok);
        assert.equal(served.length, 20);
        assert.deepEqual(
          served.map((r) => r.balanceMicros).sort((x, y) => (x < y ? -1 : 1)),
          Array.from({ length: 20 }, (_, i) => BigInt(i) * M),
          'every successful debit saw its own balance',
        );
        const entries = (await store.listEntries(owner.walletId)).filter((e) => e.kind === 'burn');
        assert.equal(entries.length, 20);
        assert.equal(new Set(entries.map((e) => e.requestId)).size, 20, 'one entry per served debit');
        results.forEach((r, i) => {
          if (!r.ok) return;
          const entry = entries.find((e) => e.id === r.entryId);
          assert.equal(entry?.requestId, `req_c${i}`, 'each debit names its own entry, batched or not');
          assert.equal(entry?.balanceAfterMicros, r.balanceMicros);
        });
        assert.ok(entries.every((e) => e.balanceAfterMicros >= 0n));
        assert.equal((await store.listUsage({ accountId: owner.id }, null, 100)).length, 20);
        assert.equal((await store.getWallet(owner.walletId))?.balanceMicros, 0n);
        assert.equal(await store.sumEntries(owner.walletId), 0n);
      });

      test('concurrent debits across many wallets all land', async () => {
        const owners = await Promise.all(Array.from({ length: 8 }, () => account(3n * M)));
        const results = await Promise.all(
          owners.flatMap((o) => Array.from({ length: 4 }, () => debit(o.walletId, 1n * M))),
        );
        assert.equal(results.filter((r) => r.ok).length, 24);
        for (const o of owners) assert.equal((await store.getWallet(o.walletId))?.balanceMicros, 0n);
      });

      // Debits fired together on one wallet (PostgreSQL groups them into one transaction, applying a
      // wallet's run with one UPDATE of its total when the balance covers it): every figure must be what
      // applying them one by one, in some order, gives.
      test('a debit of a month the wallet has left counts in that month: the later month keeps its burn', async () => {
        const owner = await account(100n * M);
        const later = await debit(owner.walletId, 5n * M, {}, '2026-12');
        assert.ok(later.ok);
        assert.equal(later.burnMonthMicros, 5n * M);
        // A read begun in November, committed after December's first read.
        const late = await debit(owner.walletId, 3n * M, {}, '2026-11');
        assert.ok(late.ok, 'charged all the same');
        assert.equal(late.balanceMicros, 92n * M);
        assert.equal(late.burnMonthMicros, null, 'its month is not the wallet month');
        const wallet = await store.getWallet(owner.walletId);
        assert.equal(wallet?.burnMonth, '2026-12', 'the month never moves backwards');
        assert.equal(wallet?.burnMonthMicros, 5n * M);
        // Together, as a group commit takes them (one run of each month, in any order).
        const mixed = await Promise.all(
          [1n, 2n, 4n, 8n].map((a, i) => debit(owner.walletId, a * M, {}, i % 2 ? '2026-11' : '2026-12')),
        );
        assert.ok(mixed.every((r) => r.ok));
        assert.deepEqual(
          mixed.map((r) => r.ok && r.burnMonthMicros === null),
          [false, true, false, true],
          'the November debits report no month figure',
        );
        const after = await store.getWallet(owner.walletId);
        assert.equal(after?.burnMonth, '2026-12');
        assert.equal(after?.burnMonthMicros, (5n + 1n + 4n) * M, 'only December debits count in December');
        assert.equal(after?.balanceMicros, (92n - 15n) * M);
        assert.equal(await store.sumEntries(owner.walletId), after?.balanceMicros);
        // And a later month still moves it forward.
        const next = await debit(owner.walletId, 2n * M, {}, '2027-01');
        assert.ok(next.ok);
        assert.equal(next.burnMonthMicros, 2n * M);
        assert.equal((await store.getWallet(owner.walletId))?.burnMonth, '2027-01');
      });

      test('concurrent debits of different amounts: each sees the figures just after itself', async () => {
        const owner = await account(100n * M);
        await debit(owner.walletId, 3n * M); // the month's burn starts at 3
        const amounts = [5n, 1n, 7n, 2n, 9n, 4n, 6n, 3n, 8n, 1n].map((a) => a * M);
        const results = await Promise.all(amounts.map((a) => debit(owner.walletId, a)));
        assert.ok(results.every((r) => r.ok));
        const total = amounts.reduce((sum, a) => sum + a, 0n);
        // Balance plus month burn is the same after every debit of one month: 97 + 3.
        for (const r of results)
          if (r.ok) assert.equal(r.balanceMicros + (r.burnMonthMicros ?? -1n), 100n * M);
        // Replayed from the highest balance down, each step is exactly that debit's amount.
        const order = results
          .map((r, i) => ({ balance: r.balanceMicros, amount: amounts[i] as bigint }))
          .sort((x, y) => (x.balance > y.balance ? -1 : 1));
        let balance = 97n * M;
        for (const step of order) {
          balance -= step.amount;
          assert.equal(step.balance, balance, 'each debit saw the balance just after it');
        }
        const entries = (await store.listEntries(owner.walletId)).filter((e) => e.kind === 'burn');
        results.forEach((r, i) => {
          const entry = entries.find((e) => r.ok && e.id === r.entryId);
          assert.equal(entry?.amountMicros, -(amounts[i] as bigint));
          assert.equal(entry?.balanceAfterMicros, r.balanceMicros);
        });
        assert.equal((await store.getWallet(owner.walletId))?.balanceMicros, 97n * M - total);
        assert.equal(await store.sumEntries(owner.walletId), 97n * M - total);
      });

      test('concurrent debits the balance cannot all cover: only what one-by-one refuses is refused', async () => {
        const owner = await account(10n * M);
        await debit(owner.walletId, 1n * M);
        const amounts = [6n, 2n, 6n, 1n, 6n, 1n, 3n].map((a) => a * M);
        const results = await Promise.all(amounts.map((a) => debit(owner.walletId, a)));
        const spent = results.reduce((sum, r, i) => sum + (r.ok ? (amounts[i] as bigint) : 0n), 0n);
        const left = 9n * M - spent;
        assert.equal((await store.getWallet(owner.walletId))?.balanceMicros, left);
        // The balance only falls, so a refused debit was larger than what is left at the end.
        results.forEach((r, i) => {
          if (!r.ok) assert.ok((amounts[i] as bigint) > left, `refused ${amounts[i]} with ${left} left`);
        });
        assert.ok(results.some((r) => !r.ok) && left < 6n * M);
        assert.equal(await store.sumEntries(owner.walletId), left);
        const entries = (await store.listEntries(owner.walletId)).filter((e) => e.kind === 'burn');
        assert.equal(entries.length, 1 + results.filter((r) => r.ok).length);
      });

      test('concurrent debits across a month boundary restart the month burn where one-by-one would', async () => {
        const owner = await account(50n * M);
        await debit(owner.walletId, 1n * M, {}, '2026-11');
        const results = await Promise.all([
          debit(owner.walletId, 2n * M, {}, '2026-11'),
          debit(owner.walletId, 3n * M, {}, '2026-12'),
          debit(owner.walletId, 4n * M, {}, '2026-12'),
        ]);
        // In the order fired: November reaches 3; December restarts at 3, then 7.
        assert.deepEqual(
          results.map((r) => (r.ok ? [r.balanceMicros, r.burnMonthMicros] : null)),
          [
            [47n * M, 3n * M],
            [44n * M, 3n * M],
            [40n * M, 7n * M],
          ],
        );
      });

      test('zero-burn usage records fired among debits of the same wallet write no entry', async () => {
        const owner = await account(20n * M);
        await debit(owner.walletId, 1n * M, { accountId: owner.id });
        const zero = () =>
          store.recordUsage(
            usage(owner.walletId, { accountId: owner.id, burnedMicros: 0n, outcome: 'notional' }),
          );
        const results = await Promise.all([
          debit(owner.walletId, 2n * M, { accountId: owner.id }),
          zero(),
          debit(owner.walletId, 3n * M, { accountId: owner.id }),
          zero(),
          debit(owner.walletId, 4n * M, { accountId: owner.id }),
        ]);
        const balances = [results[0], results[2], results[4]].map((r) =>
          r && typeof r === 'object' && 'ok' in r && r.ok ? r.balanceMicros : null,
        );
        assert.deepEqual(balances, [17n * M, 14n * M, 10n * M]);
        assert.equal((await store.listEntries(owner.walletId)).filter((e) => e.kind === 'burn').length, 4);
        assert.equal((await store.listUsage({ accountId: owner.id }, null, 100)).length, 6);
        assert.equal(await store.sumEntries(owner.walletId), 10n * M);
      });

      test('a spending cap refuses the debit that would exceed it, and names the cap', async () => {
        const owner = await account(100n * M);
        const key = keyFor('live', owner.walletId, owner.id);
        await store.insertKey(key);
        const caps = [
          { period: 'day' as const, sinceMs: T0 - 1000, capMicros: 5n * M },
          { period: 'month' as const, sinceMs: T0 - 10_000_000, capMicros: 50n * M },
        ];
        const capped = (amount: bigint) =>
          store.debit({
            walletId: owner.walletId,
            amountMicros: amount,
            month: MONTH,
            usage: usage(owner.walletId, { keyId: key.id, burnedMicros: amount, costMicros: amount }),
            spendCaps: caps,
          });
        const results = await Promise.all([capped(2n * M), capped(2n * M), capped(2n * M)]);
        assert.equal(results.filter((r) => r.ok).length, 2, 'concurrent capped debits cannot overshoot');
        const refused = results.find((r) => !r.ok);
        assert.ok(refused && !refused.ok);
        assert.equal(refused.cap?.period, 'day');
        assert.equal(refused.cap?.spentMicros, 4n * M);
        assert.equal(refused.balanceMicros, 96n * M);
        assert.ok((await capped(1n * M)).ok, 'exactly up to the cap is allowed');
      });

      test('keyBurnedSince sums exactly what one key burned at or after an instant, as a cap counts it', async () => {
        const big = 2n ** 53n + 1n; // a float would round the sums below
        const owner = await account(2n * big);
        const key = keyFor('live', owner.walletId, owner.id);
        const other = keyFor('live', owner.walletId, owner.id);
        await store.insertKey(key);
        await store.insertKey(other);
        assert.equal(await store.keyBurnedSince(key.id, T0), 0n, 'nothing burned yet');
        await debit(owner.walletId, 3n, { keyId: key.id, at: T0 - 1 });
        await debit(owner.walletId, big, { keyId: key.id, at: T0 });
        await debit(owner.walletId, 2n, { keyId: key.id, at: T0 + 5 });
        await debit(owner.walletId, 7n, { keyId: other.id, at: T0 });
        await debit(owner.walletId, 11n, { at: T0 });
        await store.recordUsage(
          usage(owner.walletId, { keyId: key.id, burnedMicros: 0n, outcome: 'notional', at: T0 + 6 }),
        );
        assert.equal(await store.keyBurnedSince(key.id, T0 - 1), big + 5n);
        assert.equal(await store.keyBurnedSince(key.id, T0), big + 2n, 'the instant itself counts');
        assert.equal(await store.keyBurnedSince(key.id, T0 + 1), 2n);
        assert.equal(await store.keyBurnedSince(key.id, T0 + 6), 0n, 'zero-burn reads add nothing');
        assert.equal(await store.keyBurnedSince(other.id, 0), 7n, 'only this key');
        assert.equal(await store.keyBurnedSince('key_missing', 0), 0n);
        const refused = await store.debit({
          walletId: owner.walletId,
          amountMicros: 1n,
          month: MONTH,
          usage: usage(owner.walletId, { keyId: key.id, burnedMicros: 1n, costMicros: 1n, at: T0 + 7 }),
          spendCaps: [{ period: 'day', sinceMs: T0, capMicros: big + 2n }],
        });
        assert.equal(!refused.ok && refused.cap?.spentMicros, big + 2n, 'the debit counts the same sum');
      });

      test('a refund that reverses a burn takes it out of the cap sums and the month burn, in one step', async () => {
        const owner = await account(100n);
        const key = keyFor('live', owner.walletId, owner.id);
        await store.insertKey(key);
        await debit(owner.walletId, 30n, { keyId: key.id, at: T0 });
        await debit(owner.walletId, 5n, { keyId: key.id, at: T0 + 1 });
        const reversal = usage(owner.walletId, {
          keyId: key.id,
          accountId: owner.id,
          listCostMicros: -30n,
          costMicros: -30n,
          burnedMicros: -30n,
          outcome: 'refunded',
          rows: 0,
          at: T0 + 2,
        });
        await store.credit({
          walletId: owner.walletId,
          kind: 'refund',
          amountMicros: 30n,
          at: T0 + 2,
          reverses: { month: MONTH, usage: reversal },
        });
        assert.equal(await store.keyBurnedSince(key.id, T0), 5n);
        const wallet = await store.getWallet(owner.walletId);
        assert.equal(wallet?.balanceMicros, 95n);
        assert.equal(wallet?.burnMonthMicros, 5n);
        const events = await store.listUsage({ accountId: owner.id }, null, 10);
        assert.ok(events.some((e) => e.outcome === 'refunded' && e.burnedMicros === -30n));
        // A refund of another month's burn leaves this month's figure alone (never below zero either).
        await store.credit({
          walletId: owner.walletId,
          kind: 'refund',
          amountMicros: 5n,
          at: T0 + 3,
          reverses: { month: '1999-01', usage: { ...reversal, burnedMicros: -5n, at: T0 + 3 } },
        });
        assert.equal((await store.getWallet(owner.walletId))?.burnMonthMicros, 5n);
        assert.deepEqual((await store.auditLedger()).mismatches, []);
      });

      test('recordUsage writes a zero-burn usage event and no ledger entry', async () => {
        const owner = await account(1n * M);
        await store.recordUsage(
          usage(owner.walletId, {
            accountId: owner.id,
            burnedMicros: 0n,
            outcome: 'notional',
            requestId: 'req_n',
          }),
        );
        const events = await store.listUsage({ accountId: owner.id }, null, 10);
        assert.equal(events.length, 1);
        assert.equal(events[0]?.outcome, 'notional');
        assert.equal(events[0]?.burnedMicros, 0n);
        assert.equal((await store.listEntries(owner.walletId)).length, 1);
      });
    });

    describe('ledger audit and usage', () => {
      test('balances equal the sum of entries; auditLedger finds no mismatch', async () => {
        const owner = await account(9n * M);
        await debit(owner.walletId, 4n * M);
        assert.equal(await store.sumEntries(owner.walletId), 5n * M);
        assert.equal(await store.sumEntries('wal_missing'), 0n);
        const audit = await store.auditLedger();
        assert.deepEqual(audit.mismatches, []);
        assert.ok(audit.wallets >= 1);
        assert.ok(audit.entries >= 2);
      });

      test('auditLedger finds a balance that is not the sum of its entries, with both figures', async () => {
        const owner = await account(3n * M);
        const other = await account(2n * M);
        await options.tamper(owner.walletId, 1n);
        try {
          assert.deepEqual((await store.auditLedger()).mismatches, [
            { walletId: owner.walletId, balanceMicros: 3n * M + 1n, entriesMicros: 3n * M },
          ]);
          assert.equal(await store.sumEntries(owner.walletId), 3n * M, 'the entries are unchanged');
        } finally {
          await options.tamper(owner.walletId, -1n);
        }
        await options.tamper(other.walletId, -2n * M);
        try {
          assert.deepEqual((await store.auditLedger()).mismatches, [
            { walletId: other.walletId, balanceMicros: 0n, entriesMicros: 2n * M },
          ]);
        } finally {
          await options.tamper(other.walletId, 2n * M);
        }
        assert.deepEqual((await store.auditLedger()).mismatches, []);
      });

      test('usage is listed newest first and keyset-paged, by account or by key', async () => {
        const owner = await account(100n * M);
        const key = keyFor('live', owner.walletId, owner.id);
        await store.insertKey(key);
        for (let i = 0; i < 7; i++) {
          await debit(owner.walletId, 1n * M, {
            requestId: `req_u${i}`,
            accountId: owner.id,
            keyId: i % 2 === 0 ? key.id : null,
            at: T0 + i,
          });
        }
        const first = await store.listUsage({ accountId: owner.id }, null, 3);
        assert.deepEqual(
          first.map((u) => u.requestId),
          ['req_u6', 'req_u5', 'req_u4'],
        );
        const second = await store.listUsage({ accountId: owner.id }, first.at(-1)?.id ?? null, 3);
        assert.deepEqual(
          second.map((u) => u.requestId),
          ['req_u3', 'req_u2', 'req_u1'],
        );
        const last = await store.listUsage({ accountId: owner.id }, second.at(-1)?.id ?? null, 3);
        assert.deepEqual(
          last.map((u) => u.requestId),
          ['req_u0'],
        );
        const byKey = await store.listUsage({ keyId: key.id }, null, 10);
        assert.deepEqual(
          byKey.map((u) => u.requestId),
          ['req_u6', 'req_u4', 'req_u2', 'req_u0'],
        );
        assert.deepEqual(
          { ...byKey[0], id: 'x' },
          {
            id: 'x',
            requestId: 'req_u6',
            keyId: key.id,
            accountId: owner.id,
            walletId: owner.walletId,
            dataset: 'equities/stock-prices',
            channel: 'rest',
            listCostMicros: 2n * M,
            costMicros: 1n * M,
            burnedMicros: 1n * M,
            outcome: 'charged',
            rows: 10,
            at: T0 + 6,
          },
        );
      });

      test('usage is summed in the store by hour, dataset and channel, newest first, within a limit', async () => {
        const H = 3_600_000;
        const h0 = Math.floor(T0 / H) * H;
        const owner = await account(100n * M);
        const other = await account(100n * M);
        const mine = { accountId: owner.id };
        await debit(owner.walletId, 1n * M, { ...mine, at: h0 + 10 });
        await debit(other.walletId, 9n * M, { accountId: other.id, at: h0 + 11 });
        await debit(owner.walletId, 2n * M, { ...mine, channel: 'mcp', at: h0 + 20 });
        await store.recordUsage(
          usage(owner.walletId, { ...mine, burnedMicros: 0n, outcome: 'notional', at: h0 + H + 5 }),
        );
        await debit(owner.walletId, 3n * M, { ...mine, at: h0 + H + 6 });
        await store.credit({
          walletId: owner.walletId,
          kind: 'refund',
          amountMicros: 3n * M,
          at: h0 + H + 7,
          reverses: {
            month: MONTH,
            usage: usage(owner.walletId, {
              ...mine,
              listCostMicros: -2n * M,
              costMicros: -3n * M,
              burnedMicros: -3n * M,
              outcome: 'refunded',
              rows: 0,
              at: h0 + H + 6,
            }),
          },
        });
        await debit(owner.walletId, 4n * M, { ...mine, dataset: 'fx/rates', at: h0 + 2 * H });
        const shape = (sums: UsageSum[]) =>
          sums.map((s) => [s.bucketAt - h0, s.dataset, s.channel, s.served, s.refunded, s.burnedMicros]);
        const all = await store.sumUsage(mine, { sinceMs: 0, bucketMs: H, limit: 100 });
        assert.deepEqual(shape(all.sums), [
          [2 * H, 'fx/rates', 'rest', 1, 0, 4n * M],
          [H, 'equities/stock-prices', 'rest', 2, 1, 0n],
          [0, 'equities/stock-prices', 'mcp', 1, 0, 2n * M],
          [0, 'equities/stock-prices', 'rest', 1, 0, 1n * M],
        ]);
        assert.equal(all.more, false);
        const events = await store.listUsage(mine, null, 100);
        assert.equal(all.sums[0]?.newestId, events[0]?.id, "a bucket's newest event");
        const recent = await store.sumUsage(mine, { sinceMs: h0 + H, bucketMs: H, limit: 100 });
        assert.deepEqual(shape(recent.sums), shape(all.sums).slice(0, 2));
        assert.equal(recent.more, false);
        const newestTwo = await store.sumUsage(mine, { sinceMs: 0, bucketMs: H, limit: 2 });
        assert.deepEqual(shape(newestTwo.sums), [
          [2 * H, 'fx/rates', 'rest', 1, 0, 4n * M],
          [H, 'equities/stock-prices', 'rest', 0, 1, -3n * M],
        ]);
        assert.equal(newestTwo.more, true, 'older events were left out');
        const byDay = await store.sumUsage(mine, { sinceMs: 0, bucketMs: 24 * H, limit: 100 });
        assert.equal(
          byDay.sums.reduce((n, s) => n + s.served - s.refunded, 0),
          4,
        );
      });

      test("a wallet's ledger is listed newest first and keyset-paged, the same entries as the whole list", async () => {
        const owner = await account(10n * M);
        const other = await account(5n * M);
        for (let i = 1; i <= 4; i++) {
          await debit(owner.walletId, BigInt(i) * M, { accountId: owner.id, at: T0 + i });
          await debit(other.walletId, 1n * M, { accountId: other.id, at: T0 + i });
        }
        const whole = await store.listEntries(owner.walletId);
        assert.equal(whole.length, 5);
        const newestFirst = [...whole].reverse();
        const first = await store.listEntriesPage(owner.walletId, { beforeId: null, limit: 2 });
        assert.deepEqual(first, newestFirst.slice(0, 2));
        assert.deepEqual(
          first.map((e) => e.balanceAfterMicros),
          [0n, 4n * M],
        );
        const second = await store.listEntriesPage(owner.walletId, {
          beforeId: first[1]?.id ?? null,
          limit: 2,
        });
        assert.deepEqual(second, newestFirst.slice(2, 4));
        const last = await store.listEntriesPage(owner.walletId, {
          beforeId: second[1]?.id ?? null,
          limit: 2,
        });
        assert.deepEqual(last, newestFirst.slice(4));
        assert.equal(last[0]?.kind, 'topup');
        assert.deepEqual(
          await store.listEntriesPage(owner.walletId, { beforeId: last[0]?.id ?? null, limit: 2 }),
          [],
        );
        assert.deepEqual(await store.listEntriesPage('wal_missing', { beforeId: null, limit: 2 }), []);
      });
    });

    describe('indexed reads: entity key columns and capped scans', () => {
      // Two datasets of the same rows: `keyed` under a layout (its entity filters walk key indexes),
      // `plain` under none (every filter checked row by row). Every read must agree on both.
      const rows: Row[] = [];
      const symbols = ['AAPL', 'MSFT', 'IBM', 'TSLA', 'NVDA'];
      for (let day = 1; day <= 28; day++) {
        symbols.forEach((symbol, i) => {
          rows.push({
            date: `2026-02-${String(day).padStart(2, '0')}`,
            symbol,
            venue: (day + i) % 3 === 0 ? 'X' : 'Y',
            lot: i % 2 === 0 ? 100 : 50,
            open: day % 7 === 0,
            close: day + i / 10,
          });
        });
      }
      let keyed: string;
      let plain: string;
      before(async () => {
        keyed = `test/keyed-${unique()}`;
        plain = `test/plain-${unique()}`;
        await store.syncLayouts(new Map([[keyed, ['symbol', 'venue', 'lot', 'open']]]));
        await store.loadRows(keyed, 'date', rows, 'import');
        await store.loadRows(plain, 'date', rows, 'import');
      });

      /** Every page of a read, following its cursor: rows, and each page's count and examined. */
      async function pages(dataset: string, query: Omit<PageQuery, 'dataset'>) {
        const seen: string[] = [];
        const shape: [number, number][] = [];
        let after: { t: string; id: number } | undefined;
        for (let guard = 0; guard < 500; guard++) {
          const page = await store.queryRows({ ...query, dataset, ...(after ? { after } : {}) });
          seen.push(...page.rows.map((r) => r.json));
          shape.push([page.rows.length, page.examined]);
          if (!page.next) return { seen, shape };
          after = page.next;
        }
        throw new Error('the cursor never ended');
      }

      const reference = (filters: Record<string, (string | number | boolean)[]>, descending: boolean) =>
        rows
          .map((row, i) => ({ row, id: i + 1 }))
          .filter(({ row }) => Object.entries(filters).every(([f, vs]) => vs.includes(row[f] as never)))
          .sort((a, b) =>
            a.row.date === b.row.date
              ? (a.id - b.id) * (descending ? -1 : 1)
              : String(a.row.date) < String(b.row.date) === descending
                ? 1
                : -1,
          )
          .map(({ row }) => JSON.stringify(row));

      test('entity filters, one key or several, with or without a range: the rows of a row-by-row read', async () => {
        const cases: { filters: Record<string, string[] | number[]>; from?: string; toExclusive?: string }[] =
          [
            { filters: { symbol: ['MSFT'] } },
            { filters: { symbol: ['TSLA', 'AAPL', 'IBM'] } },
            { filters: { symbol: ['MSFT'] }, from: '2026-02-05', toExclusive: '2026-02-19' },
            { filters: { symbol: ['MSFT', 'NVDA'], venue: ['X'] } },
            { filters: { lot: [50] } },
            { filters: { open: ['true'], symbol: ['IBM', 'NOPE'] } },
            { filters: { symbol: ['NOPE'] } },
            { filters: { close: [3.2, 14.4] } },
          ];
        for (const c of cases) {
          for (const descending of [true, false]) {
            for (const limit of [1, 7, 200]) {
              const query = { ...c, descending, limit };
              const a = await pages(keyed, query);
              const b = await pages(plain, query);
              assert.deepEqual(a.seen, b.seen, JSON.stringify(query));
              const text = await store.queryPage({ ...query, dataset: keyed });
              const built = await pageOfRows({ ...query, dataset: keyed }, (q) => store.queryRows(q));
              assert.deepEqual(text, built, JSON.stringify(query));
            }
          }
        }
        assert.deepEqual(
          (await pages(keyed, { filters: { symbol: ['TSLA', 'AAPL'] }, descending: true, limit: 9 })).seen,
          reference({ symbol: ['TSLA', 'AAPL'] }, true),
        );
      });

      test('a read an index serves examines its page and the row after it', async () => {
        const one = await store.queryRows({
          dataset: keyed,
          filters: { symbol: ['IBM'] },
          descending: true,
          limit: 5,
        });
        assert.deepEqual([one.rows.length, one.examined], [5, 6]);
        const last = await store.queryRows({
          dataset: keyed,
          filters: { symbol: ['IBM'] },
          descending: true,
          limit: 5,
          from: '2026-02-26',
        });
        assert.deepEqual([last.rows.length, last.examined, last.next], [3, 3, null]);
        const page = await store.queryPage({
          dataset: keyed,
          filters: { symbol: ['IBM', 'AAPL'] },
          descending: false,
          limit: 4,
        });
        assert.deepEqual([page.count, page.examined], [4, 5]);
      });

      test('a changed layout re-keys the stored rows; an import by natural key writes its keys', async () => {
        await store.syncLayouts(new Map([[keyed, ['venue', 'symbol']]]));
        const { rekeyed } = await store.syncLayouts(new Map([[keyed, ['venue', 'symbol']]]));
        assert.deepEqual(rekeyed, [], 'a second sync finds every dataset keyed');
        const query = { filters: { symbol: ['NVDA'], venue: ['Y'] }, descending: true, limit: 6 };
        assert.deepEqual((await pages(keyed, query)).seen, (await pages(plain, query)).seen);
        assert.deepEqual(
          (await pages(keyed, query)).seen,
          reference({ symbol: ['NVDA'], venue: ['Y'] }, true),
        );

        const upserted = `test/keyed-upsert-${unique()}`;
        await store.syncLayouts(new Map([[upserted, ['symbol']]]));
        const run = {
          importer: 'test-format',
          sourceName: 'Test source',
          fileName: 'k.csv',
          sha256: 'cd'.repeat(32),
          licence: 'Public domain',
          attribution: null,
          importedAt: T0,
          rowsRead: 10,
          rowsRejected: 0,
        };
        const keyedRows = rows.slice(0, 10).map((row) => ({ key: `${row.symbol}|${row.date}`, row }));
        await store.upsertRows(upserted, 'date', keyedRows, run);
        await store.upsertRows(
          upserted,
          'date',
          [{ key: 'TSLA|2026-02-01', row: { ...rows[3], close: 1 } }],
          run,
        );
        const tsla = await store.queryRows({
          dataset: upserted,
          filters: { symbol: ['TSLA'] },
          descending: false,
          limit: 5,
        });
        assert.deepEqual(
          tsla.rows.map((r) => JSON.parse(r.json).close),
          [1, 2.3],
        );
      });

      test(`a filter no index serves examines at most ${SCAN_CAP} rows a read; its cursor goes on`, async () => {
        const big = `test/scan-${unique()}`;
        const many: Row[] = [];
        const total = SCAN_CAP * 2 + 500;
        for (let i = 0; i < total; i++) {
          many.push({ date: `2026-03-${String(1 + (i % 28)).padStart(2, '0')}`, symbol: `S${i % 40}`, n: i });
        }
        await store.syncLayouts(new Map([[big, ['symbol']]]));
        await store.loadRows(big, 'date', many, 'import');
        // The only matches sit where the first read's walk never gets.
        const wanted = [SCAN_CAP + 3, total - 1, 0].map((i) => many[i]?.n as number);
        const { seen, shape } = await pages(big, { filters: { n: wanted }, descending: false, limit: 2 });
        assert.deepEqual(
          seen.map((json) => JSON.parse(json).n).sort((a, b) => a - b),
          [...wanted].sort((a, b) => a - b),
        );
        assert.ok(
          shape.every(([, examined]) => examined <= SCAN_CAP),
          JSON.stringify(shape),
        );
        assert.equal(shape.reduce((sum, [, examined]) => sum + examined, 0) >= total - 2, true);
        const first = await store.queryPage({
          dataset: big,
          filters: { n: [27] },
          descending: true,
          limit: 5,
        });
        assert.deepEqual([first.count, first.examined], [1, SCAN_CAP]);
        assert.ok(first.next, 'a read that stopped at the cap says where to go on');
        const capped = await store.queryPage({
          dataset: big,
          filters: { n: [-1] },
          descending: true,
          limit: 5,
        });
        assert.deepEqual([capped.count, capped.examined, capped.json], [0, SCAN_CAP, '']);
        assert.ok(capped.next);
        // With an index walk underneath: only that entity's rows count towards the cap.
        const narrow = await store.queryRows({
          dataset: big,
          filters: { symbol: ['S7'], n: [-1] },
          descending: true,
          limit: 5,
        });
        assert.deepEqual(
          [narrow.rows.length, narrow.examined, narrow.next],
          [0, Math.ceil((total - 7) / 40), null],
        );
      });
    });

    describe('dataset rows', () => {
      const rows: Row[] = [];
      const symbols = ['AAPL', 'MSFT', 'IBM'];
      for (let day = 1; day <= 10; day++) {
        for (const symbol of symbols) {
          rows.push({
            date: `2026-01-${String(day).padStart(2, '0')}`,
            symbol,
            venue: day % 2 ? 'X' : 'Y',
            close: day + 0.5,
          });
        }
      }
      let dataset: string;
      before(async () => {
        dataset = `test/rows-${unique()}`;
        assert.equal(await store.loadRows(dataset, 'date', rows, 'sample'), true);
      });

      const all = async (query: Partial<Parameters<Store['queryRows']>[0]>) =>
        (await store.queryRows({ dataset, filters: {}, descending: true, limit: 1000, ...query })).rows;

      test('a sample load fills an empty dataset once; an import replaces it', async () => {
        const other = `test/load-${unique()}`;
        assert.equal(await store.datasetSource(other), null);
        assert.equal(await store.loadRows(other, 'date', rows.slice(0, 3), 'sample'), true);
        assert.equal(await store.loadRows(other, 'date', rows, 'sample'), false, 'already loaded');
        assert.equal(
          (await store.queryRows({ dataset: other, filters: {}, descending: false, limit: 100 })).rows.length,
          3,
        );
        const source = await store.datasetSource(other);
        assert.equal(source?.source, 'sample');
        assert.equal(source?.rows, 3);
        assert.ok(typeof source?.loadedAt === 'number');
        assert.equal(await store.loadRows(other, 'date', rows.slice(0, 5), 'import'), true);
        assert.equal((await store.datasetSource(other))?.source, 'import');
        assert.equal(
          (await store.queryRows({ dataset: other, filters: {}, descending: false, limit: 100 })).rows.length,
          5,
        );
      });

      test('a load with ifLoadedAt happens only over that load; every load moves loadedAt forward', async () => {
        const other = `test/cas-${unique()}`;
        await store.loadRows(other, 'date', rows.slice(0, 3), 'import');
        const first = (await store.datasetSource(other))?.loadedAt as number;
        await store.loadRows(other, 'date', rows.slice(0, 4), 'import', undefined, { ifLoadedAt: first });
        const second = (await store.datasetSource(other))?.loadedAt as number;
        assert.ok(second > first, 'strictly later, even within the same millisecond');
        await assert.rejects(
          store.loadRows(other, 'date', rows.slice(0, 1), 'import', undefined, { ifLoadedAt: first }),
          (error: { code?: string }) => error.code === 'conflict',
        );
        assert.equal((await store.datasetSource(other))?.rows, 4, 'the stale load changed nothing');
        assert.equal(
          (await store.queryRows({ dataset: other, filters: {}, descending: false, limit: 10 })).rows.length,
          4,
        );
      });

      /** The rows in batches of `size`, with a turn of the event loop before each, as a parser yields them. */
      async function* batchesOf(list: readonly Row[], size: number, failAfter?: number) {
        for (let start = 0; start < list.length; start += size) {
          if (failAfter !== undefined && start >= failAfter) throw new Error('line 9: not a number');
          await new Promise((resolve) => setImmediate(resolve));
          yield list.slice(start, start + size);
        }
      }
      const everything = async (name: string, csvColumns?: string) =>
        (
          await store.queryRows({
            dataset: name,
            filters: {},
            descending: false,
            limit: 1000,
            ...(csvColumns === undefined ? {} : { csvColumns }),
          })
        ).rows;

      test('a streamed load stores its batches as loadRows stores the same rows, replacing the dataset', async () => {
        const streamed = `test/stream-${unique()}`;
        const whole = `test/whole-${unique()}`;
        const columns = ['date', 'symbol', 'close'];
        await store.loadRows(streamed, 'date', rows.slice(0, 4), 'sample');
        assert.equal(
          await store.loadRowsStream(streamed, 'date', batchesOf(rows, 7), 'import', columns),
          true,
        );
        assert.equal(await store.loadRows(whole, 'date', rows, 'import', columns), true);
        const key = csvColumnsKey(columns);
        const got = await everything(streamed, key);
        assert.equal(got.length, rows.length, 'the sample rows are gone');
        assert.deepEqual(
          got.map(({ id, t, json, csv, importId }) => ({ id, t, json, csv, importId })),
          (await everything(whole, key)).map(({ id, t, json, csv, importId }) => ({
            id,
            t,
            json,
            csv,
            importId,
          })),
        );
        assert.deepEqual(
          got.map((r) => JSON.parse(r.json)),
          [...rows].sort((a, b) => String(a.date).localeCompare(String(b.date))),
        );
        const source = await store.datasetSource(streamed);
        assert.equal(source?.source, 'import');
        assert.equal(source?.rows, rows.length);
        const page = await store.queryPage({
          dataset: streamed,
          filters: {},
          descending: false,
          limit: 5,
          csvColumns: key,
          csvJoin: 'crlf',
        });
        assert.deepEqual(page, {
          ...(await store.queryPage({
            dataset: whole,
            filters: {},
            descending: false,
            limit: 5,
            csvColumns: key,
            csvJoin: 'crlf',
          })),
        });
        assert.equal(
          await store.loadRowsStream(streamed, 'date', batchesOf([], 7), 'import'),
          true,
          'an empty stream empties the dataset',
        );
        assert.deepEqual(await everything(streamed), []);
        assert.equal((await store.datasetSource(streamed))?.rows, 0);
      });

      test('a streamed load whose batches fail part-way loads nothing and leaves the dataset as it was', async () => {
        const other = `test/stream-fail-${unique()}`;
        await store.loadRows(other, 'date', rows.slice(0, 3), 'import', ['date', 'symbol']);
        const before = await store.datasetSource(other);
        const stored = await everything(other);
        await assert.rejects(
          store.loadRowsStream(other, 'date', batchesOf(rows, 5, 20), 'import', ['date']),
          /line 9: not a number/,
        );
        assert.deepEqual(await store.datasetSource(other), before, 'the same record, loadedAt included');
        assert.deepEqual(await everything(other), stored, 'none of the 20 rows yielded before the failure');
        const fresh = `test/stream-fail-${unique()}`;
        await assert.rejects(store.loadRowsStream(fresh, 'date', batchesOf(rows, 5, 5), 'import'), /line 9/);
        assert.equal(await store.datasetSource(fresh), null, 'a first load that failed leaves no record');
        assert.deepEqual(await everything(fresh), []);
        // The store goes on: the next load, streamed or not, is whole.
        assert.equal(await store.loadRowsStream(other, 'date', batchesOf(rows, 5), 'import'), true);
        assert.equal((await everything(other)).length, rows.length);
        assert.equal(await store.loadRows(other, 'date', rows.slice(0, 2), 'import'), true);
        assert.equal((await store.datasetSource(other))?.rows, 2);
      });

      test('a streamed sample load never replaces rows, and a stale ifLoadedAt streams nothing in', async () => {
        const other = `test/stream-cas-${unique()}`;
        assert.equal(await store.loadRowsStream(other, 'date', batchesOf(rows, 4), 'sample'), true);
        assert.equal(await store.loadRowsStream(other, 'date', batchesOf(rows, 4), 'sample'), false);
        const first = (await store.datasetSource(other))?.loadedAt as number;
        assert.equal((await store.datasetSource(other))?.source, 'sample');
        await store.loadRowsStream(other, 'date', batchesOf(rows.slice(0, 4), 2), 'import', undefined, {
          ifLoadedAt: first,
        });
        const second = await store.datasetSource(other);
        assert.ok((second?.loadedAt as number) > first);
        await assert.rejects(
          store.loadRowsStream(other, 'date', batchesOf(rows, 2), 'import', undefined, { ifLoadedAt: first }),
          (error: { code?: string }) => error.code === 'conflict',
        );
        assert.deepEqual(await store.datasetSource(other), second, 'the stale load changed nothing');
        assert.equal((await everything(other)).length, 4);
      });

      test('streamed loads of one dataset at once each load whole, one after the other', async () => {
        const other = `test/stream-race-${unique()}`;
        const [a, b] = await Promise.all([
          store.loadRowsStream(other, 'date', batchesOf(rows.slice(0, 10), 3), 'import'),
          store.loadRowsStream(other, 'date', batchesOf(rows.slice(10, 30), 3), 'import'),
        ]);
        assert.deepEqual([a, b], [true, true]);
        const got = (await everything(other)).map((r) => JSON.parse(r.json));
        const source = await store.datasetSource(other);
        assert.equal(source?.rows, got.length);
        assert.ok(got.length === 10 || got.length === 20, `one load whole, not a mix (${got.length})`);
        const expected = got.length === 10 ? rows.slice(0, 10) : rows.slice(10, 30);
        assert.deepEqual(
          got,
          [...expected].sort((x, y) => String(x.date).localeCompare(String(y.date))),
        );
      });

      test('rows loaded with CSV columns carry their CSV line for exactly those columns', async () => {
        const other = `test/csv-${unique()}`;
        const odd: Row[] = [
          { date: '2026-02-01', symbol: '=HYPERLINK("x")', note: 'a, "quoted" cell', close: -1.25 },
          { date: '2026-02-02', symbol: 'MSFT', note: null, close: 3 },
        ];
        const columns = ['date', 'symbol', 'note', 'close', 'absent'];
        assert.equal(await store.loadRows(other, 'date', odd, 'import', columns), true);
        const key = csvColumnsKey(columns);
        const page = (
          await store.queryRows({
            dataset: other,
            filters: {},
            descending: false,
            limit: 10,
            csvColumns: key,
          })
        ).rows;
        // Written out, not derived: formula guard, quoting and empty cells as the REST CSV writes them.
        assert.deepEqual(
          page.map((r) => r.csv),
          [`2026-02-01,"'=HYPERLINK(""x"")","a, ""quoted"" cell",-1.25,`, '2026-02-02,MSFT,,3,'],
        );
        assert.deepEqual(JSON.parse(page[0]?.json ?? ''), odd[0], 'the JSON is unchanged');
        const otherColumns = (
          await store.queryRows({
            dataset: other,
            filters: {},
            descending: false,
            limit: 10,
            csvColumns: csvColumnsKey(['date', 'symbol']),
          })
        ).rows;
        assert.deepEqual(
          otherColumns.map((r) => r.csv),
          [null, null],
          'lines rendered over other columns are not offered',
        );
        const plain = (await store.queryRows({ dataset: other, filters: {}, descending: false, limit: 10 }))
          .rows;
        assert.ok(
          plain.every((r) => r.csv === undefined),
          'no lines unless asked for',
        );
        // A load without columns (an older loader) leaves no lines behind, even under the same key.
        assert.equal(await store.loadRows(other, 'date', odd, 'import'), true);
        const reloaded = (
          await store.queryRows({
            dataset: other,
            filters: {},
            descending: false,
            limit: 10,
            csvColumns: key,
          })
        ).rows;
        assert.deepEqual(
          reloaded.map((r) => r.csv),
          [null, null],
        );
        for (const csvJoin of ['json', 'crlf'] as const) {
          const page = await store.queryPage({
            dataset: other,
            filters: {},
            descending: false,
            limit: 10,
            csvColumns: key,
            csvJoin,
          });
          assert.equal(page.count, 2);
          assert.equal(page.csv, null, `no ${csvJoin} lines on a page of a load without columns`);
        }
      });

      test('concurrent sample loads of one dataset load it once', async () => {
        const other = `test/race-${unique()}`;
        const results = await Promise.all([
          store.loadRows(other, 'date', rows, 'sample'),
          store.loadRows(other, 'date', rows, 'sample'),
        ]);
        assert.deepEqual(results.sort(), [false, true]);
        assert.equal((await all({ dataset: other })).length, rows.length);
      });

      test('rows come back as stored JSON text, newest first by default, ties broken by id', async () => {
        const result = await all({ limit: 4 });
        assert.deepEqual(
          result.map((r) => [r.t, r.id]),
          [
            ['2026-01-10', 30],
            ['2026-01-10', 29],
            ['2026-01-10', 28],
            ['2026-01-09', 27],
          ],
        );
        assert.deepEqual(JSON.parse(result[0]?.json ?? ''), rows[29]);
        const asc = await all({ descending: false, limit: 2 });
        assert.deepEqual(
          asc.map((r) => r.id),
          [1, 2],
        );
      });

      test('filters: OR within a field, AND across fields; unknown values match nothing', async () => {
        const two = await all({ filters: { symbol: ['AAPL', 'IBM'] } });
        assert.equal(two.length, 20);
        assert.ok(two.every((r) => ['AAPL', 'IBM'].includes(JSON.parse(r.json).symbol)));
        const both = await all({ filters: { symbol: ['MSFT'], venue: ['Y'] } });
        assert.equal(both.length, 5);
        assert.equal((await all({ filters: { symbol: ['NOPE'] } })).length, 0);
        assert.equal((await all({ filters: { missing_field: ['x'] } })).length, 0);
        assert.equal((await all({ filters: { symbol: ["x' OR '1'='1"] } })).length, 0);
      });

      test('filters: booleans by their JSON text, numbers by value with every digit, the same on every store', async () => {
        const flagged = `test/flags-${unique()}`;
        const flags: Row[] = [
          { date: '2026-01-01', is_meeting: true, count: 2, lat: -6.081689834590001, code: '01' },
          { date: '2026-01-02', is_meeting: false, count: 3, lat: -6.08168983459, code: '1' },
          { date: '2026-01-03', is_meeting: true, count: 3, lat: 144.29600524902344, code: '3' },
          { date: '2026-01-04', is_meeting: null, count: null, lat: null, code: null },
        ];
        assert.equal(await store.loadRows(flagged, 'date', flags, 'sample'), true);
        const days = async (filters: Record<string, string[] | number[]>) =>
          (await store.queryRows({ dataset: flagged, filters, descending: false, limit: 10 })).rows.map(
            (r) => r.t,
          );
        assert.deepEqual(await days({ is_meeting: ['true'] }), ['2026-01-01', '2026-01-03']);
        assert.deepEqual(await days({ is_meeting: ['false'] }), ['2026-01-02']);
        assert.deepEqual(await days({ is_meeting: ['1'] }), []);
        assert.deepEqual(await days({ count: [3] }), ['2026-01-02', '2026-01-03']);
        assert.deepEqual(await days({ count: [2, 3.5] }), ['2026-01-01']);
        // 15 significant digits would make these two one value.
        assert.deepEqual(await days({ lat: [-6.081689834590001] }), ['2026-01-01']);
        assert.deepEqual(await days({ lat: [-6.08168983459] }), ['2026-01-02']);
        assert.deepEqual(await days({ lat: [144.29600524902344, 1] }), ['2026-01-03']);
        // Past 2^53 a stored number is the double JavaScript printed: it matches that double.
        const huge = `test/huge-${unique()}`;
        await store.loadRows(huge, 'date', [{ date: '2026-01-01', n: 2 ** 62 + 2 ** 20 }], 'sample');
        const hugeRows = (
          await store.queryRows({
            dataset: huge,
            filters: { n: [2 ** 62 + 2 ** 20] },
            descending: false,
            limit: 5,
          })
        ).rows;
        assert.equal(hugeRows.length, 1);
        // A number filter on a text field matches no text, and a text filter matches text exactly.
        assert.deepEqual(await days({ code: [1] }), []);
        assert.deepEqual(await days({ code: ['01'] }), ['2026-01-01']);
        const page = await store.queryPage({
          dataset: flagged,
          filters: { is_meeting: ['true'], lat: [144.29600524902344] },
          descending: false,
          limit: 10,
        });
        assert.equal(page.count, 1);
      });

      test('time bounds: from is inclusive, toExclusive is exclusive', async () => {
        const window = await all({ from: '2026-01-03', toExclusive: '2026-01-05' });
        assert.deepEqual([...new Set(window.map((r) => r.t))], ['2026-01-04', '2026-01-03']);
        assert.equal(window.length, 6);
        assert.equal(
          (await all({ from: '2026-01-10T00:00:00Z' })).length,
          0,
          'string order: a later instant',
        );
      });

      test('queryPage is queryRows as one text page, with its next keyset, for every shape', async () => {
        const odd = `test/page-${unique()}`;
        const columns = ['date', 'symbol', 'note', 'close'];
        const oddRows: Row[] = rows.map((row, i) => ({
          ...row,
          note:
            i % 4 === 0
              ? `line\nbreak, "quoted" \\ tab\t é \u0001 \u2028 ${i}`
              : i % 4 === 1
                ? null
                : `n${i}`,
        }));
        assert.equal(await store.loadRows(odd, 'date', oddRows, 'import', columns), true);
        const csvColumns = csvColumnsKey(columns);
        const shapes: Partial<PageQuery>[] = [
          {},
          { descending: false },
          { limit: 1 },
          { limit: 29 },
          { limit: 30 },
          { limit: 31 },
          { filters: { symbol: ['AAPL', 'IBM'] }, limit: 7 },
          { filters: { symbol: ['NOPE'] } },
          { from: '2026-01-03', toExclusive: '2026-01-06', limit: 4, descending: false },
          { after: { t: '2026-01-05', id: 14 }, limit: 5 },
          { after: { t: '2026-01-05', id: 14 }, limit: 5, descending: false },
        ];
        for (const shape of shapes) {
          for (const csv of [undefined, 'crlf', 'json'] as const) {
            const query: PageQuery = {
              dataset: odd,
              filters: {},
              descending: true,
              limit: 1000,
              ...shape,
              ...(csv ? { csvColumns, csvJoin: csv } : {}),
            };
            const page = await store.queryPage(query);
            const reference = await pageOfRows(query, (q) => store.queryRows(q));
            assert.deepEqual(page, reference, JSON.stringify({ shape, csv }));
            assert.equal(JSON.parse(`[${page.json}]`).length, page.count);
            if (csv === 'json' && page.csv) {
              const text = JSON.parse(`"${page.csv}"`) as string;
              assert.equal(text.split('\n').length >= page.count, true);
            }
          }
        }
        // Keyset paging by `next` visits every row once.
        const seen: string[] = [];
        let after: PageQuery['after'];
        for (let i = 0; i < 10; i++) {
          const page = await store.queryPage({
            dataset: odd,
            filters: {},
            descending: true,
            limit: 7,
            ...(after ? { after } : {}),
          });
          seen.push(...(JSON.parse(`[${page.json}]`) as Row[]).map((r) => `${r.date}/${r.symbol}`));
          if (!page.next) break;
          after = page.next;
        }
        assert.equal(seen.length, 30);
        assert.equal(new Set(seen).size, 30);
        // Lines over other columns are not offered: the page says so rather than serving them.
        const other = await store.queryPage({
          dataset: odd,
          filters: {},
          descending: true,
          limit: 5,
          csvColumns: csvColumnsKey(['date']),
          csvJoin: 'json',
        });
        assert.equal(other.csv, null);
        assert.equal(other.count, 5);
        const otherCrlf = await store.queryPage({
          dataset: odd,
          filters: {},
          descending: true,
          limit: 5,
          csvColumns: csvColumnsKey(['date']),
          csvJoin: 'crlf',
        });
        assert.equal(otherCrlf.csv, null, 'nor for a CSV answer');
        // An empty page has all of its (no) lines, whatever they were rendered over.
        for (const csvJoin of ['json', 'crlf'] as const) {
          const empty = await store.queryPage({
            dataset: odd,
            filters: { symbol: ['NO-SUCH-SYMBOL'] },
            descending: true,
            limit: 5,
            csvColumns: csvColumnsKey(['date']),
            csvJoin,
          });
          assert.deepEqual([empty.count, empty.json, empty.csv, empty.next], [0, '', '', null]);
        }
        // A limit that is not a whole number of rows is refused before anything is read.
        for (const limit of [2.5, -1, Number.NaN]) {
          const query = { dataset: odd, filters: {}, descending: true, limit };
          await assert.rejects(store.queryPage(query), { name: 'RangeError', message: /not a row limit/ });
          await assert.rejects(store.queryRows(query), { name: 'RangeError', message: /not a row limit/ });
        }
      });

      test('keyset paging visits every row exactly once, in both directions', async () => {
        for (const descending of [true, false]) {
          const seen: number[] = [];
          let after: { t: string; id: number } | undefined;
          for (let page = 0; page < 10; page++) {
            const result = (
              await store.queryRows({
                dataset,
                filters: { symbol: ['AAPL', 'MSFT'] },
                descending,
                limit: 7,
                ...(after ? { after } : {}),
              })
            ).rows;
            seen.push(...result.map((r) => r.id));
            const last = result.at(-1);
            if (result.length < 7 || !last) break;
            after = { t: last.t, id: last.id };
          }
          assert.equal(seen.length, 20);
          assert.equal(new Set(seen).size, 20);
          const sorted = [...seen].sort((a, b) => a - b);
          assert.deepEqual(seen, descending ? sorted.reverse() : sorted);
        }
      });

      const run = (fileName: string, at: number) => ({
        importer: 'test-format',
        sourceName: 'Test source',
        fileName,
        sha256: 'ab'.repeat(32),
        licence: 'Public domain',
        attribution: null,
        importedAt: at,
        rowsRead: 4,
        rowsRejected: 1,
      });
      const keyed = (list: Row[]) => list.map((row) => ({ key: `${row.symbol}|${row.date}`, row }));

      test('an import by natural key drops sample rows, then replaces what it imports again', async () => {
        const other = `test/upsert-${unique()}`;
        await store.loadRows(other, 'date', rows.slice(0, 6), 'sample');
        const first = await store.upsertRows(other, 'date', keyed(rows.slice(0, 3)), run('a.csv', T0), [
          'date',
          'symbol',
        ]);
        assert.deepEqual(
          { ...first, id: 0 },
          {
            id: 0,
            dataset: other,
            importer: 'test-format',
            sourceName: 'Test source',
            fileName: 'a.csv',
            sha256: 'ab'.repeat(32),
            licence: 'Public domain',
            attribution: null,
            importedAt: T0,
            rowsRead: 4,
            rowsInserted: 3,
            rowsReplaced: 0,
            rowsRejected: 1,
            firstT: '2026-01-01',
            lastT: '2026-01-01',
          },
        );
        const span = await store.datasetSpan(other);
        assert.deepEqual(
          { ...span, loadedAt: 0 },
          {
            source: 'import',
            rows: 3,
            firstT: '2026-01-01',
            lastT: '2026-01-01',
            loadedAt: 0,
          },
        );

        // The same rows again, one corrected, and three new: 3 replaced, 3 added, none twice.
        const corrected = rows.slice(0, 6).map((row, i) => (i === 1 ? { ...row, close: 99.25 } : row));
        const second = await store.upsertRows(other, 'date', keyed(corrected), run('b.csv', T0 + 1), [
          'date',
          'symbol',
        ]);
        assert.deepEqual([second.rowsInserted, second.rowsReplaced], [3, 3]);
        assert.ok(second.id > first.id);
        const stored = (await store.queryRows({ dataset: other, filters: {}, descending: false, limit: 100 }))
          .rows;
        assert.equal(stored.length, 6);
        assert.equal(new Set(stored.map((r) => r.id)).size, 6);
        assert.deepEqual(
          stored.map((r) => JSON.parse(r.json).close),
          corrected.map((r) => r.close),
        );
        assert.ok(stored.every((r) => r.importId === second.id));
        assert.equal((await store.datasetSpan(other))?.rows, 6);
        assert.equal((await store.datasetSpan(other))?.lastT, '2026-01-02');
      });

      test('a page names the import runs behind its rows; sample rows name none', async () => {
        const other = `test/prov-${unique()}`;
        await store.loadRows(other, 'date', rows.slice(0, 3), 'sample');
        const sample = await store.queryPage({ dataset: other, filters: {}, descending: false, limit: 10 });
        assert.deepEqual(sample.imports, []);
        const a = await store.upsertRows(other, 'date', keyed(rows.slice(0, 3)), run('a.csv', T0));
        const b = await store.upsertRows(other, 'date', keyed(rows.slice(3, 6)), run('b.csv', T0 + 1));
        const columns = csvColumnsKey(['date', 'symbol']);
        for (const query of [
          { limit: 10 },
          { limit: 10, csvColumns: columns, csvJoin: 'crlf' as const },
          { limit: 2 },
          { limit: 2, descending: true },
        ]) {
          const page = await store.queryPage({ dataset: other, filters: {}, descending: false, ...query });
          const reference = await pageOfRows(
            { dataset: other, filters: {}, descending: false, ...query },
            (q) => store.queryRows(q),
          );
          assert.deepEqual(page.imports, reference.imports);
        }
        assert.deepEqual(
          (await store.queryPage({ dataset: other, filters: {}, descending: false, limit: 10 })).imports,
          [a.id, b.id],
        );
        assert.deepEqual(
          (await store.queryPage({ dataset: other, filters: {}, descending: true, limit: 2 })).imports,
          [b.id],
        );
        const listed = await store.listImportRuns({ dataset: other }, 10);
        assert.deepEqual(
          listed.map((r) => r.fileName),
          ['b.csv', 'a.csv'],
        );
        assert.deepEqual(
          (await store.listImportRuns({ ids: [a.id] }, 10)).map((r) => r.id),
          [a.id],
        );
        assert.deepEqual(await store.listImportRuns({ ids: [] }, 10), []);
      });

      test('a file that names one key twice loads its last row once', async () => {
        const other = `test/dup-${unique()}`;
        const twice = [
          ...keyed(rows.slice(0, 2)),
          { key: keyed(rows.slice(0, 1))[0]?.key as string, row: { ...rows[0], close: 7 } },
        ];
        const result = await store.upsertRows(other, 'date', twice, run('dup.csv', T0));
        assert.deepEqual([result.rowsInserted, result.rowsReplaced], [2, 0]);
        const stored = (
          await store.queryRows({
            dataset: other,
            filters: { symbol: ['AAPL'] },
            descending: false,
            limit: 10,
          })
        ).rows;
        assert.deepEqual(
          stored.map((r) => JSON.parse(r.json).close),
          [7],
        );
      });
    });
  });
}
