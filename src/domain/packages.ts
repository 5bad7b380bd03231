/**
 * Packages (spec 2.3, DECISIONS "Limits"): assigned to an account by an operator, never bought (no
 * checkout is live). An assigned package credits its monthly_credits once per UTC calendar month and
 * brings its rate limit, bulk_export and analysis_assistant entitlements.
 */
import type { ServiceFile, Sku } from '../config.ts';
import type { AccountRecord, CreditResult, Ledger } from '../store/port.ts';
import { formatMicros, tokensToMicros } from './money.ts';
import { utcMonth } from './pricing.ts';

/** Packages whose accounts may set spending caps on their own keys (spec 2.3: Partner's notes). */
export const SPENDING_CAP_PACKAGES: ReadonlySet<string> = new Set(['partner']);

export function findPackage(config: ServiceFile, id: string): Sku | null {
  return config.pricing.commercial_skus.find((s) => s.id === id) ?? null;
}

/** The account's package, or null. A package id no longer in the configuration counts as none. */
export function packageOf(config: ServiceFile, account: AccountRecord | null): Sku | null {
  if (!account?.packageId) return null;
  return findPackage(config, account.packageId);
}

export interface Entitlements {
  bulk_export: boolean;
  analysis_assistant: boolean;
  mcp_included: boolean;
  spending_caps: boolean;
}

/** What an account may use beyond reads. Accounts without a package have none of these extras. */
export function entitlementsOf(config: ServiceFile, account: AccountRecord | null): Entitlements {
  const sku = packageOf(config, account);
  return {
    bulk_export: sku?.bulk_export ?? false,
    analysis_assistant: sku?.analysis_assistant ?? false,
    // MCP reads are open to every credential (spec 1); the flag only describes the package.
    mcp_included: sku?.mcp_included ?? true,
    spending_caps: sku !== null && SPENDING_CAP_PACKAGES.has(sku.id),
  };
}

/** Packages that carry bulk_export, for a 403 that says what would allow it. */
export function exportPackages(config: ServiceFile): Sku[] {
  return config.pricing.commercial_skus.filter((s) => s.bulk_export);
}

/**
 * The idempotency key of a package's monthly credit. One per package and month: however often the job
 * runs, on however many nodes, the wallet's unique (wallet, idempotency key) index admits one entry.
 */
export function monthlyCreditKey(packageId: string, month: string): string {
  return `monthly-credit:${packageId}:${month}`;
}

export interface PackageDeps {
  store: Ledger;
  config: ServiceFile;
}

/** Credits the account's package for the month of `now`; null when it has no package or no credits. */
export async function creditMonthly(
  deps: PackageDeps,
  account: AccountRecord,
  now: number,
): Promise<CreditResult | null> {
  const sku = packageOf(deps.config, account);
  if (!sku || sku.monthly_credits === null || sku.monthly_credits <= 0) return null;
  const month = utcMonth(now);
  return deps.store.credit({
    walletId: account.walletId,
    kind: 'monthly_credit',
    amountMicros: tokensToMicros(sku.monthly_credits),
    at: now,
    idempotencyKey: monthlyCreditKey(sku.id, month),
    memo: `monthly credit: ${sku.name} ${month}`,
  });
}

export interface MonthlyCreditRun {
  month: string;
  /** Accounts credited by this run. */
  /** `tokens`: what the entry credited, an exact decimal string as every token amount in JSON. */
  credited: { accountId: string; packageId: string; tokens: string; entryId: string }[];
  /** Accounts whose credit for the month was already there. */
  alreadyCredited: number;
}

/** The monthly credit job: every account with a package, for the UTC month of `now`. Idempotent. */
export async function creditMonthlyPackages(deps: PackageDeps, now: number): Promise<MonthlyCreditRun> {
  const run: MonthlyCreditRun = { month: utcMonth(now), credited: [], alreadyCredited: 0 };
  for (const account of await deps.store.listAccountsWithPackage()) {
    const result = await creditMonthly(deps, account, now);
    if (!result) continue;
    if (result.duplicate) {
      run.alreadyCredited++;
      continue;
    }
    run.credited.push({
      accountId: account.id,
      packageId: account.packageId as string,
      tokens: formatMicros(result.entry.amountMicros),
      entryId: result.entry.id,
    });
  }
  return run;
}

export const MONTHLY_CREDIT_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Runs the job now and then every hour, so a month's credit lands within an hour of the month turning
 * even on a process that never restarts. The timer is unref'd: it never keeps the process alive.
 */
export function scheduleMonthlyCredits(
  deps: PackageDeps & { now: () => number },
  onRun: (run: MonthlyCreditRun) => void,
  onError: (error: unknown) => void,
  intervalMs = MONTHLY_CREDIT_INTERVAL_MS,
): () => void {
  const tick = () => {
    creditMonthlyPackages(deps, deps.now()).then(onRun, onError);
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
