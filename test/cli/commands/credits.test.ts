/** `tmd credit` and `tmd monthly-credit` over a stand-in operator. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { creditCommand, monthlyCreditCommand } from '../../../src/cli/commands/credits.ts';
import type { LedgerEntry } from '../../../src/store/port.ts';
import { cliContext } from '../../helpers/cli-context.ts';

const entry: LedgerEntry = {
  id: 'ent_1',
  walletId: 'wal_1',
  kind: 'grant',
  amountMicros: 1_500_000n,
  balanceAfterMicros: 11_500_000n,
  createdAt: Date.parse('2026-11-28T12:00:00Z'),
  requestId: null,
  idempotencyKey: 'operator:k1',
  memo: 'operator grant (cli): welcome',
};

test('credit: the amount in micros, the kind and memo reach the operator; the balance is printed', async () => {
  const calls: unknown[] = [];
  const { ctx, json } = cliContext({
    operator: {
      creditTokens: async (...args: unknown[]) => {
        calls.push(args);
        return { entry, duplicate: false, balanceMicros: 11_500_000n };
      },
    },
  });
  assert.equal(
    await creditCommand(ctx, 'acc_1', [
      '1.5',
      '--idempotency-key',
      'k1',
      '--kind',
      'grant',
      '--memo',
      'welcome',
    ]),
    true,
  );
  assert.deepEqual(calls, [
    [
      'acc_1',
      { amountMicros: 1_500_000n, idempotencyKey: 'k1', kind: 'grant', memo: 'welcome', actor: 'cli' },
    ],
  ]);
  assert.deepEqual(json(), {
    entry: {
      id: 'ent_1',
      kind: 'grant',
      amount: '1.5',
      balance_after: '11.5',
      created_at: '2026-11-28T12:00:00.000Z',
      idempotency_key: 'k1',
      memo: 'operator grant (cli): welcome',
      request_id: null,
    },
    balance: '11.5',
    replayed: false,
  });
});

test('credit refuses, before any credit, a missing key, an unknown kind or a bad amount', async () => {
  const { ctx } = cliContext({ operator: {} });
  await assert.rejects(creditCommand(ctx, 'acc_1', ['5']), {
    name: 'UsageError',
    message: '--idempotency-key is required: a credit is applied once per key',
  });
  await assert.rejects(creditCommand(ctx, 'acc_1', ['5', '--idempotency-key', 'k', '--kind', 'gift']), {
    message: '--kind must be one of topup, grant, refund, adjustment',
  });
  await assert.rejects(creditCommand(ctx, 'acc_1', ['0', '--idempotency-key', 'k']), {
    message: '<tokens>: must be more than 0',
  });
  await assert.rejects(creditCommand(ctx, undefined, []), { message: 'missing <account>' });
});

test('monthly-credit prints the run', async () => {
  const { ctx, json } = cliContext({
    operator: {
      runMonthlyCredits: async () => ({ month: '2026-11', credited: [], alreadyCredited: 3 }),
    },
  });
  assert.equal(await monthlyCreditCommand(ctx), true);
  assert.deepEqual(json(), { month: '2026-11', credited: [], already_credited: 3 });
});
