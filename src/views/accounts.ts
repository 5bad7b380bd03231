/** An account as its holder sees it (GET /api/v1/me, get_account) and as operators see it. */
import { z } from 'zod';
import type { ServiceFile } from '../config.ts';
import type { AccountSnapshot } from '../domain/accounts.ts';
import type { CredentialKind } from '../domain/caller.ts';
import { credentialKinds } from '../domain/credential-kinds.ts';
import { formatMicros } from '../domain/money.ts';
import type { AccountView } from '../domain/operator.ts';
import { entitlementsOf } from '../domain/packages.ts';
import { publicTestEndsAt } from '../domain/public-test.ts';
import { iso, tokens } from './common.ts';
import { keyOut, presentKey } from './keys.ts';

/** A loyalty tier as the pricing configures it (config/service.json `pricing.loyalty_tiers`). */
const tierOut = z.looseObject({
  level: z.int(),
  name: z.string(),
  medal: z.string(),
  min_tokens: z.int().describe('Tokens burned in a UTC month that reach this tier.'),
  rate_limit: z.int().describe('Requests per minute at this tier.'),
  rate_limit_multiplier: z.number(),
  discount_pct: z.number(),
  benefits: z.array(z.string()),
});

export const accountOut = z.object({
  credential: z.object({
    kind: z.enum(Object.keys(credentialKinds) as [CredentialKind, ...CredentialKind[]]),
    key_id: z.string().nullable(),
    expires_at: z.string().nullable(),
  }),
  account: z
    .object({
      id: z.string(),
      email: z.string().nullable(),
      plan: z.string(),
      package: z.string().nullable(),
      entitlements: z
        .object({
          bulk_export: z.boolean(),
          analysis_assistant: z.boolean(),
          mcp_included: z.boolean(),
          spending_caps: z.boolean(),
        })
        .describe(
          "What the account's package brings beyond reads (analysis_assistant is a Terminal feature).",
        ),
      created_at: z.string(),
      low_balance: tokens
        .nullable()
        .describe('The low-balance threshold: a read that takes the balance below it is notified, once.'),
      public_test_window_ends_at: z
        .string()
        .nullable()
        .describe(
          "When the account's public-test window closes: until then its public-test keys read the free (P0) datasets at no cost, and a new key can be had. Each key stops at its own expires_at, within the window. Null if the account never registered for the public test.",
        ),
    })
    .nullable(),
  wallet: z.object({ id: z.string(), balance: tokens }),
  burned_this_month: tokens,
  tier: tierOut,
  next_tier: tierOut.extend({ tokens_needed: tokens }).nullable(),
  limits: z.object({
    per_minute: z.int(),
    per_day: z.int().nullable(),
    concurrent: z.int(),
    ip_fence: z.boolean(),
  }),
});

export function presentAccount(s: AccountSnapshot): z.infer<typeof accountOut> {
  const { caller } = s;
  return {
    credential: { kind: caller.kind, key_id: caller.key?.id ?? null, expires_at: iso(caller.expiresAt) },
    account:
      caller.account && s.entitlements
        ? {
            id: caller.account.id,
            email: caller.account.email,
            plan: caller.account.plan,
            package: caller.account.packageId,
            entitlements: s.entitlements,
            created_at: iso(caller.account.createdAt) as string,
            low_balance:
              caller.account.lowBalanceMicros == null ? null : formatMicros(caller.account.lowBalanceMicros),
            public_test_window_ends_at: iso(s.publicTestWindowEnd),
          }
        : null,
    wallet: { id: s.wallet.id, balance: formatMicros(s.wallet.balanceMicros) },
    burned_this_month: formatMicros(s.burnedMicros),
    tier: s.tier,
    next_tier: s.next ? { ...s.next.tier, tokens_needed: formatMicros(s.next.tokensNeededMicros) } : null,
    limits: s.limits,
  };
}

/** An account as operators see it (admin API and `tmd`). */
export const operatorAccountOut = z.object({
  id: z.string(),
  email: z.string().nullable(),
  plan: z.enum(['standard', 'early_bird']),
  early_bird_eligible: z.boolean().describe('Created before early_bird.cohort_cutoff.'),
  package: z.string().nullable(),
  entitlements: z.object({
    bulk_export: z.boolean(),
    analysis_assistant: z.boolean(),
    mcp_included: z.boolean(),
    spending_caps: z.boolean(),
  }),
  created_at: z.string(),
  public_test_started_at: z.string().nullable(),
  wallet: z.object({ id: z.string(), balance: tokens }),
  keys: z.array(keyOut),
});

/** An account as operators see it (admin API and `tmd`). */
export function presentAccountView(config: ServiceFile, view: AccountView, now: number) {
  return {
    id: view.account.id,
    email: view.account.email,
    plan: view.account.plan,
    early_bird_eligible: view.earlyBirdEligible,
    package: view.account.packageId,
    entitlements: entitlementsOf(config, view.account),
    created_at: iso(view.account.createdAt) as string,
    public_test_started_at: iso(view.account.publicTestStartedAt),
    wallet: { id: view.account.walletId, balance: formatMicros(view.balanceMicros) },
    keys: view.keys.map((k) => presentKey(k, now, publicTestEndsAt(config))),
  };
}
