/**
 * What only operators do: create accounts, assign packages, set early_bird, credit tokens, make keys
 * for an account, set spending caps, run the monthly credit job, import real rows. The admin API and
 * the `tmd` CLI are two faces over these same calls.
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Catalog, CatalogEntry } from '../catalog/catalog.ts';
import type { Row } from '../catalog/types.ts';
import type { ServiceFile, Sku } from '../config.ts';
import { AppError } from '../errors.ts';
import { generatedKey, type KeyedRow, type NewImportRun } from '../store/import-port.ts';
import {
  type AccountRecord,
  BalanceLimitReached,
  type CreditResult,
  type Datasets,
  type KeyRecord,
  type Ledger,
  type LedgerEntry,
} from '../store/port.ts';
import type { Credentials, IssuedKey } from './credentials.ts';
import { newId } from './ids.ts';
import { decimalToMicros, formatMicros } from './money.ts';
import {
  creditMonthly,
  creditMonthlyPackages,
  entitlementsOf,
  findPackage,
  type MonthlyCreditRun,
  packageOf,
} from './packages.ts';
import { hashPassword } from './passwords.ts';
import { utcMonth } from './pricing.ts';

/** Who did it, written into ledger memos and audit lines. */
export type Actor = 'admin-api' | 'cli';

export const MAX_CREDIT_TOKENS = 1_000_000_000n;
/** What one wallet may hold: far below what a 64-bit balance can count (9.2 x 10^12 tokens). */
export const MAX_BALANCE_TOKENS = 1_000_000_000_000n;

/** A positive token amount: an integer, or a decimal string with at most 6 decimals. */
export const tokenAmount = z
  .union([
    z.int().positive(),
    z.string().regex(/^\d{1,10}(\.\d{1,6})?$/, 'must be a decimal with at most 6 decimals'),
  ])
  .transform((v) => decimalToMicros(String(v)))
  .refine((micros) => micros > 0n, 'must be more than 0')
  .refine(
    (micros) => micros <= MAX_CREDIT_TOKENS * 1_000_000n,
    `must be at most ${MAX_CREDIT_TOKENS} tokens`,
  );

/** A cap: a token amount, or null to remove it. */
export const capAmount = tokenAmount.nullable();

export const newAccountInput = z.strictObject({
  email: z.email().max(254),
  password: z.string().min(10, 'must be at least 10 characters').max(200).optional(),
});

export const creditKinds = ['topup', 'grant', 'refund', 'adjustment'] as const;
export type OperatorCreditKind = (typeof creditKinds)[number];

export const idempotencyKeyPattern = /^[\x21-\x7e]{1,200}$/;

/** Constant-time check of a presented operator token: digests of equal length are compared. */
export function adminTokenMatches(expected: string, presented: string): boolean {
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(presented).digest();
  return timingSafeEqual(a, b);
}

/** How a generic import meets the rows already there (`Operator.importRows`). */
export type ImportMode = 'upsert' | 'merge' | 'replace';

/** The file a generic import read, for its provenance record. */
export interface ImportedFile {
  name: string;
  sha256: string;
  /** csv, ndjson or json. */
  format: string;
}

export interface ImportedRows {
  dataset: string;
  /** Rows the dataset holds now. */
  rows: number;
  /** With merge: stored rows kept beside the new ones. */
  kept: number;
  /** With upsert: rows read, rows added, stored rows replaced, and the import's record. */
  read?: number;
  inserted?: number;
  replaced?: number;
  importId?: number;
}

export interface OperatorDeps {
  store: Ledger;
  datasets: Datasets;
  config: ServiceFile;
  catalog: Catalog;
  credentials: Credentials;
  now: () => number;
}

export interface AccountView {
  account: AccountRecord;
  package: Sku | null;
  balanceMicros: bigint;
  keys: KeyRecord[];
  earlyBirdEligible: boolean;
}

export interface CreditOutcome {
  entry: LedgerEntry;
  duplicate: boolean;
  balanceMicros: bigint;
}

export class Operator {
  readonly #deps: OperatorDeps;

  constructor(deps: OperatorDeps) {
    this.#deps = deps;
  }

  get cohortCutoff(): number {
    return Date.parse(this.#deps.config.early_bird.cohort_cutoff);
  }

  /** An account by id (`acc_…`) or email. */
  async findAccount(ref: string): Promise<AccountRecord> {
    const { store } = this.#deps;
    const account = ref.includes('@')
      ? await store.findAccountByEmail(ref.trim().toLowerCase())
      : await store.getAccount(ref);
    if (!account) throw new AppError('not_found', `No account ${ref}.`);
    return account;
  }

  async view(account: AccountRecord): Promise<AccountView> {
    const { store, config } = this.#deps;
    const wallet = await store.getWallet(account.walletId);
    return {
      account,
      package: packageOf(config, account),
      balanceMicros: wallet?.balanceMicros ?? 0n,
      keys: await store.listKeys(account.id),
      earlyBirdEligible: account.createdAt < this.cohortCutoff,
    };
  }

  async createAccount(input: z.infer<typeof newAccountInput>): Promise<AccountRecord> {
    const { store } = this.#deps;
    const email = input.email.trim().toLowerCase();
    if (await store.findAccountByEmail(email))
      throw new AppError('conflict', `An account with email ${email} exists.`);
    const now = this.#deps.now();
    try {
      return await store.createAccount(
        {
          id: newId('acc'),
          email,
          passwordHash: input.password === undefined ? null : await hashPassword(input.password),
          walletId: newId('wal'),
          createdAt: now,
          publicTestStartedAt: null,
        },
        utcMonth(now),
      );
    } catch (error) {
      // The email's unique index: another request created it in between. Anything else (the ledger
      // unreachable, say) is what it is, not a conflict.
      if (error instanceof AppError || !(await store.findAccountByEmail(email).catch(() => null)))
        throw error;
      throw new AppError('conflict', `An account with email ${email} exists.`);
    }
  }

  /**
   * Assigns a package (or clears it with null). Assigning credits the package's monthly_credits for the
   * current month at once, under the same idempotency key the monthly job uses: never twice a month.
   */
  async assignPackage(
    accountRef: string,
    packageId: string | null,
  ): Promise<{ account: AccountRecord; monthlyCredit: CreditResult | null }> {
    const { store, config } = this.#deps;
    const account = await this.findAccount(accountRef);
    if (packageId !== null && !findPackage(config, packageId)) {
      const ids = config.pricing.commercial_skus.map((s) => s.id).join(', ');
      throw new AppError('invalid_request', `No package "${packageId}". Packages: ${ids}.`, {
        errors: [{ path: 'package', message: `must be one of ${ids}, or null` }],
      });
    }
    await store.updateAccount(account.id, { packageId });
    const updated = { ...account, packageId };
    const monthlyCredit =
      packageId === null ? null : await creditMonthly(this.#deps, updated, this.#deps.now());
    return { account: updated, monthlyCredit };
  }

  /** early_bird is only for accounts created before the cohort cutoff (spec 5.3); clearing is always allowed. */
  async setEarlyBird(accountRef: string, on: boolean): Promise<AccountRecord> {
    const account = await this.findAccount(accountRef);
    if (on && account.createdAt >= this.cohortCutoff) {
      throw new AppError(
        'conflict',
        `early_bird is for accounts created before the cohort cutoff ${this.#deps.config.early_bird.cohort_cutoff}; ${account.id} was created at ${new Date(account.createdAt).toISOString()}.`,
        { cohort_cutoff: this.#deps.config.early_bird.cohort_cutoff },
      );
    }
    const plan = on ? 'early_bird' : 'standard';
    if (account.plan !== plan) await this.#deps.store.updateAccount(account.id, { plan });
    return { ...account, plan };
  }

  /**
   * Credits tokens once per idempotency key and account: a repeat returns the first entry. A repeat
   * that asks for another amount or kind is a 409, so a reused key can never hide a different credit.
   */
  async creditTokens(
    accountRef: string,
    input: {
      amountMicros: bigint;
      idempotencyKey: string;
      kind?: OperatorCreditKind;
      memo?: string;
      actor: Actor;
      requestId?: string;
    },
  ): Promise<CreditOutcome> {
    const { store } = this.#deps;
    if (!idempotencyKeyPattern.test(input.idempotencyKey)) {
      throw new AppError(
        'invalid_request',
        'The idempotency key must be 1 to 200 printable ASCII characters.',
        {
          errors: [{ path: 'Idempotency-Key', message: 'must be 1 to 200 printable ASCII characters' }],
        },
      );
    }
    const account = await this.findAccount(accountRef);
    const kind = input.kind ?? 'topup';
    const memo = `operator ${kind} (${input.actor})${input.memo ? `: ${input.memo}` : ''}`;
    const result = await store
      .credit({
        walletId: account.walletId,
        kind,
        amountMicros: input.amountMicros,
        at: this.#deps.now(),
        // Namespaced, so an operator's key can never collide with the signup grant or a monthly credit.
        idempotencyKey: `operator:${input.idempotencyKey}`,
        memo,
        // In the credit's transaction, after its idempotency key: a replay is answered as one.
        maxBalanceMicros: MAX_BALANCE_TOKENS * 1_000_000n,
        ...(input.requestId === undefined ? {} : { requestId: input.requestId }),
      })
      .catch((error: unknown) => {
        if (!(error instanceof BalanceLimitReached)) throw error;
        throw new AppError(
          'conflict',
          `The wallet would hold more than ${MAX_BALANCE_TOKENS} tokens, the most a wallet may hold.`,
        );
      });
    if (
      result.duplicate &&
      (result.entry.amountMicros !== input.amountMicros || result.entry.kind !== kind)
    ) {
      throw new AppError(
        'conflict',
        `Idempotency key "${input.idempotencyKey}" was already used for a ${result.entry.kind} of ${formatMicros(result.entry.amountMicros)} tokens.`,
        { entry_id: result.entry.id },
      );
    }
    const wallet = await store.getWallet(account.walletId);
    return { ...result, balanceMicros: wallet?.balanceMicros ?? 0n };
  }

  async createKey(accountRef: string, name: string | null, expiresAt: number | null): Promise<IssuedKey> {
    const account = await this.findAccount(accountRef);
    return this.#deps.credentials.createLiveKey(account, name, expiresAt);
  }

  async setKeyCaps(
    keyId: string,
    caps: { dailyCapMicros?: bigint | null; monthlyCapMicros?: bigint | null },
  ): Promise<KeyRecord> {
    const key = await this.#deps.store.getKey(keyId);
    if (!key) throw new AppError('not_found', `No key ${keyId}.`);
    return this.#applyCaps(key, caps);
  }

  /** Self-service caps: a session of an account whose package has spending-cap controls (Partner). */
  async setOwnKeyCaps(
    account: AccountRecord,
    keyId: string,
    caps: { dailyCapMicros?: bigint | null; monthlyCapMicros?: bigint | null },
  ): Promise<KeyRecord> {
    const key = await this.#deps.store.getKey(keyId);
    if (!key || key.accountId !== account.id)
      throw new AppError('not_found', `No key ${keyId} on this account.`);
    if (!entitlementsOf(this.#deps.config, account).spending_caps) {
      throw new AppError(
        'forbidden',
        'Spending caps per key come with the Partner package; an operator can assign it or set caps for you.',
      );
    }
    return this.#applyCaps(key, caps);
  }

  async #applyCaps(
    key: KeyRecord,
    caps: { dailyCapMicros?: bigint | null; monthlyCapMicros?: bigint | null },
  ): Promise<KeyRecord> {
    if (key.kind !== 'live') {
      throw new AppError(
        'conflict',
        `Spending caps apply to wallet-backed live keys; ${key.id} is a ${key.kind} key.`,
      );
    }
    if (key.revokedAt !== null || (key.expiresAt !== null && key.expiresAt <= this.#deps.now())) {
      throw new AppError(
        'conflict',
        `Spending caps apply to keys that are live; ${key.id} is ${key.revokedAt !== null ? 'revoked' : 'expired'}.`,
      );
    }
    await this.#deps.store.setKeyCaps(key.id, caps);
    // As stored: a cap this change left alone may have been changed by another request meanwhile.
    return (await this.#deps.store.getKey(key.id)) ?? key;
  }

  async runMonthlyCredits(): Promise<MonthlyCreditRun> {
    return creditMonthlyPackages(this.#deps, this.#deps.now());
  }

  /**
   * Loads real rows into a dataset, given whole or in batches as a file is parsed (loaded as they come,
   * in one transaction: a batch that throws leaves the dataset as it was). Sample rows are never kept
   * next to real ones. `mode`:
   * - `upsert` (the default): a row replaces the stored row with the same entity values and time, the
   *   others are added; a daily file appends, and nothing else is touched. The import is recorded (its
   *   file, SHA-256, counts) as the named importers' are.
   * - `merge`: rows already imported for entities the new rows do not cover are kept, the entities the
   *   new rows cover are replaced whole (one FRED series at a time into a multi-series dataset).
   * - `replace`: the new rows are the whole dataset.
   */
  async importRows(
    datasetKey: string,
    given: readonly Row[] | AsyncIterable<readonly Row[]>,
    options: { mode?: ImportMode; merge?: boolean; file?: ImportedFile } = {},
  ): Promise<ImportedRows> {
    const { catalog } = this.#deps;
    const entry = catalog.resolve(datasetKey);
    if (!entry)
      throw new AppError('dataset_not_found', `No dataset "${datasetKey}".`, {
        suggestions: catalog.suggest(datasetKey),
      });
    const mode = options.mode ?? (options.merge ? 'merge' : 'upsert');
    if (mode === 'upsert') return this.#upsert(entry, given, options.file);
    let rows: readonly Row[];
    if (Symbol.asyncIterator in given) {
      if (mode === 'replace') return this.#importStream(entry, given, options.file);
      // A merge keeps the stored rows of the entities the file does not cover, so it must see the
      // whole file first: it holds the file's rows (one series at a time, small).
      const all: Row[] = [];
      for await (const batch of given) for (const row of batch) all.push(row);
      rows = all;
    } else {
      rows = given;
    }
    // A merge keeps the stored rows of the other series: read, then load only if no other load came
    // in between (two merges at once would otherwise lose one's series). Tried again a few times.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#importOnce(entry, rows, { merge: mode === 'merge' });
      } catch (error) {
        if (!(mode === 'merge' && error instanceof AppError && error.code === 'conflict') || attempt >= 5)
          throw error;
      }
    }
  }

  async #upsert(
    entry: CatalogEntry,
    given: readonly Row[] | AsyncIterable<readonly Row[]>,
    file: ImportedFile | undefined,
  ): Promise<ImportedRows> {
    const { dataset } = entry;
    const naturalKey = [...dataset.entity_fields, dataset.time_field];
    let read = 0;
    async function* keyed(): AsyncGenerator<readonly KeyedRow[]> {
      const batches = Symbol.asyncIterator in given ? given : [given];
      for await (const batch of batches) {
        read += batch.length;
        yield batch.map((row) => ({ key: generatedKey(row, naturalKey), row }));
      }
    }
    const run = await this.#deps.datasets.upsertRowsStream(
      dataset.key,
      dataset.time_field,
      keyed(),
      this.#run(entry, file),
      entry.columns,
      { naturalKey },
    );
    const span = await this.#deps.datasets.datasetSource(dataset.key);
    return {
      dataset: dataset.key,
      rows: span?.rows ?? 0,
      kept: 0,
      read,
      inserted: run.rowsInserted,
      replaced: run.rowsReplaced,
      importId: run.id,
    };
  }

  /** The provenance record of a generic import: the file as given, the dataset's publisher. */
  #run(entry: CatalogEntry, file: ImportedFile | undefined): NewImportRun {
    return {
      importer: file?.format ?? 'rows',
      sourceName: entry.dataset.source,
      fileName: file?.name ?? '',
      sha256: file?.sha256 ?? '',
      licence: 'As published by the source (generic import)',
      attribution: null,
      importedAt: this.#deps.now(),
      rowsRead: 0,
      rowsRejected: 0,
    };
  }

  async #importStream(
    entry: CatalogEntry,
    batches: AsyncIterable<readonly Row[]>,
    file: ImportedFile | undefined,
  ): Promise<ImportedRows> {
    let count = 0;
    async function* counted() {
      for await (const batch of batches) {
        count += batch.length;
        yield batch;
      }
    }
    const { dataset } = entry;
    await this.#deps.datasets.loadRowsStream(
      dataset.key,
      dataset.time_field,
      counted(),
      'import',
      entry.columns,
      {
        run: this.#run(entry, file),
      },
    );
    return { dataset: dataset.key, rows: count, kept: 0 };
  }

  async #importOnce(
    entry: CatalogEntry,
    rows: readonly Row[],
    options: { merge?: boolean },
  ): Promise<ImportedRows> {
    const { datasets: store } = this.#deps;
    const dataset = entry.dataset;
    const kept: Row[] = [];
    const before = options.merge ? await store.datasetSource(dataset.key) : null;
    if (before?.source === 'import') {
      const tuple = (row: Row) => JSON.stringify(dataset.entity_fields.map((f) => row[f] ?? null));
      const incoming = new Set(rows.map(tuple));
      let after: { t: string; id: number } | undefined;
      for (;;) {
        const { rows: page } = await store.queryRows({
          dataset: dataset.key,
          filters: {},
          descending: false,
          limit: 1000,
          ...(after ? { after } : {}),
        });
        for (const stored of page) {
          const row = JSON.parse(stored.json) as Row;
          if (!incoming.has(tuple(row))) kept.push(row);
        }
        const last = page.at(-1);
        if (!last || page.length < 1000) break;
        after = { t: last.t, id: last.id };
      }
    }
    const all = kept.length > 0 ? [...kept, ...rows] : rows;
    await store.loadRows(
      dataset.key,
      dataset.time_field,
      all,
      'import',
      entry.columns,
      before ? { ifLoadedAt: before.loadedAt } : {},
    );
    return { dataset: dataset.key, rows: all.length, kept: kept.length };
  }
}
