/**
 * The store's two ports: the Ledger (money and who may spend it) and Datasets (what is sold). Small and
 * async so that the SQLite adapter and a PostgreSQL adapter can both implement them; every method that
 * changes money is atomic on its own. Each service is handed only the port it uses.
 */
import type { Row, RowQuery } from '../catalog/types.ts';
import type { AnalysisStore } from './analysis-port.ts';
import type { BillingStore } from './billing-port.ts';
import type { CollectionStore } from './collection-port.ts';
import type { IdempotencyStore } from './idempotency-port.ts';
import type { ImportStore, NewImportRun } from './import-port.ts';
import type { OAuthStore } from './oauth-port.ts';
import type { PasswordResetStore } from './password-reset-port.ts';

export type { RowQuery } from '../catalog/types.ts';
export type * from './analysis-port.ts';
export type * from './billing-port.ts';
export type * from './collection-port.ts';
export type * from './idempotency-port.ts';
export type * from './import-port.ts';

/** The kinds of stored keys (the keys table's CHECK constraint names the same). */
export const keyKinds = ['sandbox', 'public_test', 'live'] as const;
export type KeyKind = (typeof keyKinds)[number];

/** The face a read came through, recorded on its usage event. */
export type Channel = 'rest' | 'mcp' | 'terminal';

/** purchase: tokens bought (Stripe Checkout); purchase_refund: tokens a refund of a purchase took back. */
export const entryKinds = [
  'grant',
  'topup',
  'monthly_credit',
  'burn',
  'refund',
  'adjustment',
  'purchase',
  'purchase_refund',
] as const;
export type EntryKind = (typeof entryKinds)[number];

export type Plan = 'standard' | 'early_bird';
/** `external`: rows read from the operator's own table (config `external_datasets`). */
export type RowSource = 'sample' | 'import' | 'external';

export interface AccountRecord {
  id: string;
  email: string | null;
  passwordHash: string | null;
  plan: Plan;
  packageId: string | null;
  walletId: string;
  createdAt: number;
  /** Start of the account's public-test window (ms), null if it never registered for it. */
  publicTestStartedAt: number | null;
  /** A debit that takes the balance from at or above this to below it is told (low-balance notice). */
  lowBalanceMicros?: bigint | null;
}

export interface WalletRecord {
  id: string;
  accountId: string | null;
  balanceMicros: bigint;
  /** UTC month ("YYYY-MM") that burnMonthMicros counts; a debit in a later month restarts it. */
  burnMonth: string;
  burnMonthMicros: bigint;
}

export interface KeyRecord {
  id: string;
  kind: KeyKind;
  digest: string;
  displayPrefix: string;
  name: string | null;
  accountId: string | null;
  walletId: string;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  dailyCapMicros: bigint | null;
  monthlyCapMicros: bigint | null;
}

/** What authentication needs in one lookup: the key, its wallet and its account. */
export interface KeyContext {
  key: KeyRecord;
  wallet: WalletRecord;
  account: AccountRecord | null;
}

export interface SessionRecord {
  id: string;
  accountId: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
}

export interface LedgerEntry {
  id: string;
  walletId: string;
  kind: EntryKind;
  amountMicros: bigint;
  balanceAfterMicros: bigint;
  createdAt: number;
  requestId: string | null;
  idempotencyKey: string | null;
  memo: string | null;
}

export interface LedgerAudit {
  wallets: number;
  entries: number;
  mismatches: { walletId: string; balanceMicros: bigint; entriesMicros: bigint }[];
}

/** `refunded`: a burn given back (its figures negated), written with the refund's credit. */
export type UsageOutcome = 'charged' | 'notional' | 'grandfathered' | 'refunded';

export interface UsageInput {
  requestId: string;
  keyId: string | null;
  accountId: string | null;
  walletId: string;
  dataset: string;
  channel: Channel;
  listCostMicros: bigint;
  /** Cost after discount and surcharge (the X-Token-Cost figure). */
  costMicros: bigint;
  /** Tokens actually burned (0 for notional or grandfathered reads). */
  burnedMicros: bigint;
  outcome: UsageOutcome;
  rows: number;
  at: number;
}

export interface UsageEvent extends UsageInput {
  id: string;
}

/** Usage events summed by the store (`sumUsage`): one time bucket, dataset and channel. */
export interface UsageSum {
  /** `at` rounded down to a multiple of the bucket length. */
  bucketAt: number;
  dataset: string;
  channel: Channel;
  /** Events that are not refunds: reads served (and charged, notional or grandfathered). */
  served: number;
  /** Refund events: reads given back. */
  refunded: number;
  /** The sum of burns, refunds (negative) included. */
  burnedMicros: bigint;
  /** The id of the bucket's newest event. */
  newestId: string;
}

export interface CreditInput {
  walletId: string;
  kind: Exclude<EntryKind, 'burn'>;
  amountMicros: bigint;
  at: number;
  idempotencyKey?: string;
  memo?: string;
  requestId?: string;
  /**
   * A refund of a burn (kind `refund`): the usage event of the reversal is written in the same
   * transaction (`usage`: the burn's figures negated, outcome `refunded`), so a spending cap, which sums
   * the key's usage, no longer counts what was given back; and the wallet's month burn, which the tier
   * follows, is lowered by the amount if it still counts `month` (never below 0).
   */
  reverses?: { month: string; usage: UsageInput };
  /**
   * The most the wallet may hold after this credit: past it the credit throws BalanceLimitReached and
   * changes nothing. Checked in the credit's transaction, after the idempotency key: a repeat of a
   * credit already made is returned as such, whatever the balance now.
   */
  maxBalanceMicros?: bigint;
}

export type CreditResult = { entry: LedgerEntry; duplicate: boolean };

/** A credit refused by `CreditInput.maxBalanceMicros`. */
export class BalanceLimitReached extends Error {
  override name = 'BalanceLimitReached';
}

/**
 * A per-key spending cap checked inside the debit: the key's burns since `sinceMs` (usage events of
 * `usage.keyId`) plus this debit must not exceed `capMicros`.
 */
export interface SpendCap {
  period: 'day' | 'month';
  sinceMs: number;
  capMicros: bigint;
}

export interface DebitInput {
  walletId: string;
  amountMicros: bigint;
  month: string;
  usage: UsageInput;
  /** Checked in order, atomically with the debit; the first that would be exceeded refuses it. */
  spendCaps?: readonly SpendCap[];
}

export type DebitResult =
  | {
      ok: true;
      balanceMicros: bigint;
      /**
       * The wallet's burn in the debit's month after it; null when the wallet is already in a later
       * month (a read begun before a UTC month change, committed after reads of the new month: it
       * counts in its own month, and the later month's burn is left as it was).
       */
      burnMonthMicros: bigint | null;
      entryId: string;
    }
  | {
      ok: false;
      balanceMicros: bigint;
      /** Set when a spending cap refused the debit (the balance was not looked at). */
      cap?: SpendCap & { spentMicros: bigint };
    };

export interface NewAccount {
  id: string;
  email: string | null;
  passwordHash: string | null;
  walletId: string;
  createdAt: number;
  publicTestStartedAt: number | null;
}

/** How a text page joins its stored CSV lines (`PageQuery.csvJoin`). */
export type CsvJoin = 'crlf' | 'json';

export interface PageQuery extends RowQuery {
  /** The page size: `StoredPage.next` says whether rows follow. */
  limit: number;
  /**
   * With csvColumns, how the page's lines are joined: `crlf` for a CSV body, `json` for the content of a
   * JSON string (LF-joined and escaped once by the store: an MCP page text is made from it as it is).
   */
  csvJoin?: CsvJoin;
}

/** A page of full rows as text, for answers that serve rows as stored (REST JSON and CSV, MCP). */
export interface StoredPage {
  /** Rows on the page: at most the query's limit. */
  count: number;
  /** The rows' stored JSON joined by commas: the inside of a JSON array. */
  json: string;
  /**
   * With csvColumns: the rows' stored CSV lines joined as `csvJoin` says, with no final line end; null
   * when a row has no line over those columns (render those from the JSON).
   */
  csv?: string | null;
  /** The keyset position of the page's last row when another row follows it, else null. */
  next: { t: string; id: number } | null;
  /** The import runs that supplied the page's rows, ascending (none for sample rows). */
  imports: number[];
  /**
   * Stored rows the read looked at: the page (and the row that tells whether another follows) for a read
   * an index serves; up to SCAN_CAP for one that checks rows one by one (`row-scan.ts`).
   */
  examined: number;
}

/** A page of rows (`queryRows`): at most the query's limit, and where the next page starts. */
export interface RowsPage {
  rows: StoredRow[];
  /**
   * The keyset position the next page starts after, else null: the page's last row when another row
   * follows it, or, when a scan stopped at SCAN_CAP before filling the page, the last row it examined.
   */
  next: { t: string; id: number } | null;
  /** Stored rows the read looked at (see StoredPage.examined). */
  examined: number;
}

export interface StoredRow {
  id: number;
  t: string;
  /** The row as JSON text, served as-is when no field projection is asked for. */
  json: string;
  /** The row's stored CSV line (no line end), when the query asked for `csvColumns` and they match. */
  csv?: string | null;
  /** The import run that supplied the row; null for sample rows and rows of a column-mapped import. */
  importId: number | null;
}

/** What every adapter of either port does with its database. */
export interface StoreLifecycle {
  /** Applies pending migrations; safe to call from several processes at once. */
  migrate(): Promise<void>;
  close(): Promise<void>;
  /** A cheap round trip for readiness checks. */
  ping(): Promise<void>;
}

/** The Ledger port: accounts, keys, sessions, wallets, the ledger, usage and analyses. */
export interface Ledger
  extends StoreLifecycle,
    AnalysisStore,
    BillingStore,
    IdempotencyStore,
    OAuthStore,
    PasswordResetStore {
  createWallet(id: string, accountId: string | null, month: string): Promise<WalletRecord>;
  getWallet(id: string): Promise<WalletRecord | null>;
  /** Creates the account and its wallet together. */
  createAccount(input: NewAccount, month: string): Promise<AccountRecord>;
  getAccount(id: string): Promise<AccountRecord | null>;
  findAccountByEmail(email: string): Promise<AccountRecord | null>;
  updateAccount(
    id: string,
    patch: Partial<
      Pick<AccountRecord, 'plan' | 'packageId' | 'passwordHash' | 'publicTestStartedAt' | 'lowBalanceMicros'>
    >,
  ): Promise<void>;

  /** Accounts that have a package assigned, for the monthly credit job. */
  listAccountsWithPackage(): Promise<AccountRecord[]>;

  insertKey(key: KeyRecord): Promise<void>;
  /**
   * Sets (or clears, with null) a key's spending caps in one statement; a cap left undefined keeps its
   * stored value, so two changes of different caps at once both hold. False if there is no such key.
   */
  setKeyCaps(
    id: string,
    caps: { dailyCapMicros?: bigint | null; monthlyCapMicros?: bigint | null },
  ): Promise<boolean>;
  findKeyByDigest(digest: string): Promise<KeyContext | null>;
  getKey(id: string): Promise<KeyRecord | null>;
  listKeys(accountId: string): Promise<KeyRecord[]>;
  /** Revokes one key; returns false if it was already revoked or does not exist. */
  revokeKey(id: string, at: number): Promise<boolean>;
  /** Revokes every live key of this kind on the account, then inserts the new key, atomically. */
  replaceKeys(accountId: string, kind: KeyKind, key: KeyRecord, at: number): Promise<void>;

  createSession(session: SessionRecord): Promise<void>;
  getSession(id: string): Promise<SessionRecord | null>;
  revokeSession(id: string, at: number): Promise<void>;

  /** Credits a wallet once per idempotency key (per wallet); a repeat returns the first entry. */
  credit(input: CreditInput): Promise<CreditResult>;
  /** Atomic check-and-debit plus its ledger entry and usage event; refuses rather than overdraw. */
  debit(input: DebitInput): Promise<DebitResult>;
  /** A served read that burned nothing (notional or grandfathered). */
  recordUsage(usage: UsageInput): Promise<void>;
  /**
   * Micro-tokens this key burned at or after `sinceMs` (its usage events): what a SpendCap counts. A
   * read outside any debit, so only a forecast; the debit checks caps again, atomically.
   */
  keyBurnedSince(keyId: string, sinceMs: number): Promise<bigint>;
  listEntries(walletId: string): Promise<LedgerEntry[]>;
  /**
   * A wallet's entries newest first, keyset-paged: at most `limit` entries with ids below `beforeId`
   * (all of them when null). Entry ids grow with time.
   */
  listEntriesPage(walletId: string, page: { beforeId: string | null; limit: number }): Promise<LedgerEntry[]>;
  /** Checks every wallet: its balance must equal the sum of its entries and never be negative. */
  auditLedger(): Promise<LedgerAudit>;
  sumEntries(walletId: string): Promise<bigint>;
  /** Usage events of an account (or of one key when accountId is null), newest first, keyset-paged. */
  listUsage(
    scope: { accountId: string } | { keyId: string },
    beforeId: string | null,
    limit: number,
  ): Promise<UsageEvent[]>;
  /**
   * The newest `limit` usage events of an account (or key) at or after `sinceMs`, summed in the database
   * per `bucketMs` of time, dataset and channel, newest bucket first; `more`: older events in range were
   * left out.
   */
  sumUsage(
    scope: { accountId: string } | { keyId: string },
    query: { sinceMs: number; bucketMs: number; limit: number },
  ): Promise<{ sums: UsageSum[]; more: boolean }>;
}

/**
 * The Datasets port: dataset rows, their sources and imports, and pages of them. It may live on another
 * database than the ledger (DATASETS_DATABASE_URL), its page queries on a replica (DATASETS_READ_URL).
 */
export interface Datasets extends StoreLifecycle, ImportStore, CollectionStore {
  /**
   * Loads a dataset's rows. `sample` loads only into an empty dataset (idempotent across processes);
   * `import` replaces whatever was there: written beside the live rows and swapped in at once, so no
   * read sees a mix and none waits for the load; with `run`, the load is recorded as an import run
   * (loading, then swapped or failed). Returns false when a sample load found rows already.
   * With `csvColumns`, each row's CSV line over those columns (`csvRecord`) is stored beside it.
   * With `ifLoadedAt`, the load happens only if the dataset is still the one loaded at that instant
   * (`datasetSource().loadedAt`, which every load moves forward): else AppError `conflict` and nothing
   * changes. A merge reads the rows it keeps, then loads; this stops a load in between from being lost.
   */
  loadRows(
    dataset: string,
    timeField: string,
    rows: readonly Row[],
    source: RowSource,
    csvColumns?: readonly string[],
    options?: { ifLoadedAt?: number; run?: NewImportRun },
  ): Promise<boolean>;
  /**
   * loadRows over rows that arrive in batches (a file read as it is parsed): the dataset holds every
   * row or, if the iterable throws, none (its rows are as they were). The batches are consumed in
   * order; no more than one is held at a time. Returns what loadRows returns.
   */
  loadRowsStream(
    dataset: string,
    timeField: string,
    batches: AsyncIterable<readonly Row[]>,
    source: RowSource,
    csvColumns?: readonly string[],
    options?: { ifLoadedAt?: number; run?: NewImportRun },
  ): Promise<boolean>;
  datasetSource(dataset: string): Promise<{ source: RowSource; rows: number; loadedAt: number } | null>;
  /**
   * Calls `listener` with a dataset's key each time a load or upsert of it is swapped in: in this
   * process at once, in others within a second (SQLite: PRAGMA data_version; PostgreSQL: LISTEN).
   * Resolves once loads from now on will be told (PostgreSQL: its LISTEN is in place).
   */
  onLoaded(listener: (dataset: string) => void): Promise<void>;
  /**
   * Each dataset's entity fields, in catalog order: their values become the dataset's key columns,
   * which reads filtering on them walk. Datasets stored under another layout are re-keyed here (one
   * statement each); until this is called, every filter is checked row by row under SCAN_CAP.
   */
  syncLayouts(layouts: ReadonlyMap<string, readonly string[]>): Promise<{ rekeyed: string[] }>;
  /** One page of rows in the query's order, at most its limit, and where the next one starts. */
  queryRows(query: RowQuery): Promise<RowsPage>;
  /** The same rows as queryRows, as one text page (`pageOfRows` is the reference). */
  queryPage(query: PageQuery): Promise<StoredPage>;
}

/** One adapter that serves both ports on one database (SqliteStore, PostgresStore). */
export interface Store extends Ledger, Datasets {}
