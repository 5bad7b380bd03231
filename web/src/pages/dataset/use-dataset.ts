/** A dataset page's data before any read: the dataset with its entities, and the price of a read now. */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import type { Dataset, Estimate } from '../../types.ts';
import { keyOptionOf, type ReadForm } from './read-query.ts';

export interface LoadedDataset {
  ds: Dataset | null;
  /** Entities of the dataset's first entity field, offered in the read form. */
  suggestions: string[];
  loadError: unknown;
}

export function useDataset(dsKey: string): LoadedDataset {
  const [ds, setDs] = useState<Dataset | null>(null);
  const [suggestions, setSuggestions] = useState<string[]>([]);
  const [loadError, setLoadError] = useState<unknown>(null);
  useEffect(() => {
    const [domain, name] = dsKey.split('/') as [string, string];
    const path = `/api/v1/catalog/${encodeURIComponent(domain)}/${encodeURIComponent(name)}`;
    setDs(null);
    Promise.all([api<Dataset>(path), api<{ entities: Record<string, string[]> }>(`${path}/entities`)])
      .then(([d, e]) => {
        setDs(d.body);
        setSuggestions(e.body.entities[d.body.entity_fields[0] ?? ''] ?? []);
      })
      .catch(setLoadError);
  }, [dsKey]);
  return { ds, suggestions, loadError };
}

export interface PriceNow {
  estimate: Estimate | null;
  estimateError: unknown;
  /** Asks the price again (after a read: the balance has moved). */
  priceNow: () => Promise<void>;
}

/** The price before the read, for this credential now; without the estimate route, no price is shown. */
export function useEstimate(ds: Dataset | null, form: ReadForm): PriceNow {
  const [estimate, setEstimate] = useState<Estimate | null>(null);
  const [estimateError, setEstimateError] = useState<unknown>(null);
  const priceNow = async () => {
    if (!ds) return;
    if (form.readAs === 'key' && !form.key.trim()) return setEstimate(null);
    try {
      const { body } = await api<Estimate>(
        `/api/v1/estimate?dataset=${encodeURIComponent(ds.key)}`,
        keyOptionOf(form),
      );
      setEstimate(body);
      setEstimateError(null);
    } catch (e) {
      setEstimate(null);
      setEstimateError(e instanceof ApiError && e.status === 404 && e.code === 'not_found' ? null : e);
    }
  };
  useEffect(() => {
    priceNow();
  }, [ds, form.readAs, form.key]);
  return { estimate, estimateError, priceNow };
}
