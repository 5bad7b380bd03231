/** Turns domain records into response bodies: ISO times, token amounts as exact decimal strings. */
import type { ServiceFile } from '../config.ts';
import { formatMicros } from '../domain/money.ts';
import type { AccountView } from '../domain/operator.ts';
import { entitlementsOf } from '../domain/packages.ts';
import type { KeyRecord, LedgerEntry } from '../store/port.ts';

export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function presentKey(key: KeyRecord, now: number) {
  const status =
    key.revokedAt !== null
      ? 'revoked'
      : key.expiresAt !== null && key.expiresAt <= now
        ? 'expired'
        : 'active';
  return {
    id: key.id,
    kind: key.kind,
    prefix: key.displayPrefix,
    name: key.name,
    created_at: iso(key.createdAt) as string,
    expires_at: iso(key.expiresAt),
    revoked_at: iso(key.revokedAt),
    status: status as 'active' | 'expired' | 'revoked',
    spending_caps: {
      daily: key.dailyCapMicros === null ? null : formatMicros(key.dailyCapMicros),
      monthly: key.monthlyCapMicros === null ? null : formatMicros(key.monthlyCapMicros),
    },
  };
}

/** An account as operators see it (admin API and `tmd`). */
export function presentAccountView(config: ServiceFile, view: AccountView, now: number) {
  return {
    id: view.account.id,
    email: view.account.email,
    plan: view.account.plan,
    early_bird_eligible: view.earlyBirdEligible,
    package: view.account.packageId,
    entitlements: entitlementsOf(config, view.account),
    created_at: iso(view.account.createdAt) as string,
    public_test_started_at: iso(view.account.publicTestStartedAt),
    wallet: { id: view.account.walletId, balance: formatMicros(view.balanceMicros) },
    keys: view.keys.map((k) => presentKey(k, now)),
  };
}

/** A ledger entry; an operator's idempotency key is shown as the operator gave it. */
export function presentEntry(entry: LedgerEntry) {
  return {
    id: entry.id,
    kind: entry.kind,
    amount: formatMicros(entry.amountMicros),
    balance_after: formatMicros(entry.balanceAfterMicros),
    created_at: iso(entry.createdAt) as string,
    idempotency_key: entry.idempotencyKey?.replace(/^operator:/, '') ?? null,
    memo: entry.memo,
    request_id: entry.requestId,
  };
}
