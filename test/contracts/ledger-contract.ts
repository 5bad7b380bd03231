/**
 * The Ledger contract: every adapter (SqliteStore, PostgresStore) runs this same suite against a real,
 * freshly migrated database. Each test makes its own accounts and wallets, so tests share one store.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.ts';
import { type KeyKind, newKey } from '../../src/domain/keys.ts';
import {
  BalanceLimitReached,
  type KeyRecord,
  type Ledger,
  type UsageInput,
  type UsageSum,
} from '../../src/store/port.ts';
import { analysisStoreCases } from './analysis-store-contract.ts';
import { passwordResetStoreCases } from './password-reset-contract.ts';

const T0 = Date.parse('2026-11-21T15:00:00Z');
const MONTH = '2026-11';
const M = 1_000_000n;

export function runLedgerContract(
  name: string,
  makeStore: () => Promise<Ledger>,
  options: {
    skip?: string | false;
    /**
     * Moves a wallet's balance by `deltaMicros` behind the store's back (raw SQL), so the audit can be
     * shown to find a balance that is not the sum of its entries.
     */
    tamper: (walletId: string, deltaMicros: bigint) => Promise<void>;
  },
): void {
  describe(`Ledger contract: ${name}`, { skip: options.skip ?? false }, () => {
    let store: Ledger;
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
    passwordResetStoreCases(
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

    describe('token purchases and requests', () => {
      test('a purchase credits once, whatever arrives at once; a refund never takes the wallet below zero', async () => {
        const buyer = await account(0n);
        const purchase = {
          paymentIntent: `pi_${unique()}`,
          sessionId: `cs_${unique()}`,
          accountId: buyer.id,
          walletId: buyer.walletId,
          packId: 'tokens-1k',
          tokens: 1000,
          amountCents: 10_000,
          currency: 'eur',
          receiptUrl: null,
          createdAt: T0,
        };
        const results = await Promise.all(Array.from({ length: 8 }, () => store.recordPurchase(purchase)));
        assert.equal(results.filter((r) => !r.duplicate).length, 1);
        assert.equal((await store.getWallet(buyer.walletId))?.balanceMicros, 1_000_000_000n);
        const entries = await store.listEntries(buyer.walletId);
        assert.deepEqual(
          entries.map((e) => [e.kind, e.amountMicros]),
          [['purchase', 1_000_000_000n]],
        );
        assert.equal((await store.purchaseByPaymentIntent(purchase.paymentIntent))?.entryId, entries[0]?.id);
        const half = await store.reclaimPurchase({
          paymentIntent: purchase.paymentIntent,
          refundKey: `r1-${unique()}`,
          tokens: 400,
          at: T0,
        });
        assert.deepEqual([half.takenMicros, half.shortfallMicros, half.duplicate], [400_000_000n, 0n, false]);
        const key = `r2-${unique()}`;
        const rest = await store.reclaimPurchase({
          paymentIntent: purchase.paymentIntent,
          refundKey: key,
          tokens: 800,
          at: T0,
        });
        assert.deepEqual([rest.takenMicros, rest.shortfallMicros], [600_000_000n, 200_000_000n]);
        const again = await store.reclaimPurchase({
          paymentIntent: purchase.paymentIntent,
          refundKey: key,
          tokens: 800,
          at: T0,
        });
        assert.equal(again.duplicate, true);
        assert.equal((await store.getWallet(buyer.walletId))?.balanceMicros, 0n);
        const after = await store.purchaseByPaymentIntent(purchase.paymentIntent);
        assert.deepEqual([after?.reclaimedTokens, after?.shortfallMicros], [1200, 200_000_000n]);
        assert.deepEqual((await store.auditLedger()).mismatches, []);
      });

      test('a token request is settled once: credited with its tokens, or declined with a reason', async () => {
        const asker = await account(0n);
        const base = {
          accountId: asker.id,
          walletId: asker.walletId,
          packId: 'tokens-1k',
          tokens: 1000,
          note: null,
        };
        const first = await store.createTokenRequest({ ...base, id: `treq_${unique()}`, createdAt: T0 });
        const second = await store.createTokenRequest({ ...base, id: `treq_${unique()}`, createdAt: T0 + 1 });
        assert.equal(first.status, 'open');
        const settled = await Promise.all(
          Array.from({ length: 6 }, () =>
            store.settleTokenRequest(first.id, { status: 'credited', at: T0, memo: 'm' }),
          ),
        );
        assert.equal(settled.filter((s) => s !== null).length, 1);
        assert.equal((await store.getWallet(asker.walletId))?.balanceMicros, 1_000_000_000n);
        const declined = await store.settleTokenRequest(second.id, {
          status: 'declined',
          at: T0,
          reason: 'no',
        });
        assert.deepEqual([declined?.status, declined?.reason, declined?.entryId], ['declined', 'no', null]);
        assert.deepEqual(
          (await store.listTokenRequests({ accountId: asker.id }, 10)).map((r) => r.status),
          ['declined', 'credited'],
        );
        assert.deepEqual(await store.listTokenRequests({ accountId: asker.id, status: 'open' }, 10), []);
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
  });
}
