/** The datasets that burned the most in the last 30 days, as bars. */
import type { UsageSummary } from '../../types.ts';
import { toNumber } from './to-number.ts';

export interface TopDatasetsProps {
  usage: UsageSummary | null;
}

export function TopDatasets({ usage }: TopDatasetsProps) {
  const topMax = Math.max(1, ...(usage?.top_datasets ?? []).map((d) => toNumber(d.tokens_burned)));
  return (
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
  );
}
