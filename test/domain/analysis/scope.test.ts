/**
 * scope.ts: the assistant declines a forecast and a ranking across stocks before any planner sees the
 * question, with the documented messages; a question about the past is left to the planner.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { declineOf } from '../../../src/domain/analysis/scope.ts';

const FORECAST_MESSAGE =
  'The assistant charts and computes on past data only: it does not forecast or predict, and nothing was read or charged. Ask about what has happened instead, e.g. "AAPL close over the last 3 months", "30-day volatility of AAPL" or "max drawdown of AAPL since 2026-01-01".';
const RANKING_MESSAGE =
  'The assistant does not rank stocks against each other (which rose most, the best or worst performers): it charts and computes the series you name, and nothing was read or charged. Name the ones to compare instead, e.g. "percent change of AAPL, MSFT and NVDA over the last month" or "rebase AAPL and MSFT to 100 from 2026-10-15".';

describe('declineOf', () => {
  test('a forecast is declined with the past-data message', () => {
    for (const question of [
      'Forecast AAPL',
      'predictions for MSFT',
      'what will NVDA close at',
      'where is the 10-year going to be',
      'AAPL over the coming quarter',
      'MSFT next   month', // whitespace is folded before matching
      'Outlook for gold',
    ]) {
      assert.deepEqual(declineOf(question), { reason: 'forecast', message: FORECAST_MESSAGE }, question);
    }
  });

  test('a ranking across stocks is declined as unsupported', () => {
    for (const question of [
      'Which stocks rose the most in 2025',
      'what company had the lowest close',
      'top-performing stocks',
      'worst performers this year',
      'biggest movers since 2026-01-01',
    ]) {
      assert.deepEqual(declineOf(question), { reason: 'unsupported', message: RANKING_MESSAGE }, question);
    }
  });

  test('a forecast that also ranks is declined as a forecast (checked first)', () => {
    assert.equal(declineOf('which stock will rise most next week')?.reason, 'forecast');
  });

  test('questions about the past, and words that only contain the triggers, are not declined', () => {
    for (const question of [
      'AAPL close over the last 3 months',
      'max drawdown of AAPL since 2026-01-01',
      'willow prices', // "will" only as a whole word
    ]) {
      assert.equal(declineOf(question), null, question);
    }
    assert.equal(declineOf('top of the range for AAPL'), null);
    assert.equal(declineOf('the last year of MSFT'), null);
    assert.equal(declineOf(''), null);
  });
});
