/**
 * Row mapping shared by the SQL adapters: database rows to port records. Drivers return bigint columns
 * as bigint (node:sqlite) or decimal strings (pg); both are parsed exactly, never through a float.
 */
import { importIdsOf } from './import-port.ts';
import type { OAuthConnection, OAuthRecord } from './oauth-port.ts';
import type { PasswordReset } from './password-reset-port.ts';
import type {
  AccountRecord,
  CsvJoin,
  EntryKind,
  KeyKind,
  KeyRecord,
  LedgerEntry,
  PageQuery,
  Plan,
  RowQuery,
  RowsPage,
  StoredPage,
  UsageEvent,
  UsageOutcome,
  UsageSum,
  WalletRecord,
} from './port.ts';

export type DbRow = Record<string, unknown>;

// pg returns bigint columns as decimal strings: parsed here, exactly, never through a float.
export const num = (v: unknown): number => Number(v);
export const big = (v: unknown): bigint => BigInt(v as bigint | number | string);
export const str = (v: unknown): string => String(v);
export const optNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
export const optBig = (v: unknown): bigint | null => (v === null || v === undefined ? null : big(v));
export const optStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function walletFrom(r: DbRow, p = ''): WalletRecord {
  return {
    id: str(r[`${p}id`]),
    accountId: optStr(r[`${p}account_id`]),
    balanceMicros: big(r[`${p}balance_micros`]),
    burnMonth: str(r[`${p}burn_month`]),
    burnMonthMicros: big(r[`${p}burn_month_micros`]),
  };
}

export function accountFrom(r: DbRow, p = ''): AccountRecord {
  return {
    id: str(r[`${p}id`]),
    email: optStr(r[`${p}email`]),
    passwordHash: optStr(r[`${p}password_hash`]),
    plan: str(r[`${p}plan`]) as Plan,
    packageId: optStr(r[`${p}package_id`]),
    walletId: str(r[`${p}wallet_id`]),
    createdAt: num(r[`${p}created_at`]),
    publicTestStartedAt: optNum(r[`${p}public_test_started_at`]),
    lowBalanceMicros: optBig(r[`${p}low_balance_micros`]),
  };
}

export function keyFrom(r: DbRow, p = ''): KeyRecord {
  return {
    id: str(r[`${p}id`]),
    kind: str(r[`${p}kind`]) as KeyKind,
    digest: str(r[`${p}digest`]),
    displayPrefix: str(r[`${p}display_prefix`]),
    name: optStr(r[`${p}name`]),
    accountId: optStr(r[`${p}account_id`]),
    walletId: str(r[`${p}wallet_id`]),
    createdAt: num(r[`${p}created_at`]),
    expiresAt: optNum(r[`${p}expires_at`]),
    revokedAt: optNum(r[`${p}revoked_at`]),
    dailyCapMicros: optBig(r[`${p}daily_cap_micros`]),
    monthlyCapMicros: optBig(r[`${p}monthly_cap_micros`]),
  };
}

export function entryFrom(r: DbRow): LedgerEntry {
  return {
    id: str(r.id),
    walletId: str(r.wallet_id),
    kind: str(r.kind) as EntryKind,
    amountMicros: big(r.amount_micros),
    balanceAfterMicros: big(r.balance_after_micros),
    createdAt: num(r.created_at),
    requestId: optStr(r.request_id),
    idempotencyKey: optStr(r.idempotency_key),
    memo: optStr(r.memo),
  };
}

export function usageFrom(r: DbRow): UsageEvent {
  return {
    id: str(r.id),
    requestId: str(r.request_id),
    keyId: optStr(r.key_id),
    accountId: optStr(r.account_id),
    walletId: str(r.wallet_id),
    dataset: str(r.dataset),
    channel: str(r.channel) as UsageEvent['channel'],
    listCostMicros: big(r.list_cost_micros),
    costMicros: big(r.cost_micros),
    burnedMicros: big(r.burned_micros),
    outcome: str(r.outcome) as UsageOutcome,
    rows: num(r.rows),
    at: num(r.at),
  };
}

export function usageSumFrom(r: DbRow): UsageSum {
  return {
    bucketAt: num(r.bucket),
    dataset: str(r.dataset),
    channel: str(r.channel) as UsageSum['channel'],
    served: num(r.served),
    refunded: num(r.refunded),
    burnedMicros: big(r.burned),
    newestId: str(r.newest),
  };
}

export const keyColumns =
  'k.id AS k_id, k.kind AS k_kind, k.digest AS k_digest, k.display_prefix AS k_display_prefix, k.name AS k_name, ' +
  'k.account_id AS k_account_id, k.wallet_id AS k_wallet_id, k.created_at AS k_created_at, k.expires_at AS k_expires_at, ' +
  'k.revoked_at AS k_revoked_at, k.daily_cap_micros AS k_daily_cap_micros, k.monthly_cap_micros AS k_monthly_cap_micros';
export const walletColumns =
  'w.id AS w_id, w.account_id AS w_account_id, w.balance_micros AS w_balance_micros, w.burn_month AS w_burn_month, ' +
  'w.burn_month_micros AS w_burn_month_micros';
export const accountColumns =
  'a.id AS a_id, a.email AS a_email, a.password_hash AS a_password_hash, a.plan AS a_plan, a.package_id AS a_package_id, ' +
  'a.wallet_id AS a_wallet_id, a.created_at AS a_created_at, a.public_test_started_at AS a_public_test_started_at, ' +
  'a.low_balance_micros AS a_low_balance_micros';

/** Stored CSV lines joined for a text page (`PageQuery.csvJoin`), with no final line end. */
export function joinCsvLines(lines: readonly string[], join: CsvJoin): string {
  return join === 'json' ? JSON.stringify(lines.join('\n')).slice(1, -1) : lines.join('\r\n');
}

/** A row limit as the stores take it: a whole number of rows, or a RangeError before anything is read. */
export function rowLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`not a row limit: ${limit}`);
  return limit;
}

/**
 * A text page built from a page of rows: PostgreSQL's queryPage, SQLite's for reads that check rows one
 * by one, and the reference the store contract holds SQLite's single-statement page to.
 */
export async function pageOfRows(
  query: PageQuery,
  queryRows: (query: RowQuery) => Promise<RowsPage>,
): Promise<StoredPage> {
  rowLimit(query.limit);
  const { rows, next, examined } = await queryRows(query);
  const page: StoredPage = {
    count: rows.length,
    json: rows.map((r) => r.json).join(','),
    next,
    imports: importIdsOf(rows.map((r) => r.importId)),
    examined,
  };
  if (query.csvColumns === undefined) return page;
  const lines: string[] = [];
  for (const row of rows) {
    if (typeof row.csv !== 'string') {
      page.csv = null;
      return page;
    }
    lines.push(row.csv);
  }
  page.csv = joinCsvLines(lines, query.csvJoin ?? 'crlf');
  return page;
}

export function oauthRecordFrom(r: DbRow): OAuthRecord {
  return {
    id: str(r.id),
    payload: str(r.payload),
    expiresAt: optNum(r.expires_at),
    consumedAt: optNum(r.consumed_at),
  };
}

export function passwordResetFrom(r: DbRow): PasswordReset {
  return {
    digest: str(r.digest),
    accountId: str(r.account_id),
    createdAt: num(r.created_at),
    expiresAt: num(r.expires_at),
    usedAt: optNum(r.used_at),
  };
}

export function oauthConnectionFrom(r: DbRow): OAuthConnection {
  return {
    keyId: str(r.key_id),
    accountId: str(r.account_id),
    clientId: str(r.client_id),
    clientName: str(r.client_name),
    redirectHost: str(r.redirect_host),
    createdAt: num(r.created_at),
  };
}
