/**
 * What the assistant declines before any planner sees the question (docs/analyze.md#what-it-declines):
 * a forecast, and a ranking across stocks it was not given. Declined questions read nothing, charge
 * nothing and do not count as a run of the day, whichever planner answers.
 */

export type DeclineReason = 'forecast' | 'unsupported';

export interface Declined {
  reason: DeclineReason;
  message: string;
}

/** Words that ask about the future: "forecast", "predict", "what will … close", "next week", "tomorrow". */
const FORECAST =
  /\b(forecast\w*|predict\w*|projections?|prognos\w*|outlook)\b|\bwill\b.*\b(be|close|closes|end|trade|reach|hit|rise|fall|go|move|do)\b|\bgoing to (be|close|rise|fall|go|hit)\b|\b(next|coming) (day|week|month|quarter|year)s?\b|\btomorrow\b/;

/** Rankings over a universe: "which Dow stock rose most", "top performing stocks", "biggest losers". */
const RANKING =
  /\b(which|what)\b.*\b(stocks?|shares?|compan(y|ies)|symbols?|tickers?|names?)\b.*\b(most|best|worst|least|highest|lowest|biggest|top)\b|\b(top|best|worst)[- ](performing|performers?|gainers?|losers?|stocks?)\b|\b(biggest|top) (gainers?|losers?|movers?)\b/;

const PAST_ONLY =
  'The assistant charts and computes on past data only: it does not forecast or predict, and nothing was read or charged.';

/** The decline for a question the assistant does not answer, or null for one a planner should try. */
export function declineOf(question: string): Declined | null {
  const text = ` ${question.toLowerCase().replace(/\s+/g, ' ')} `;
  if (FORECAST.test(text)) {
    return {
      reason: 'forecast',
      message: `${PAST_ONLY} Ask about what has happened instead, e.g. "AAPL close over the last 3 months", "30-day volatility of AAPL" or "max drawdown of AAPL since 2026-01-01".`,
    };
  }
  if (RANKING.test(text)) {
    return {
      reason: 'unsupported',
      message:
        'The assistant does not rank stocks against each other (which rose most, the best or worst performers): it charts and computes the series you name, and nothing was read or charged. Name the ones to compare instead, e.g. "percent change of AAPL, MSFT and NVDA over the last month" or "rebase AAPL and MSFT to 100 from 2026-10-15".',
    };
  }
  return null;
}
