/** `tmd account`, `tmd package` and `tmd early-bird` over a stand-in operator and the shipped config. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accountCommand, earlyBirdCommand, packageCommand } from '../../../src/cli/commands/accounts.ts';
import { loadServiceFile } from '../../../src/config.ts';
import type { AccountRecord, LedgerEntry } from '../../../src/store/port.ts';
import { cliContext } from '../../helpers/cli-context.ts';

const config = loadServiceFile('config/service.json');

const account: AccountRecord = {
  id: 'acc_1',
  email: 'ops@example.com',
  passwordHash: null,
  plan: 'standard',
  packageId: null,
  walletId: 'wal_1',
  createdAt: Date.parse('2026-01-02T03:04:05Z'),
  publicTestStartedAt: null,
};

const printedAccount = {
  id: 'acc_1',
  email: 'ops@example.com',
  plan: 'standard',
  early_bird_eligible: false,
  package: null,
  entitlements: { bulk_export: false, analysis_assistant: false, mcp_included: true, spending_caps: false },
  created_at: '2026-01-02T03:04:05.000Z',
  public_test_started_at: null,
  wallet: { id: 'wal_1', balance: '2' },
  keys: [],
};

/** An operator that records each call and answers with `account` (as updated by the call). */
function operator(calls: unknown[], changes: Partial<AccountRecord> = {}) {
  const updated = { ...account, ...changes };
  return {
    view: async (a: AccountRecord) => ({
      account: a,
      package: null,
      balanceMicros: 2_000_000n,
      keys: [],
      earlyBirdEligible: false,
    }),
    createAccount: async (input: unknown) => {
      calls.push(['createAccount', input]);
      return updated;
    },
    findAccount: async (ref: string) => {
      calls.push(['findAccount', ref]);
      return updated;
    },
    setEarlyBird: async (ref: string, on: boolean) => {
      calls.push(['setEarlyBird', ref, on]);
      return updated;
    },
    assignPackage: async (ref: string, packageId: string | null) => {
      calls.push(['assignPackage', ref, packageId]);
      return { account: updated, monthlyCredit: packageId === null ? null : { entry, duplicate: true } };
    },
  };
}

const entry: LedgerEntry = {
  id: 'ent_9',
  walletId: 'wal_1',
  kind: 'grant',
  amountMicros: 50_000_000_000n,
  balanceAfterMicros: 50_002_000_000n,
  createdAt: Date.parse('2026-11-01T00:00:00Z'),
  requestId: null,
  idempotencyKey: 'monthly:acc_1:2026-11',
  memo: 'pro monthly credits 2026-11',
};

test('account create reads the password from standard input without its newline', async () => {
  const calls: unknown[] = [];
  const { ctx, json } = cliContext({ config, operator: operator(calls) });
  ctx.io.readStdin = async () => 'correct horse battery\n';
  assert.equal(await accountCommand(ctx, 'create', ['ops@example.com', '--password-stdin']), true);
  assert.deepEqual(calls, [
    ['createAccount', { email: 'ops@example.com', password: 'correct horse battery' }],
  ]);
  assert.deepEqual(json(), printedAccount);
});

test('account create refuses a bad email, a short password, and --password-stdin with no input', async () => {
  const { ctx } = cliContext({ config, operator: operator([]) });
  await assert.rejects(accountCommand(ctx, 'create', ['not-an-email']), {
    name: 'UsageError',
    message: /^account: /,
  });
  await assert.rejects(accountCommand(ctx, 'create', ['ops@example.com', '--password-stdin']), {
    message: '--password-stdin: no standard input',
  });
  ctx.io.readStdin = async () => 'short\n';
  await assert.rejects(accountCommand(ctx, 'create', ['ops@example.com', '--password-stdin']), {
    message: 'account: must be at least 10 characters',
  });
});

test('account show finds the account by the reference given', async () => {
  const calls: unknown[] = [];
  const { ctx, json } = cliContext({ config, operator: operator(calls) });
  await accountCommand(ctx, 'show', ['ops@example.com']);
  assert.deepEqual(calls, [['findAccount', 'ops@example.com']]);
  assert.deepEqual(json(), printedAccount);
  assert.equal(await accountCommand(ctx, 'delete', ['acc_1']), false);
});

test('package assign prints the account and the month credit; clear prints a null credit', async () => {
  const calls: unknown[] = [];
  const { ctx, json } = cliContext({ config, operator: operator(calls, { packageId: 'pro' }) });
  await packageCommand(ctx, 'assign', ['acc_1', 'pro']);
  const printed = json() as { account: { package: string }; monthly_credit: unknown };
  assert.equal(printed.account.package, 'pro');
  assert.deepEqual(printed.monthly_credit, {
    id: 'ent_9',
    kind: 'grant',
    amount: '50000',
    balance_after: '50002',
    created_at: '2026-11-01T00:00:00.000Z',
    idempotency_key: 'monthly:acc_1:2026-11',
    memo: 'pro monthly credits 2026-11',
    request_id: null,
    duplicate: true,
  });
  const cleared = cliContext({ config, operator: operator(calls) });
  await packageCommand(cleared.ctx, 'clear', ['acc_1']);
  assert.equal((cleared.json() as { monthly_credit: unknown }).monthly_credit, null);
  assert.deepEqual(calls, [
    ['assignPackage', 'acc_1', 'pro'],
    ['assignPackage', 'acc_1', null],
  ]);
  await assert.rejects(packageCommand(ctx, 'assign', ['acc_1']), { message: 'missing <package>' });
  assert.equal(await packageCommand(ctx, 'show', ['acc_1']), false);
});

test('early-bird set and clear turn the plan on and off', async () => {
  const calls: unknown[] = [];
  const { ctx } = cliContext({ config, operator: operator(calls, { plan: 'early_bird' }) });
  await earlyBirdCommand(ctx, 'set', ['acc_1']);
  await earlyBirdCommand(ctx, 'clear', ['acc_1']);
  assert.deepEqual(calls, [
    ['setEarlyBird', 'acc_1', true],
    ['setEarlyBird', 'acc_1', false],
  ]);
  assert.equal(await earlyBirdCommand(ctx, 'toggle', ['acc_1']), false);
});
