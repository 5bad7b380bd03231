/** Which limits apply to a caller (DECISIONS "Limits"): the one table both the hook and /me read. */
import type { ServiceFile } from '../config.ts';
import type { Caller } from './caller.ts';
import { type MeterDeps, tierOf } from './metering.ts';
import { packageOf } from './packages.ts';

export interface CallerLimits {
  per_minute: number;
  per_day: number | null;
  concurrent: number;
  ip_fence: boolean;
}

export function limitsFor(config: ServiceFile, deps: MeterDeps, caller: Caller, now: number): CallerLimits {
  const limits = config.limits;
  if (caller.kind === 'sandbox') {
    return {
      per_minute: limits.sandbox.per_minute,
      per_day: limits.sandbox.per_day,
      concurrent: limits.sandbox.concurrent,
      ip_fence: true,
    };
  }
  if (caller.kind === 'public_test') {
    return {
      per_minute: limits.public_test.per_minute,
      per_day: limits.public_test.per_day,
      concurrent: limits.public_test.concurrent,
      ip_fence: false,
    };
  }
  // Wallet keys and sessions: the better of the tier's and the package's per-minute limit.
  const tier = tierOf(deps, caller, now);
  const pkg = packageOf(config, caller.account);
  return {
    per_minute: Math.max(tier.rate_limit, pkg?.rate_limit_per_minute ?? 0),
    per_day: limits.wallet.per_day,
    concurrent: limits.wallet.concurrent,
    ip_fence: false,
  };
}

/**
 * The identity limits are counted against: the key, or the account for sessions and public-test keys
 * (registering again issues a new key; the test's limits are the account's, not each key's).
 */
export function limitSubject(caller: Caller): string {
  if (caller.key && !(caller.kind === 'public_test' && caller.account)) return `key:${caller.key.id}`;
  return `acct:${caller.account?.id ?? caller.wallet.id}`;
}
