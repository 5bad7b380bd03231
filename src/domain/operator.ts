/**
 * What only operators do: create accounts, assign packages, set early_bird, credit tokens, make keys
 * for an account, set spending caps, run the monthly credit job, import real rows. The admin API and
 * the `tmd` CLI are two faces over these same calls.
 */

import type { z } from 'zod';
import type { Catalog } from '../catalog/catalog.ts';
import type { Row } from '../catalog/types.ts';
import type { ServiceFile, Sku } from '../config.ts';
import { AppError } from '../errors.ts';
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
import { formatMicros } from './money.ts';
import { type ImportedFile, type ImportedRows, type ImportMode, importRows } from './operator-imports.ts';
import {
  idempotencyKeyPattern,
  MAX_BALANCE_TOKENS,
  type newAccountInput,
  type OperatorCreditKind,
} from './operator-inputs.ts';
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

export type { ImportedFile, ImportedRows, ImportMode } from './operator-imports.ts';
export {
  adminTokenMatches,
  capAmount,
  creditKinds,
  idempotencyKeyPattern,
  MAX_BALANCE_TOKENS,
  MAX_CREDIT_TOKENS,
  newAccountInput,
  type OperatorCreditKind,
  tokenAmount,
} from './operator-inputs.ts';

/** Who did it, written into ledger memos and audit lines. */
export type Actor = 'admin-api' | 'cli';

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

  /** Loads real rows into a dataset: see `importRows` in operator-imports.ts for the three modes. */
  async importRows(
    datasetKey: string,
    given: readonly Row[] | AsyncIterable<readonly Row[]>,
    options: { mode?: ImportMode; merge?: boolean; file?: ImportedFile } = {},
  ): Promise<ImportedRows> {
    return importRows(this.#deps, datasetKey, given, options);
  }
}
