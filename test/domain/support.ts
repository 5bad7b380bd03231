/** What the unit tests share: records and callers built by hand, and the real SQLite store in memory. */
import assert from 'node:assert/strict';
import { Catalog } from '../../src/catalog/catalog.ts';
import { loadCatalogFile } from '../../src/catalog/catalog-file.ts';
import type { DatasetDef } from '../../src/catalog/types.ts';
import { loadServiceFile, type ServiceFile } from '../../src/config.ts';
import type { Caller, CredentialKind } from '../../src/domain/caller.ts';
import type { OAuthServer, PendingConsent } from '../../src/domain/connections.ts';
import { isP0, listCostOf, makePricing, utcMonth } from '../../src/domain/pricing.ts';
import type { AccountRecord, KeyRecord, UsageInput, WalletRecord } from '../../src/store/port.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

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

/** The service configuration the server starts with (config/service.json), parsed afresh. */
export function serviceConfig(): ServiceFile {
  return loadServiceFile('config/service.json');
}

/** Asserts an AppError of this code (and status), as `assert.rejects` takes it. */
export function appError(code: string, status?: number) {
  return (error: unknown): boolean => {
    const e = error as { code?: string; status?: number; message?: string };
    assert.equal(e.code, code, e.message);
    if (status !== undefined) assert.equal(e.status, status);
    return true;
  };
}

/**
 * An OAuth server that knows the access tokens it is given: the domain's port, without the
 * authorization flow (the real adapter is tested in the OAuth scenario suites).
 */
export function knownTokens(
  tokens: Record<string, string>,
  pending: Record<string, PendingConsent> = {},
): OAuthServer & { approved: string[]; denied: string[] } {
  const approved: string[] = [];
  const denied: string[] = [];
  return {
    resource: 'https://tmd.example/mcp/jsonrpc',
    resourceMetadataUrl: 'https://tmd.example/.well-known/oauth-protected-resource/mcp/jsonrpc',
    handle: () => assert.fail('no OAuth endpoint is served in unit tests'),
    resourceMetadata: () => ({}),
    verifyAccessToken: async (token) => (tokens[token] ? { keyId: tokens[token] } : null),
    pending: async (uid) => pending[uid] ?? null,
    approve: async (consent, keyId) => {
      approved.push(`${consent.uid}:${keyId}`);
      return `https://client.example/callback?code=${consent.uid}`;
    },
    deny: async (uid) => {
      denied.push(uid);
      return `https://client.example/callback?error=access_denied`;
    },
    approved,
    denied,
  };
}

/** A dataset of stock prices, with an alias in a domain that is not free. */
export const stockPrices: DatasetDef = {
  key: 'equities/prices',
  aliases: ['research/prices'],
  title: 'Stock prices',
  description: 'Daily closes.',
  source: 'Example Exchange',
  frequency: 'daily',
  time_field: 'date',
  entity_fields: ['symbol'],
  fields: [
    { name: 'date', type: 'date', description: 'Trading day.' },
    { name: 'symbol', type: 'string', description: 'Ticker.', sample: { values: ['BRK, A', 'MSFT'] } },
    { name: 'close', type: 'number', unit: 'USD', description: 'Close.' },
  ],
  sample: { from: '2026-01-01', step: 'day', periods: 5, entities: 2 },
};

/** A catalog of `stockPrices` priced as the service prices it. */
export function tinyCatalog(config: ServiceFile = serviceConfig()): Catalog {
  const pricing = makePricing(config);
  return new Catalog([stockPrices], {
    listCostOf: (key) => listCostOf(pricing, key),
    isP0: (key) => isP0(pricing, key),
  });
}

/** The service's own catalog (config/catalog.json), priced as the service prices it. */
export function serviceCatalog(config: ServiceFile = serviceConfig()): Catalog {
  const pricing = makePricing(config);
  return new Catalog(loadCatalogFile('config/catalog.json').datasets, {
    listCostOf: (key) => listCostOf(pricing, key),
    isP0: (key) => isP0(pricing, key),
  });
}
