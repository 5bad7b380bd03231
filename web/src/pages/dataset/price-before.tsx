/** The price of the read before it is made, for this credential now, and whether it would be refused. */
import { ApiError } from '../../api.ts';
import type { Estimate } from '../../types.ts';

export interface PriceBeforeProps {
  estimate: Estimate | null;
  /** Why no price could be had now (null: none asked for, or the service has no estimate route). */
  error: unknown;
}

export function PriceBefore({ estimate, error }: PriceBeforeProps) {
  return (
    <section aria-label="Price before reading" class="row">
      {estimate ? (
        <p data-testid="price-before">
          This read costs <strong data-testid="estimate-cost">{estimate.token_cost}</strong> tokens
          {estimate.tokens_burned !== estimate.token_cost && (
            <> (burns {estimate.tokens_burned}: public-test reads of free data burn nothing)</>
          )}{' '}
          ({estimate.cost_eur} EUR); balance {estimate.balance} → {estimate.balance_after}.
          {estimate.would_refuse && (
            <strong class="badge no"> would be refused: {estimate.would_refuse}</strong>
          )}
          {estimate.would_refuse === 'insufficient_tokens' && (
            <>
              {' '}
              <a href="/terminal/wallet#buy" data-testid="buy-link">
                Buy tokens
              </a>{' '}
              to read it.
            </>
          )}
        </p>
      ) : (
        <p class="muted">No price available before reading.</p>
      )}
      {error !== null && (
        <p class="muted">
          No price now: {error instanceof ApiError ? `${error.status} ${error.problem.title}` : String(error)}
        </p>
      )}
    </section>
  );
}
