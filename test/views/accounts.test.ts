import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AccountSnapshot } from '../../src/domain/accounts.ts';
import { makePricing } from '../../src/domain/pricing.ts';
import {
  accountOut,
  operatorAccountOut,
  presentAccount,
  presentAccountView,
} from '../../src/views/accounts.ts';
import { account, caller, keyRecord, serviceConfig, T0, wallet } from '../domain/support.ts';

const config = serviceConfig();
const [recruit, analyst] = makePricing(config).tiers;
const DAY = 86_400_000;

function snapshot(fields: Partial<AccountSnapshot> = {}): AccountSnapshot {
  const who = caller('live', {
    account: account({ lowBalanceMicros: 25_500_000n, publicTestStartedAt: T0 }),
    expiresAt: T0 + DAY,
  });
  return {
    caller: who,
    wallet: wallet({ balanceMicros: 395_300_000n }),
    burnedMicros: 104_700_000n,
    tier: recruit ?? assert.fail('no tier'),
    next: { tier: analyst ?? assert.fail('no tier'), tokensNeededMicros: 395_300_000n },
    limits: { per_minute: 60, per_day: null, concurrent: 20, ip_fence: false },
    entitlements: { bulk_export: false, analysis_assistant: false, mcp_included: true, spending_caps: false },
    publicTestWindowEnd: T0 + 90 * DAY,
    ...fields,
  };
}

test('an account holder sees credential, account, wallet, burn and tiers as exact values', () => {
  const view = presentAccount(snapshot());
  assert.deepEqual(view, {
    credential: { kind: 'live', key_id: 'key_1', expires_at: '2026-11-22T15:00:00.000Z' },
    account: {
      id: 'acc_1',
      email: 'a@example.com',
      plan: 'standard',
      package: null,
      entitlements: {
        bulk_export: false,
        analysis_assistant: false,
        mcp_included: true,
        spending_caps: false,
      },
      created_at: '2026-11-21T15:00:00.000Z',
      low_balance: '25.5',
      public_test_window_ends_at: '2027-02-19T15:00:00.000Z',
    },
    wallet: { id: 'wal_1', balance: '395.3' },
    burned_this_month: '104.7',
    tier: recruit,
    next_tier: { ...analyst, tokens_needed: '395.3' },
    limits: { per_minute: 60, per_day: null, concurrent: 20, ip_fence: false },
  });
  assert.deepEqual(accountOut.parse(view), view);
});

test('a sandbox key has no account; the top tier has no next tier', () => {
  const view = presentAccount(
    snapshot({ caller: caller('sandbox'), entitlements: null, next: null, publicTestWindowEnd: null }),
  );
  assert.equal(view.account, null);
  assert.equal(view.next_tier, null);
  assert.deepEqual(view.credential, { kind: 'sandbox', key_id: 'key_1', expires_at: null });
  assert.deepEqual(accountOut.parse(view), view);
});

test('operators see the account with its package entitlements, balance and keys', () => {
  const view = presentAccountView(
    config,
    {
      account: account({ packageId: 'partner', plan: 'early_bird' }),
      package: null,
      balanceMicros: 500_000_000_001n,
      keys: [keyRecord({ kind: 'public_test', expiresAt: T0 - 1 })],
      earlyBirdEligible: true,
    },
    T0,
  );
  assert.deepEqual(view, {
    id: 'acc_1',
    email: 'a@example.com',
    plan: 'early_bird',
    early_bird_eligible: true,
    package: 'partner',
    entitlements: { bulk_export: true, analysis_assistant: false, mcp_included: true, spending_caps: true },
    created_at: '2026-11-21T15:00:00.000Z',
    public_test_started_at: null,
    wallet: { id: 'wal_1', balance: '500000.000001' },
    keys: [
      {
        id: 'key_1',
        kind: 'public_test',
        prefix: 'tmd_live_abcd…',
        name: null,
        created_at: '2026-11-21T15:00:00.000Z',
        expires_at: '2026-11-21T14:59:59.999Z',
        revoked_at: null,
        status: 'expired',
        spending_caps: { daily: null, monthly: null },
      },
    ],
  });
  assert.deepEqual(operatorAccountOut.parse(view), view);
});
