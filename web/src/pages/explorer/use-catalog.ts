/** The explorer's data: the catalog with your prices, and the service's ranking of the search words. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { CatalogEntry, Price } from '../../types.ts';
import type { Line, Ranked } from './catalog-lines.ts';

export function useCatalog(onError: (e: unknown) => void) {
  const [lines, setLines] = useState<Line[] | null>(null);
  const [tier, setTier] = useState<string>('');
  useEffect(() => {
    Promise.all([
      api<{ data: CatalogEntry[] }>('/api/v1/catalog'),
      api<{ data: Price[]; meta: { tier: { name: string; discount_pct: number } } }>('/api/v1/me/prices'),
    ])
      .then(([catalog, prices]) => {
        const byKey = new Map(prices.body.data.map((p) => [p.key, p]));
        setLines(catalog.body.data.map((e) => ({ ...e, price: byKey.get(e.key) })));
        const t = prices.body.meta.tier;
        setTier(`${t.name}, ${t.discount_pct}% discount`);
      })
      .catch(onError);
  }, []);
  return { lines, tier };
}

export function useRanking(q: string, onError: (e: unknown) => void): Ranked | null {
  const [ranked, setRanked] = useState<Ranked | null>(null);
  useEffect(() => {
    const words = q.trim();
    if (words === '') {
      setRanked(null);
      return;
    }
    // The catalog search runs on the service (it knows which datasets hold AAPL); typing settles first.
    const timer = setTimeout(() => {
      api<{ data: CatalogEntry[] }>(`/api/v1/catalog?q=${encodeURIComponent(words)}`)
        .then((a) => setRanked({ q: words, keys: a.body.data.map((e) => e.key) }))
        .catch(onError);
    }, 200);
    return () => clearTimeout(timer);
  }, [q]);
  return ranked;
}
