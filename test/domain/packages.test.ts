import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  creditMonthly,
  creditMonthlyPackages,
  entitlementsOf,
  exportPackages,
  findPackage,
  MONTHLY_CREDIT_INTERVAL_MS,
  monthlyCreditKey,
  packageOf,
  SPENDING_CAP_PACKAGES,
  scheduleMonthlyCredits,
} from '../../src/domain/packages.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { account, memoryStore, serviceConfig, T0 } from './support.ts';

const config = serviceConfig();
let store: SqliteStore;

before(async () => {
  store = await memoryStore();
});
after(() => store.close());

async function accountWith(id: string, packageId: string | null) {
  await store.createAccount(
    {
      id,
      email: `${id}@example.com`,
      passwordHash: null,
      walletId: `wal_${id}`,
      createdAt: T0,
      publicTestStartedAt: null,
    },
    '2026-11',
  );
  if (packageId) await store.updateAccount(id, { packageId });
  return (await store.getAccount(id)) ?? assert.fail('no account');
}

test('packages are found by id; an id no longer configured is no package', () => {
  assert.equal(findPackage(config, 'pro')?.name, 'Pro');
  assert.equal(findPackage(config, 'gold'), null);
  assert.equal(packageOf(config, account({ packageId: 'partner' }))?.monthly_credits, 500000);
  assert.equal(packageOf(config, account({ packageId: 'gone' })), null);
  assert.equal(packageOf(config, null), null);
  assert.deepEqual(
    exportPackages(config).map((s) => s.id),
    ['pro', 'workbench', 'partner'],
  );
  assert.deepEqual([...SPENDING_CAP_PACKAGES], ['partner']);
});

test('entitlements follow the package; no package has only MCP', () => {
  assert.deepEqual(entitlementsOf(config, account()), {
    bulk_export: false,
    analysis_assistant: false,
    mcp_included: true,
    spending_caps: false,
  });
  assert.deepEqual(entitlementsOf(config, account({ packageId: 'workbench' })), {
    bulk_export: true,
    analysis_assistant: true,
    mcp_included: true,
    spending_caps: false,
  });
  assert.deepEqual(entitlementsOf(config, account({ packageId: 'partner' })), {
    bulk_export: true,
    analysis_assistant: false,
    mcp_included: true,
    spending_caps: true,
  });
});

test('a package is credited its monthly credits once per UTC month', async () => {
  assert.equal(monthlyCreditKey('pro', '2026-11'), 'monthly-credit:pro:2026-11');
  const pro = await accountWith('acc_pro', 'pro');
  const first = await creditMonthly({ store, config }, pro, T0);
  assert.equal(first?.duplicate, false);
  assert.equal(first?.entry.amountMicros, 150_000_000_000n);
  assert.equal(first?.entry.kind, 'monthly_credit');
  const again = await creditMonthly({ store, config }, pro, T0 + 1000);
  assert.equal(again?.duplicate, true);
  assert.equal(again?.entry.id, first?.entry.id);
  assert.equal((await store.getWallet(pro.walletId))?.balanceMicros, 150_000_000_000n);
  assert.equal(await creditMonthly({ store, config }, await accountWith('acc_none', null), T0), null);
});

test('the job credits every package account for the month and counts those already credited', async () => {
  const starter = await accountWith('acc_starter', 'starter');
  const run = await creditMonthlyPackages({ store, config }, T0);
  assert.equal(run.month, '2026-11');
  assert.equal(run.alreadyCredited, 1, 'acc_pro was credited above');
  assert.deepEqual(
    run.credited.map(({ accountId, packageId, tokens }) => ({ accountId, packageId, tokens })),
    [{ accountId: starter.id, packageId: 'starter', tokens: '25000' }],
  );
  const december = await creditMonthlyPackages({ store, config }, Date.parse('2026-12-01T00:00:00Z'));
  assert.equal(december.month, '2026-12');
  assert.equal(december.credited.length, 2);
  assert.equal(december.alreadyCredited, 0);
});

test('the schedule runs at once, then every interval, until stopped', async () => {
  assert.equal(MONTHLY_CREDIT_INTERVAL_MS, 3_600_000);
  const runs: string[] = [];
  let now = Date.parse('2027-01-15T00:00:00Z');
  const stop = scheduleMonthlyCredits(
    { store, config, now: () => now },
    (run) => runs.push(`${run.month}:${run.credited.length}`),
    (error) => assert.fail(String(error)),
    20,
  );
  await new Promise((resolve) => setTimeout(resolve, 70));
  stop();
  const seen = runs.length;
  assert.ok(seen >= 2, `ran ${seen} times`);
  assert.equal(runs[0], '2027-01:2');
  assert.ok(
    runs.slice(1).every((r) => r === '2027-01:0'),
    runs.join(' '),
  );
  now += 1;
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(runs.length, seen, 'no run after stop');
});
