/** The four cost headers of a read, as the service sent them. */
import type { CostHeaders } from '../api.ts';

export function CostPanel({ cost, label }: { cost: CostHeaders; label: string }) {
  return (
    <section aria-label={label}>
      <dl class="costs">
        <div>
          <dt>Charged (X-Token-Cost)</dt>
          <dd data-testid="cost-charged">{cost.tokenCost}</dd>
        </div>
        <div>
          <dt>Burned (X-Request-Tokens)</dt>
          <dd data-testid="cost-burned">{cost.tokensBurned}</dd>
        </div>
        <div>
          <dt>EUR (X-Request-Cost-EUR)</dt>
          <dd data-testid="cost-eur">{cost.costEur}</dd>
        </div>
        <div>
          <dt>Remaining (X-Credits-Remaining)</dt>
          <dd data-testid="cost-remaining">{cost.creditsRemaining}</dd>
        </div>
      </dl>
    </section>
  );
}
