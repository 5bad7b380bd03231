/** Which limits apply to a caller (DECISIONS "Limits"): the one table both the hook and /me read. */
import type { ServiceFile } from '../config.ts';
import type { Caller } from './caller.ts';
import { credentialKinds } from './credential-kinds.ts';
import { tierOf } from './metering.ts';
import { packageOf } from './packages.ts';
import type { Pricing } from './pricing.ts';

export interface CallerLimits {
  per_minute: number;
  per_day: number | null;
  concurrent: number;
  ip_fence: boolean;
}

export function limitsFor(config: ServiceFile, pricing: Pricing, caller: Caller, now: number): CallerLimits {
  const policy = credentialKinds[caller.kind];
  if (policy.limits !== 'wallet') {
    const limits = config.limits[policy.limits];
    return {
      per_minute: limits.per_minute,
      per_day: limits.per_day,
      concurrent: limits.concurrent,
      ip_fence: policy.ipFence,
    };
  }
  // Wallet keys and sessions: the better of the tier's and the package's per-minute limit.
  const tier = tierOf({ pricing }, caller, now);
  const pkg = packageOf(config, caller.account);
  return {
    per_minute: Math.max(tier.rate_limit, pkg?.rate_limit_per_minute ?? 0),
    per_day: config.limits.wallet.per_day,
    concurrent: config.limits.wallet.concurrent,
    ip_fence: policy.ipFence,
  };
}

/**
 * The identity limits are counted against: the key, or the account for sessions and public-test keys
 * (registering again issues a new key; the test's limits are the account's, not each key's).
 */
export function limitSubject(caller: Caller): string {
  if (caller.key && !(credentialKinds[caller.kind].limitedPerAccount && caller.account)) {
    return `key:${caller.key.id}`;
  }
  return `acct:${caller.account?.id ?? caller.wallet.id}`;
}
