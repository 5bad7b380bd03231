/** Wallet and usage: balance, tier and progress, package, the ledger paged, 30 days of usage charts. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Chart } from '../components/chart.tsx';
import { ProblemBox } from '../components/problem-box.tsx';
import { ScrollRegion } from '../components/scroll-region.tsx';
import { Link } from '../router.tsx';
import { refreshMe, useSession } from '../session.ts';
import type { Key, LedgerEntry, Pricing, UsageSummary } from '../types.ts';
import { BuyTokens } from './buy-tokens.tsx';

const PAGE = 20;

/** Exact decimal strings to a number only for drawing: charts and bars, never sums shown as money. */
const toNumber = (s: string) => Number(s);

export function WalletPage() {
  const { me } = useSession();
  const [pricing, setPricing] = useState<Pricing | null>(null);
  const [ledger, setLedger] = useState<LedgerEntry[]>([]);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [pageIndex, setPageIndex] = useState(0);
  const [next, setNext] = useState<string | null>(null);
  const [usage, setUsage] = useState<UsageSummary | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [threshold, setThreshold] = useState('');
  /** Key id -> its name, to say which key read (the list is the account's; a key sees none). */
  const [keyNames, setKeyNames] = useState<Map<string, string>>(new Map());

  const loadLedger = async (cursor: string | null, index: number) => {
    try {
      const q = new URLSearchParams({ limit: String(PAGE) });
      if (cursor) q.set('cursor', cursor);
      const { body } = await api<{ data: LedgerEntry[]; meta: { next_cursor: string | null } }>(
        `/api/v1/me/ledger?${q}`,
      );
      setLedger(body.data);
      setNext(body.meta.next_cursor);
      setPageIndex(index);
      const c = cursors.slice(0, index + 1);
      c[index + 1] = body.meta.next_cursor;
      setCursors(c);
    } catch (e) {
      setError(e);
    }
  };

  useEffect(() => {
    refreshMe().catch(setError);
    api<Pricing>('/api/v1/pricing')
      .then((a) => setPricing(a.body))
      .catch(setError);
    api<UsageSummary>('/api/v1/me/usage/summary?days=30')
      .then((a) => setUsage(a.body))
      .catch(setError);
    loadLedger(null, 0);
    api<{ data: Key[] }>('/api/v1/keys', { signInOn401: false })
      .then((a) => setKeyNames(new Map(a.body.data.map((k) => [k.id, k.name ?? k.prefix]))))
      .catch(() => undefined);
  }, []);

  const byChannel = useMemo(() => {
    if (!usage) return null;
    const xs = usage.days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const channels = ['terminal', 'rest', 'mcp'] as const;
    return {
      xs,
      series: channels.map((c) => ({
        label: c === 'rest' ? 'REST' : c === 'mcp' ? 'MCP' : 'Terminal',
        values: usage.days.map((d) => toNumber(d.tokens_burned[c])),
      })),
    };
  }, [usage]);

  if (!me) return <p class="muted">Loading…</p>;
  const tier = pricing?.loyalty_tiers.find((t) => t.level === me.tier.level);
  const nextTier = me.next_tier;
  const sku = pricing?.commercial_skus.find((s) => s.id === me.account?.package);
  const burned = toNumber(me.burned_this_month);
  const progressMax = nextTier?.min_tokens ?? 0;
  const topMax = Math.max(1, ...(usage?.top_datasets ?? []).map((d) => toNumber(d.tokens_burned)));

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
              <form
                class="row"
                onSubmit={async (e) => {
                  e.preventDefault();
                  try {
                    const tokens = threshold.trim() === '' ? null : threshold.trim();
                    await api('/api/v1/me/low-balance', { method: 'PUT', body: { tokens } });
                    setThreshold('');
                    await refreshMe();
                  } catch (caught) {
                    setError(caught);
                  }
                }}
              >
                <label>
                  {me.account?.low_balance ? `Below ${me.account.low_balance} tokens` : 'None'}; new threshold
                  (tokens, empty for none)
                  <input
                    inputMode="decimal"
                    value={threshold}
                    onInput={(e) => setThreshold((e.target as HTMLInputElement).value)}
                  />
                </label>
                <button type="submit" class="secondary">
                  Save
                </button>
              </form>
            </dd>
            <dt>Package</dt>
            <dd>
              {sku
                ? `${sku.name}: ${sku.monthly_credits ?? 0} tokens credited each month`
                : 'None (an operator assigns packages; see Packages)'}
            </dd>
          </dl>
          <h3>Next tier</h3>
          {nextTier ? (
            <>
              <label>
                Progress to level {nextTier.level}, {nextTier.name}: {me.burned_this_month} of{' '}
                {nextTier.min_tokens} tokens this month
                <progress max={progressMax} value={Math.min(burned, progressMax)} />
              </label>
              <p class="small">
                {nextTier.tokens_needed} tokens more this month bring {nextTier.discount_pct}% discount and{' '}
                {nextTier.rate_limit} requests per minute.
              </p>
            </>
          ) : (
            <p>You are at the top tier.</p>
          )}
        </section>
        <section class="card" aria-labelledby="top-title">
          <h2 id="top-title">Top datasets, last 30 days</h2>
          {usage && usage.top_datasets.length === 0 && <p class="muted">No reads yet.</p>}
          <div class="bars">
            {usage?.top_datasets.map((d) => (
              <div class="bar" key={d.dataset}>
                <span>{d.dataset}</span>
                <span aria-hidden="true">
                  <span style={{ width: `${(100 * toNumber(d.tokens_burned)) / topMax}%` }} />
                </span>
                <span class="num">
                  {d.tokens_burned} ({d.reads} reads)
                </span>
              </div>
            ))}
          </div>
        </section>
      </div>
      <BuyTokens />
      <h2>Tokens per day by channel, last 30 days</h2>
      {usage?.partial && <p class="notice">Too many reads to sum: the oldest days are incomplete.</p>}
      {byChannel && (
        <Chart label="Tokens burned per day by channel" {...byChannel} bars={false} height={220} />
      )}

      <h2>Ledger</h2>
      <ScrollRegion label="Ledger (scrollable)">
        <table class="cards">
          <caption class="visually-hidden">Ledger entries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time (UTC)</th>
              <th scope="col">Kind</th>
              <th scope="col" class="num">
                Amount
              </th>
              <th scope="col" class="num">
                Balance after
              </th>
              <th scope="col">Read</th>
              <th scope="col">Request id / memo</th>
            </tr>
          </thead>
          <tbody>
            {ledger.map((e) => (
              <tr key={e.id}>
                <td class="card-title">{e.created_at.replace('T', ' ').replace(/\.\d+Z$/, '')}</td>
                <td data-label="Kind">{e.kind}</td>
                <td class="num" data-label="Amount" data-testid="ledger-amount">
                  {e.amount}
                </td>
                <td class="num" data-label="Balance after">
                  {e.balance_after}
                </td>
                <td class="small" data-label="Read" data-testid="ledger-read">
                  {e.read && (
                    <>
                      <Link href={`/dataset/${e.read.dataset}`}>{e.read.dataset}</Link> · {e.read.channel} ·{' '}
                      {e.read.key_id === null
                        ? 'session'
                        : `key ${keyNames.get(e.read.key_id) ?? e.read.key_id}`}
                    </>
                  )}
                </td>
                <td class="small" data-label="Request id">
                  <code>{e.request_id ?? ''}</code> {e.memo ?? ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      <div class="row">
        <button
          type="button"
          class="secondary"
          disabled={pageIndex === 0}
          onClick={() => loadLedger(cursors[pageIndex - 1] ?? null, pageIndex - 1)}
        >
          Newer entries
        </button>
        <span>Page {pageIndex + 1}</span>
        <button
          type="button"
          class="secondary"
          disabled={!next}
          onClick={() => loadLedger(next, pageIndex + 1)}
        >
          Older entries
        </button>
      </div>
    </>
  );
}
