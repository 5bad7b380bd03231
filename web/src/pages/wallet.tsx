/**
 * Wallet and usage: balance, tier and progress, package, the ledger paged, 30 days of usage charts.
 * The parts are in ./wallet/.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ProblemBox } from '../components/problem-box.tsx';
import { refreshMe, useSession } from '../session.ts';
import type { Key, Pricing, UsageSummary } from '../types.ts';
import { BuyTokens } from './buy-tokens.tsx';
import { LedgerTable } from './wallet/ledger-table.tsx';
import { toNumber } from './wallet/to-number.ts';
import { TopDatasets } from './wallet/top-datasets.tsx';
import { UsageChart } from './wallet/usage-chart.tsx';
import { useLedger } from './wallet/use-ledger.ts';
import { WalletCard } from './wallet/wallet-card.tsx';

export function WalletPage() {
  const { me } = useSession();
  const [pricing, setPricing] = useState<Pricing | null>(null);
  const [usage, setUsage] = useState<UsageSummary | null>(null);
  const [error, setError] = useState<unknown>(null);
  /** Key id -> its name, to say which key read (the list is the account's; a key sees none). */
  const [keyNames, setKeyNames] = useState<Map<string, string>>(new Map());
  const ledger = useLedger(setError);

  useEffect(() => {
    refreshMe().catch(setError);
    api<Pricing>('/api/v1/pricing')
      .then((a) => setPricing(a.body))
      .catch(setError);
    api<UsageSummary>('/api/v1/me/usage/summary?days=30')
      .then((a) => setUsage(a.body))
      .catch(setError);
    ledger.first();
    api<{ data: Key[] }>('/api/v1/keys', { signInOn401: false })
      .then((a) => setKeyNames(new Map(a.body.data.map((k) => [k.id, k.name ?? k.prefix]))))
      .catch(() => undefined);
  }, []);

  if (!me) return <p class="muted">Loading…</p>;
  return (
    <>
      <h1>Wallet and usage</h1>
      {error !== null && <ProblemBox error={error} />}
      {me.account?.low_balance != null && toNumber(me.wallet.balance) < toNumber(me.account.low_balance) && (
        <p class="notice" role="status" data-testid="low-balance">
          Your balance ({me.wallet.balance} tokens) is below your low-balance notice ({me.account.low_balance}{' '}
          tokens). <a href="#buy">Buy tokens</a>
        </p>
      )}
      <div class="grid2">
        <WalletCard me={me} pricing={pricing} onError={setError} />
        <TopDatasets usage={usage} />
      </div>
      <BuyTokens />
      <UsageChart usage={usage} />

      <h2>Ledger</h2>
      <LedgerTable ledger={ledger.ledger} keyNames={keyNames} />
      <div class="row">
        <button type="button" class="secondary" disabled={ledger.pageIndex === 0} onClick={ledger.newer}>
          Newer entries
        </button>
        <span>Page {ledger.pageIndex + 1}</span>
        <button type="button" class="secondary" disabled={!ledger.hasOlder} onClick={ledger.older}>
          Older entries
        </button>
      </div>
    </>
  );
}
