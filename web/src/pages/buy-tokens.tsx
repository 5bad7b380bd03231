/**
 * The Wallet's buy section (#buy): token packs paid on Stripe's page when the service takes cards,
 * else requested from an operator; the account's purchases (receipts) and requests with their state.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ProblemBox } from '../components/problem-box.tsx';
import type { Purchase, TokenPack, TokenRequest } from '../types.ts';

export function BuyTokens() {
  const [packs, setPacks] = useState<TokenPack[]>([]);
  const [cards, setCards] = useState(false);
  const [purchases, setPurchases] = useState<Purchase[]>([]);
  const [requests, setRequests] = useState<TokenRequest[]>([]);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);

  const load = async () => {
    try {
      const offer = await api<{ data: TokenPack[]; meta: { card_payments: boolean } }>(
        '/api/v1/billing/token-packs',
      );
      setPacks(offer.body.data);
      setCards(offer.body.meta.card_payments);
      setPurchases((await api<{ data: Purchase[] }>('/api/v1/me/purchases')).body.data);
      setRequests((await api<{ data: TokenRequest[] }>('/api/v1/me/token-requests')).body.data);
    } catch (e) {
      setError(e);
    }
  };

  useEffect(() => {
    load();
    const back = new URLSearchParams(location.search).get('purchase');
    if (back === 'done') setDone('Payment received: the tokens are credited as soon as Stripe confirms it.');
    if (back === 'cancelled') setDone('Payment cancelled: nothing was charged.');
  }, []);

  const buy = async (pack: TokenPack) => {
    setBusy(pack.id);
    setError(null);
    try {
      const { body } = await api<{ url: string }>(`/api/v1/billing/token-packs/${pack.id}/checkout`, {
        method: 'POST',
      });
      location.assign(body.url);
    } catch (e) {
      setError(e);
      setBusy(null);
    }
  };

  const request = async (pack: TokenPack) => {
    setBusy(pack.id);
    setError(null);
    try {
      await api('/api/v1/billing/token-requests', {
        method: 'POST',
        body: { pack: pack.id, ...(note.trim() ? { note: note.trim() } : {}) },
      });
      setNote('');
      setDone(
        `Requested ${pack.tokens.toLocaleString('en')} tokens: an operator credits them or says why not.`,
      );
      await load();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };

  return (
    <section class="card" id="buy" aria-labelledby="buy-title">
      <h2 id="buy-title">Buy tokens</h2>
      {done && (
        <p class="notice" role="status">
          {done}
        </p>
      )}
      {error !== null && <ProblemBox error={error} />}
      {!cards && (
        <>
          <p class="small">
            This service does not take cards: request a pack and an operator credits it (or tells you why
            not).
          </p>
          <label>
            Note for the operator (optional)
            <input
              value={note}
              maxLength={500}
              onInput={(e) => setNote((e.target as HTMLInputElement).value)}
            />
          </label>
        </>
      )}
      <ul class="packs">
        {packs.map((pack) => (
          <li key={pack.id}>
            <span class="num">{pack.tokens.toLocaleString('en')} tokens</span>{' '}
            <span>{pack.price_eur} EUR</span>{' '}
            <button
              type="button"
              disabled={busy !== null}
              onClick={() => (cards ? buy(pack) : request(pack))}
            >
              {cards
                ? `Buy ${pack.tokens.toLocaleString('en')} tokens`
                : `Request ${pack.tokens.toLocaleString('en')} tokens`}
            </button>
          </li>
        ))}
      </ul>
      {purchases.length > 0 && (
        <>
          <h3>Purchases</h3>
          <ul data-testid="purchases">
            {purchases.map((p) => (
              <li key={p.payment_id}>
                {p.purchased_at.slice(0, 10)}: {p.tokens.toLocaleString('en')} tokens for {p.amount}{' '}
                {p.currency.toUpperCase()}
                {p.refunded_tokens > 0 && <> ({p.refunded_tokens} refunded)</>}{' '}
                {p.receipt_url && <a href={p.receipt_url}>receipt</a>}
              </li>
            ))}
          </ul>
        </>
      )}
      {requests.length > 0 && (
        <>
          <h3>Requests</h3>
          <ul data-testid="token-requests">
            {requests.map((r) => (
              <li key={r.id}>
                {r.requested_at.slice(0, 10)}: {r.tokens.toLocaleString('en')} tokens,{' '}
                <strong>{r.status}</strong>
                {r.reason && <>: {r.reason}</>}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
