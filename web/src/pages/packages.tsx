/** Packages: the four shapes from the pricing records, the user's own, and what checkout answers. */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { ProblemBox } from '../components/problem-box.tsx';
import { useSession } from '../session.ts';
import type { Pricing } from '../types.ts';

export function PackagesPage() {
  const { me } = useSession();
  const [pricing, setPricing] = useState<Pricing | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [checkout, setCheckout] = useState<{ sku: string; error: unknown } | null>(null);

  useEffect(() => {
    api<Pricing>('/api/v1/pricing')
      .then((a) => setPricing(a.body))
      .catch(setError);
  }, []);

  const tryCheckout = async (sku: string) => {
    try {
      await api('/api/v1/billing/checkout', { method: 'POST', body: { package: sku } });
      setCheckout({ sku, error: null });
    } catch (e) {
      setCheckout({ sku, error: e });
    }
  };

  const own = me?.account?.package ?? null;
  return (
    <>
      <h1>Packages</h1>
      {error !== null && <ProblemBox error={error} />}
      <p>
        Your package:{' '}
        <strong data-testid="own-package">
          {own ? (pricing?.commercial_skus.find((s) => s.id === own)?.name ?? own) : 'none'}
        </strong>
        . Billing is prepaid tokens; packages are assigned by an operator.
      </p>
      <div class="grid2">
        {pricing?.commercial_skus.map((s) => (
          <section class="card" key={s.id} aria-labelledby={`sku-${s.id}`}>
            <h2 id={`sku-${s.id}`}>
              {s.name} {own === s.id && <span class="badge p0">yours</span>}
            </h2>
            <dl class="facts">
              <dt>Monthly credits</dt>
              <dd>{s.monthly_credits === null ? 'by agreement' : `${s.monthly_credits} tokens`}</dd>
              <dt>Rate limit</dt>
              <dd>{s.rate_limit_per_minute ?? '—'} per minute</dd>
              <dt>MCP</dt>
              <dd>{s.mcp_included ? 'included' : 'no'}</dd>
              <dt>Bulk export</dt>
              <dd>{s.bulk_export ? 'yes' : 'no'}</dd>
              <dt>Analysis assistant</dt>
              <dd>{s.analysis_assistant ? 'yes (/analyze)' : 'no'}</dd>
            </dl>
            {s.notes && <p class="small muted">{Array.isArray(s.notes) ? s.notes.join(' ') : s.notes}</p>}
            <button type="button" onClick={() => tryCheckout(s.id)}>
              Check out {s.name}
            </button>
            {checkout?.sku === s.id &&
              (checkout.error instanceof ApiError && checkout.error.code === 'not_live' ? (
                <div class="notice" role="status">
                  <p>
                    <strong>
                      {checkout.error.status} {checkout.error.problem.title}
                    </strong>
                  </p>
                  <p>{checkout.error.problem.detail}</p>
                </div>
              ) : checkout.error ? (
                <ProblemBox error={checkout.error} />
              ) : (
                <p role="status">Checkout answered.</p>
              ))}
          </section>
        ))}
      </div>
    </>
  );
}
