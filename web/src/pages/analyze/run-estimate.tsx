/** The estimate of a run: every read at the user's price now, the total, fair use, and a confirmation. */
import { ScrollRegion } from '../../components/scroll-region.tsx';
import type { AnalysisEstimate } from '../../types.ts';

export interface RunEstimateProps {
  estimate: AnalysisEstimate;
  /** Whether the user has ticked that a run asking for confirmation may spend the estimate. */
  confirmed: boolean;
  onConfirm: (confirmed: boolean) => void;
}

export function RunEstimate({ estimate, confirmed, onConfirm }: RunEstimateProps) {
  return (
    <section aria-label="Estimate">
      <ScrollRegion label="Reads of the run">
        <table>
          <caption>Every read the run will make, at your price now</caption>
          <thead>
            <tr>
              <th scope="col">series</th>
              <th scope="col">dataset</th>
              <th scope="col">field</th>
              <th scope="col">tokens</th>
            </tr>
          </thead>
          <tbody>
            {estimate.reads.map((r) => (
              <tr key={r.series}>
                <td>{r.series}</td>
                <td>{r.dataset}</td>
                <td>{r.field}</td>
                <td class="num">{r.tokens_burned}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      <p>
        Estimated cost <strong data-testid="estimate-total">{estimate.tokens_burned}</strong> tokens (
        {estimate.cost_eur} EUR); balance after {estimate.balance_after}. Runs today{' '}
        {estimate.fair_use.runs_today} of {estimate.fair_use.runs_per_day}.
        {estimate.reuse && ' A rerun now reuses the result already paid for.'}
        {estimate.would_refuse && <strong> A run would be refused: {estimate.would_refuse}.</strong>}
      </p>
      {estimate.confirm_required && (
        <label class="inline">
          <input
            type="checkbox"
            checked={confirmed}
            onChange={(e) => onConfirm((e.target as HTMLInputElement).checked)}
          />
          Spend {estimate.tokens_burned} tokens on this run
        </label>
      )}
    </section>
  );
}
