/**
 * The front page for a visitor who is not signed in: what the service sells and what a read costs, what
 * is free, a preview of the catalog, and where the manual and the API reference are. Everything on it
 * comes from the public API, so the figures are the ones the service charges.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ProblemBox } from '../components/problem-box.tsx';
import { Link } from '../router.tsx';
import type { CatalogEntry, Pricing, TokenPack } from '../types.ts';

interface PublicTest {
  window_days: number;
  key_ttl_days: number;
  free_domains?: string[];
}

/** A handful of well-known datasets to show first, when the catalog has them. */
const FEATURED = [
  'equities/stock-prices',
  'rates/treasury-yield-series',
  'rates/nyfed-sofr-series',
  'macro/fred-series',
  'cot/legacy-futures',
  'sec/rss-entries',
];

export function LandingPage() {
  const [catalog, setCatalog] = useState<CatalogEntry[] | null>(null);
  const [pricing, setPricing] = useState<Pricing | null>(null);
  const [publicTest, setPublicTest] = useState<PublicTest | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    Promise.all([
      api<{ data: CatalogEntry[] }>('/api/v1/catalog', { signInOn401: false }),
      api<Pricing>('/api/v1/pricing', { signInOn401: false }),
      api<PublicTest>('/api/v1/auth/public-test', { signInOn401: false }),
    ])
      .then(([c, p, t]) => {
        setCatalog(c.body.data);
        setPricing(p.body);
        setPublicTest(t.body);
      })
      .catch(setError);
  }, []);

  const domains = useMemo(() => {
    const counts = new Map<string, number>();
    for (const e of catalog ?? []) counts.set(e.domain, (counts.get(e.domain) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1]);
  }, [catalog]);
  const preview = useMemo(() => {
    const all = catalog ?? [];
    const featured = FEATURED.flatMap((key) => all.filter((e) => e.key === key));
    return featured.length > 0 ? featured : all.slice(0, 6);
  }, [catalog]);
  const costs = [...new Set((catalog ?? []).map((e) => e.list_cost))].sort((a, b) => a - b);
  const eur = pricing?.eur_per_token ?? 0.1;
  const packs = (pricing?.token_packs ?? []) as TokenPack[];

  return (
    <div class="landing">
      <h1>Market, economic and open data, paid by the read</h1>
      <p class="lead">
        Prices, rates, positioning, filings and public statistics as clean datasets, over a REST API, an MCP
        endpoint for AI agents and this web Terminal. You buy tokens once; every read takes a few of them,
        whatever its page size, and says what it cost.
      </p>
      <p class="row">
        <Link class="button" href="/sign-in?mode=register">
          Try it free
        </Link>
        <Link class="button secondary-link" href="/sign-in">
          Sign in
        </Link>
      </p>
      {error !== null && <ProblemBox error={error} />}

      <section aria-labelledby="prices-title" class="card">
        <h2 id="prices-title">What a read costs</h2>
        <dl class="facts">
          <dt>A token</dt>
          <dd>{eur.toFixed(2)} EUR</dd>
          <dt>A read</dt>
          <dd>
            {costs.length > 0 ? `${costs.join(', ')} tokens` : '…'} by dataset: one page of up to 1,000 rows,
            the price shown before you read
          </dd>
          <dt>From the Terminal</dt>
          <dd>+{pricing?.terminal_surcharge_percent ?? 35}% (API keys and agents pay the list price)</dd>
          <dt>Loyalty</dt>
          <dd>the more you read in a month, the larger your discount</dd>
          {packs.length > 0 && (
            <>
              <dt>Token packs</dt>
              <dd>
                {packs.map((p) => `${p.tokens.toLocaleString('en')} for ${p.price_eur} EUR`).join(' · ')}
              </dd>
            </>
          )}
        </dl>
      </section>

      <section aria-labelledby="free-title" class="card">
        <h2 id="free-title">Free to try</h2>
        <ul>
          <li>
            <strong>Public test</strong>: register with an email and get a key that reads the open-data (P0)
            datasets at no cost for {publicTest?.window_days ?? 90} days
            {publicTest?.free_domains ? ` (${publicTest.free_domains.join(', ')})` : ''}, plus a token grant
            for the rest.
          </li>
          <li>
            <strong>Sandbox key</strong>: <code>POST /api/v1/auth/sandbox</code> gives a 72-hour key for the
            open data, no sign-up.
          </li>
        </ul>
      </section>

      <section aria-labelledby="catalog-title">
        <h2 id="catalog-title">
          The catalog: {catalog ? `${catalog.length} datasets in ${domains.length} domains` : '…'}
        </h2>
        <p class="muted small">{domains.map(([d, n]) => `${d} (${n})`).join(' · ')}</p>
        <table class="cards">
          <caption class="visually-hidden">Some of the datasets and their list price per read</caption>
          <thead>
            <tr>
              <th scope="col">Dataset</th>
              <th scope="col">Source</th>
              <th scope="col" class="num">
                Tokens a read
              </th>
            </tr>
          </thead>
          <tbody>
            {preview.map((e) => (
              <tr key={e.key}>
                <td class="card-title">
                  <div>
                    <code>{e.key}</code>{' '}
                    {e.p0 && (
                      <span class="badge p0" title="Free for public-test keys">
                        open data (P0)
                      </span>
                    )}
                    <div class="muted small">{e.title}</div>
                  </div>
                </td>
                <td data-label="Source" class="small">
                  {e.source}
                </td>
                <td data-label="Tokens a read" class="num">
                  {e.list_cost}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <section aria-labelledby="docs-title">
        <h2 id="docs-title">Read more</h2>
        <ul>
          <li>
            <a href="/manual/">The manual</a>: credentials, reads, prices, errors, MCP.
          </li>
          <li>
            <a href="/docs">API reference</a> (and the <a href="/api/v1/openapi.json">OpenAPI document</a>).
          </li>
          <li>
            <a href="/manual/agents">Connecting an AI agent</a>: Claude, ChatGPT and Cursor sign in; no key to
            copy.
          </li>
        </ul>
      </section>
    </div>
  );
}
