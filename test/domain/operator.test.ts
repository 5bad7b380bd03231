/**
 * The Operator's calls over an in-memory SQLite store and the shipped config: accounts, packages,
 * early_bird, credits, key caps and the monthly job, with the exact refusals.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KeyRecord } from '../../src/store/port.ts';
import { operatorOverSqlite } from '../helpers/operator-store.ts';

const NOV = Date.parse('2026-11-28T12:00:00Z');
const BEFORE_CUTOFF = Date.parse('2025-12-01T00:00:00Z');

function liveKey(accountId: string, walletId: string, patch: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id: 'key_1',
    kind: 'live',
    digest: 'digest-1',
    displayPrefix: 'tmd_live_ab',
    name: null,
    accountId,
    walletId,
    createdAt: NOV,
    expiresAt: null,
    revokedAt: null,
    dailyCapMicros: null,
    monthlyCapMicros: null,
    ...patch,
  };
}

test('an account is created once per email, found by id or by email in any case', async () => {
  const clock = { now: NOV };
  const { operator, store } = await operatorOverSqlite(clock);
  const account = await operator.createAccount({
    email: ' Ops@Example.com ',
    password: 'correct horse battery',
  });
  assert.equal(account.email, 'ops@example.com');
  assert.equal(account.createdAt, NOV);
  assert.match(account.id, /^acc_/);
  assert.ok(account.passwordHash && !account.passwordHash.includes('correct horse'));
  assert.equal((await operator.findAccount('OPS@example.com')).id, account.id);
  assert.equal((await operator.findAccount(account.id)).email, 'ops@example.com');
  await assert.rejects(operator.createAccount({ email: 'ops@example.com' }), {
    code: 'conflict',
    message: 'An account with email ops@example.com exists.',
  });
  await assert.rejects(operator.findAccount('nobody@example.com'), {
    code: 'not_found',
    message: 'No account nobody@example.com.',
  });
  const view = await operator.view(account);
  assert.deepEqual(
    { package: view.package, balance: view.balanceMicros, keys: view.keys, eligible: view.earlyBirdEligible },
    { package: null, balance: 0n, keys: [], eligible: false },
  );
  await store.close();
});

test('assigning a package credits its monthly credits once a month; an unknown package is refused', async () => {
  const clock = { now: NOV };
  const { operator, store, config } = await operatorOverSqlite(clock);
  const account = await operator.createAccount({ email: 'pro@example.com' });
  const ids = config.pricing.commercial_skus.map((s) => s.id).join(', ');
  await assert.rejects(operator.assignPackage(account.id, 'gold'), {
    code: 'invalid_request',
    message: `No package "gold". Packages: ${ids}.`,
  });
  const first = await operator.assignPackage(account.id, 'pro');
  assert.equal(first.account.packageId, 'pro');
  assert.equal(first.monthlyCredit?.entry.amountMicros, 150_000_000_000n);
  assert.equal(first.monthlyCredit?.duplicate, false);
  const again = await operator.assignPackage('pro@example.com', 'pro');
  assert.equal(again.monthlyCredit?.duplicate, true);
  assert.equal((await operator.view(again.account)).balanceMicros, 150_000_000_000n);
  const run = await operator.runMonthlyCredits();
  assert.deepEqual(run, { month: '2026-11', credited: [], alreadyCredited: 1 });
  const cleared = await operator.assignPackage(account.id, null);
  assert.deepEqual([cleared.account.packageId, cleared.monthlyCredit], [null, null]);
  await store.close();
});

test('early_bird only for accounts made before the cohort cutoff; clearing is always allowed', async () => {
  const clock = { now: BEFORE_CUTOFF };
  const { operator, store } = await operatorOverSqlite(clock);
  const early = await operator.createAccount({ email: 'early@example.com' });
  clock.now = NOV;
  const late = await operator.createAccount({ email: 'late@example.com' });
  assert.equal((await operator.setEarlyBird(early.id, true)).plan, 'early_bird');
  assert.equal((await operator.findAccount(early.id)).plan, 'early_bird');
  await assert.rejects(operator.setEarlyBird(late.id, true), {
    code: 'conflict',
    message: `early_bird is for accounts created before the cohort cutoff 2026-01-01T00:00:00Z; ${late.id} was created at 2026-11-28T12:00:00.000Z.`,
  });
  assert.equal((await operator.setEarlyBird(late.id, false)).plan, 'standard');
  await store.close();
});

test('a credit applies once per key; a reused key with another amount or kind is a conflict', async () => {
  const clock = { now: NOV };
  const { operator, store } = await operatorOverSqlite(clock);
  const account = await operator.createAccount({ email: 'pay@example.com' });
  const input = {
    amountMicros: 5_000_000n,
    idempotencyKey: 'inv-1',
    actor: 'cli' as const,
    memo: 'invoice 1',
  };
  const first = await operator.creditTokens(account.id, input);
  assert.equal(first.duplicate, false);
  assert.equal(first.balanceMicros, 5_000_000n);
  assert.equal(first.entry.kind, 'topup');
  assert.equal(first.entry.memo, 'operator topup (cli): invoice 1');
  assert.equal(first.entry.idempotencyKey, 'operator:inv-1');
  const replay = await operator.creditTokens(account.id, input);
  assert.deepEqual(
    [replay.duplicate, replay.entry.id, replay.balanceMicros],
    [true, first.entry.id, 5_000_000n],
  );
  await assert.rejects(operator.creditTokens(account.id, { ...input, amountMicros: 6_000_000n }), {
    code: 'conflict',
    message: 'Idempotency key "inv-1" was already used for a topup of 5 tokens.',
  });
  await assert.rejects(operator.creditTokens(account.id, { ...input, idempotencyKey: 'has space' }), {
    code: 'invalid_request',
    message: 'The idempotency key must be 1 to 200 printable ASCII characters.',
  });
  await assert.rejects(
    operator.creditTokens(account.id, { ...input, idempotencyKey: 'big', amountMicros: 10n ** 18n + 1n }),
    {
      code: 'conflict',
      message: 'The wallet would hold more than 1000000000000 tokens, the most a wallet may hold.',
    },
  );
  await store.close();
});

test('caps are set on live keys that still work; self-service needs the spending-caps package', async () => {
  const clock = { now: NOV };
  const { operator, store } = await operatorOverSqlite(clock);
  const account = await operator.createAccount({ email: 'caps@example.com' });
  await store.insertKey(liveKey(account.id, account.walletId));
  await store.insertKey(
    liveKey(account.id, account.walletId, { id: 'key_2', digest: 'digest-2', revokedAt: NOV - 1 }),
  );
  await store.insertKey(
    liveKey(account.id, account.walletId, { id: 'key_3', digest: 'digest-3', kind: 'sandbox' }),
  );
  const capped = await operator.setKeyCaps('key_1', { dailyCapMicros: 3_000_000n });
  assert.deepEqual([capped.dailyCapMicros, capped.monthlyCapMicros], [3_000_000n, null]);
  const monthly = await operator.setKeyCaps('key_1', { monthlyCapMicros: 9_000_000n });
  assert.deepEqual([monthly.dailyCapMicros, monthly.monthlyCapMicros], [3_000_000n, 9_000_000n]);
  await assert.rejects(operator.setKeyCaps('key_9', {}), { code: 'not_found', message: 'No key key_9.' });
  await assert.rejects(operator.setKeyCaps('key_2', {}), {
    code: 'conflict',
    message: 'Spending caps apply to keys that are live; key_2 is revoked.',
  });
  await assert.rejects(operator.setKeyCaps('key_3', {}), {
    code: 'conflict',
    message: 'Spending caps apply to wallet-backed live keys; key_3 is a sandbox key.',
  });
  await assert.rejects(operator.setOwnKeyCaps(account, 'key_1', { dailyCapMicros: null }), {
    code: 'forbidden',
    message:
      'Spending caps per key come with the Partner package; an operator can assign it or set caps for you.',
  });
  const partner = (await operator.assignPackage(account.id, 'partner')).account;
  assert.equal(
    (await operator.setOwnKeyCaps(partner, 'key_1', { dailyCapMicros: null })).dailyCapMicros,
    null,
  );
  const other = await operator.createAccount({ email: 'other@example.com' });
  await assert.rejects(operator.setOwnKeyCaps(other, 'key_1', {}), {
    code: 'not_found',
    message: 'No key key_1 on this account.',
  });
  await store.close();
});

test('a key is made by the credentials service for the account found', async () => {
  const calls: unknown[] = [];
  const { operator, store } = await operatorOverSqlite(
    { now: NOV },
    {
      createLiveKey: async (account, name, expiresAt) => {
        calls.push([account.email, name, expiresAt]);
        return { record: liveKey(account.id, account.walletId), secret: 'tmd_live_abSECRET' };
      },
    },
  );
  await operator.createAccount({ email: 'keys@example.com' });
  const issued = await operator.createKey('keys@example.com', 'ci', null);
  assert.equal(issued.secret, 'tmd_live_abSECRET');
  assert.deepEqual(calls, [['keys@example.com', 'ci', null]]);
  await store.close();
});

test('importRows on the Operator loads into the catalog dataset', async () => {
  const { operator, store } = await operatorOverSqlite({ now: NOV });
  const loaded = await operator.importRows('macro/rates', [
    { date: '2024-01-02', series: 'A', value: 1, open_interest_all: null },
  ]);
  assert.deepEqual([loaded.rows, loaded.inserted, loaded.kept], [1, 1, 0]);
  await store.close();
});
