/** What a dataset is, before any read: title and access, description, source, coverage and fields. */
import { Coverage } from '../../components/coverage.tsx';
import type { Dataset, Estimate } from '../../types.ts';
import { FieldsTable } from './fields-table.tsx';

export interface DatasetHeadingProps {
  ds: Dataset;
  /** The price for this credential now: a read that burns nothing is "free for you". */
  estimate: Estimate | null;
}

export function DatasetHeading({ ds, estimate }: DatasetHeadingProps) {
  return (
    <>
      <h1>
        {ds.title} <code class="muted small">{ds.key}</code>{' '}
        {estimate && Number(estimate.tokens_burned) === 0 ? (
          <span class="badge p0">free for you</span>
        ) : ds.p0 ? (
          <span class="badge" title="Free for public-test keys; a wallet pays the price shown">
            open data (P0)
          </span>
        ) : (
          <span class="badge">paid</span>
        )}
      </h1>
      <p>{ds.description}</p>
      <p class="muted small">
        Source: {ds.source} · {ds.frequency} · list price {ds.list_cost} tokens per read
        {ds.aliases.length > 0 && ` · also as ${ds.aliases.join(', ')}`}
      </p>
      <Coverage ds={ds} />
      <FieldsTable ds={ds} />
    </>
  );
}
