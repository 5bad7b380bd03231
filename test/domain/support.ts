/**
 * What the domain's unit tests share: callers built by hand, and the real services wired over a
 * temporary SQLite file with a clock the test moves (the composition root, without the HTTP app).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv, type ServiceFile } from '../../src/config.ts';
import { buildDeps, closeDeps, type Deps } from '../../src/deps.ts';
import type { Caller, CredentialKind } from '../../src/domain/caller.ts';
import { newId } from '../../src/domain/ids.ts';
import { tokensToMicros } from '../../src/domain/money.ts';
import { utcMonth } from '../../src/domain/pricing.ts';
import type { AccountRecord, KeyRecord, UsageInput, WalletRecord } from '../../src/store/port.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { baseConfig, TestClock } from '../helpers/server.ts';

export const T0 = Date.parse('2026-11-21T15:00:00Z');

export function account(fields: Partial<AccountRecord> = {}): AccountRecord {
  return {
    id: 'acc_1',
    email: 'a@example.com',
    passwordHash: null,
    plan: 'standard',
    packageId: null,
    walletId: 'wal_1',
    createdAt: T0,
    publicTestStartedAt: null,
    lowBalanceMicros: null,
    ...fields,
  } as AccountRecord;
}

export function wallet(fields: Partial<WalletRecord> = {}): WalletRecord {
  return {
    id: 'wal_1',
    accountId: 'acc_1',
    balanceMicros: 0n,
    burnMonth: utcMonth(T0),
    burnMonthMicros: 0n,
    ...fields,
  };
}

export function keyRecord(fields: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id: 'key_1',
    kind: 'live',
    digest: 'd'.repeat(64),
    displayPrefix: 'tmd_live_abcd…',
    name: null,
    accountId: 'acc_1',
    walletId: 'wal_1',
    createdAt: T0,
    expiresAt: null,
    revokedAt: null,
    dailyCapMicros: null,
    monthlyCapMicros: null,
    ...fields,
  };
}

/** A caller of this kind; a session has no key, a sandbox key no account. */
export function caller(kind: CredentialKind, fields: Partial<Caller> = {}): Caller {
  return {
    kind,
    key: kind === 'session' ? null : keyRecord({ kind }),
    account: kind === 'sandbox' ? null : account(),
    wallet: wallet({ accountId: kind === 'sandbox' ? null : 'acc_1' }),
    channel: kind === 'session' ? 'terminal' : 'rest',
    expiresAt: null,
    ...fields,
  };
}

export interface TestDeps {
  deps: Deps;
  clock: TestClock;
  config: ServiceFile;
  close(): Promise<void>;
}

/** The real services over a fresh SQLite file. */
export async function startDeps(
  options: { config?: (config: ServiceFile) => void; env?: Record<string, string> } = {},
): Promise<TestDeps> {
  const dir = mkdtempSync(join(tmpdir(), 'tmd-unit-'));
  const clock = new TestClock(T0);
  const config = baseConfig();
  options.config?.(config);
  const env = parseEnv({
    DATABASE_URL: join(dir, 'tmd.sqlite'),
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    PORT: '0',
    JWT_SECRET: 'unit-secret-unit-secret-unit-secret-0123',
    ADMIN_TOKEN: 'admin-token-for-tests-0123456789',
    ...options.env,
  });
  const deps = await buildDeps({ env, config, now: clock.now });
  return {
    deps,
    clock,
    config,
    async close() {
      await closeDeps(deps);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A login account made as an operator would (no signup grant), holding exactly `tokens`. */
export async function fundedAccount(
  t: TestDeps,
  tokens: number,
  fields: { email?: string; passwordHash?: string | null } = {},
): Promise<AccountRecord> {
  const now = t.clock.now();
  const made = await t.deps.store.createAccount(
    {
      id: newId('acc'),
      email: fields.email ?? `${newId('acc')}@example.com`,
      passwordHash: fields.passwordHash ?? null,
      walletId: newId('wal'),
      createdAt: now,
      publicTestStartedAt: null,
    },
    utcMonth(now),
  );
  if (tokens > 0) {
    await t.deps.store.credit({
      walletId: made.walletId,
      kind: 'topup',
      amountMicros: tokensToMicros(tokens),
      at: now,
      idempotencyKey: `setup-${made.id}`,
    });
  }
  return made;
}

/** The real SQLite store in memory, migrated. */
export async function memoryStore(): Promise<SqliteStore> {
  const store = new SqliteStore(':memory:');
  await store.migrate();
  return store;
}

let requestCounter = 0;
/** A served read's usage event, charged unless `fields` says otherwise. */
export function usage(fields: Partial<UsageInput> & Pick<UsageInput, 'walletId' | 'at'>): UsageInput {
  return {
    requestId: `req_unit_${++requestCounter}`,
    keyId: null,
    accountId: null,
    dataset: 'equities/stock-prices',
    channel: 'rest',
    listCostMicros: 2_000_000n,
    costMicros: 2_000_000n,
    burnedMicros: 2_000_000n,
    outcome: 'charged',
    rows: 1,
    ...fields,
  };
}
