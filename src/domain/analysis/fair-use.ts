/**
 * Who may use the Workbench and how much (docs/analyze.md#fair-use): an account whose package has
 * analysis_assistant, within the package's fair use, refused with 403 analysis_not_entitled or 429
 * fair_use_limit.
 */
import type { ServiceFile, Sku } from '../../config.ts';
import { AppError } from '../../errors.ts';
import type { Caller } from '../caller.ts';
import { credentialKinds, kindLabel } from '../credential-kinds.ts';
import { packageOf } from '../packages.ts';

/** The Workbench's fair use when a package record leaves a value out (docs/analyze.md#fair-use). */
export const FAIR_USE_DEFAULTS = {
  runs_per_day: 100,
  reads_per_run: 20,
  reuse_minutes: 15,
  confirm_above_tokens: 50,
} as const;

export type FairUse = { [K in keyof typeof FAIR_USE_DEFAULTS]: number };

export function fairUseOf(sku: Sku | null): FairUse {
  return { ...FAIR_USE_DEFAULTS, ...(sku?.fair_use ?? {}) };
}

export const DAY_MS = 86_400_000;

export const nextUtcDay = (now: number) => Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;

/**
 * 429 fair_use_limit. With `now`, a daily limit: it says when it resets (retry-after, reset_at); without,
 * a limit of one run that waiting does not lift.
 */
export function fairUseRefusal(
  detail: string,
  limit: keyof FairUse,
  value: number,
  now: number | null,
): AppError {
  if (now === null) return new AppError('fair_use_limit', detail, { limit, value });
  const retryAfter = Math.max(1, Math.ceil((nextUtcDay(now) - now) / 1000));
  return new AppError(
    'fair_use_limit',
    detail,
    { limit, value, retry_after: retryAfter, reset_at: new Date(nextUtcDay(now)).toISOString() },
    { 'retry-after': String(retryAfter) },
  );
}

/** The refusal of a run (or question) making more reads than one run may. */
export function readsPerRunRefusal(detail: string, fairUse: FairUse): AppError {
  return fairUseRefusal(detail, 'reads_per_run', fairUse.reads_per_run, null);
}

/** The packages that bring the Workbench, for the refusal and the page's explanation. */
export function entitlingPackages(config: ServiceFile): { id: string; name: string }[] {
  return config.pricing.commercial_skus
    .filter((s) => s.analysis_assistant)
    .map((s) => ({ id: s.id, name: s.name }));
}

/**
 * The caller's account and fair use, or 403 analysis_not_entitled: only an account whose package has
 * analysis_assistant, through a session or a wallet key; sandbox and public-test keys never.
 */
export function workbenchEntitlement(
  config: ServiceFile,
  caller: Caller,
): { accountId: string; fairUse: FairUse } {
  const packages = entitlingPackages(config);
  const names = packages.map((p) => p.name).join(' or ');
  const refuse = (detail: string) =>
    new AppError('analysis_not_entitled', detail, { packages: packages.map((p) => p.id) });
  if (credentialKinds[caller.kind].p0Only || !caller.account) {
    throw refuse(
      `${kindLabel(caller.kind, true)} cannot use the Workbench: the composer and the assistant are for accounts with the ${names} package, through the Terminal or a wallet key.`,
    );
  }
  const sku = packageOf(config, caller.account);
  if (!sku?.analysis_assistant) {
    throw refuse(
      `The Workbench (the analysis composer and assistant) comes with the ${names} package; this account has ${sku ? `the ${sku.name} package` : 'no package'}. An operator can assign it.`,
    );
  }
  return { accountId: caller.account.id, fairUse: fairUseOf(sku) };
}
