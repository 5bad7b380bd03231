/** The wallet: balance, tier, this month's burn, the low-balance notice, the package and the next tier. */
import type { Me, Pricing } from '../../types.ts';
import { LowBalanceForm } from './low-balance-form.tsx';
import { toNumber } from './to-number.ts';

export interface WalletCardProps {
  me: Me;
  pricing: Pricing | null;
  onError: (e: unknown) => void;
}

export function WalletCard({ me, pricing, onError }: WalletCardProps) {
  const tier = pricing?.loyalty_tiers.find((t) => t.level === me.tier.level);
  const sku = pricing?.commercial_skus.find((s) => s.id === me.account?.package);
  return (
    <section class="card" aria-labelledby="wallet-title">
      <h2 id="wallet-title">Wallet</h2>
      <dl class="facts">
        <dt>Balance</dt>
        <dd class="num" data-testid="wallet-balance">
          {me.wallet.balance} tokens
        </dd>
        <dt>Tier</dt>
        <dd>
          <span class="medal" aria-hidden="true">
            {me.tier.medal}
          </span>{' '}
          Level {me.tier.level}, {me.tier.name}: {me.tier.discount_pct}% discount,{' '}
          {tier?.rate_limit ?? me.limits.per_minute} requests per minute
        </dd>
        <dt>Burned this month</dt>
        <dd class="num">{me.burned_this_month} tokens</dd>
        <dt>Low-balance notice</dt>
        <dd>
          <LowBalanceForm current={me.account?.low_balance} onError={onError} />
        </dd>
        <dt>Package</dt>
        <dd>
          {sku
            ? `${sku.name}: ${sku.monthly_credits ?? 0} tokens credited each month`
            : 'None (an operator assigns packages; see Packages)'}
        </dd>
      </dl>
      <NextTier me={me} />
    </section>
  );
}

function NextTier({ me }: { me: Me }) {
  const nextTier = me.next_tier;
  if (!nextTier) {
    return (
      <>
        <h3>Next tier</h3>
        <p>You are at the top tier.</p>
      </>
    );
  }
  const progressMax = nextTier.min_tokens ?? 0;
  return (
    <>
      <h3>Next tier</h3>
      <label>
        Progress to level {nextTier.level}, {nextTier.name}: {me.burned_this_month} of {nextTier.min_tokens}{' '}
        tokens this month
        <progress max={progressMax} value={Math.min(toNumber(me.burned_this_month), progressMax)} />
      </label>
      <p class="small">
        {nextTier.tokens_needed} tokens more this month bring {nextTier.discount_pct}% discount and{' '}
        {nextTier.rate_limit} requests per minute.
      </p>
    </>
  );
}
