/**
 * planner-intents.ts: the built-in planner's question forms as a table, tried in order: each intent's
 * pattern, the steps and outputs it plans, and the questions it asks back.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Clarify,
  INTENTS,
  type IntentContext,
  planIntent,
} from '../../../src/domain/analysis/planner-intents.ts';
import type { SeriesSpec } from '../../../src/domain/analysis/spec.ts';

const stock = (symbol: string): SeriesSpec => ({
  id: symbol.toLowerCase(),
  dataset: 'stocks/prices',
  entity: { symbol },
  field: 'close',
  label: `${symbol} close`,
});

function context(rest: string, symbols: string[], extra: Partial<IntentContext> = {}): IntentContext {
  return {
    rest: ` ${rest} `,
    range: {},
    window: null,
    series: symbols.map(stock),
    what: 'Reads them',
    someSymbols: () => [{ label: 'MSFT', value: 'MSFT' }],
    ...extra,
  };
}

describe('the intents of the built-in planner', () => {
  test('the table lists the question forms in the order they are tried', () => {
    assert.deepEqual(
      INTENTS.map((i) => i.name),
      [
        'correlation',
        'beta',
        'spread',
        'ratio',
        'volatility',
        'drawdown',
        'rebase',
        'z-score',
        'moving average',
        'year over year',
        'resample',
        'returns',
      ],
    );
  });

  test('a correlation takes daily percent changes of every series and correlates them', () => {
    assert.deepEqual(planIntent(context('correlation of aapl and msft', ['AAPL', 'MSFT'])), {
      steps: [
        { op: 'pct_change', input: 'aapl', as: 'aapl_ret' },
        { op: 'pct_change', input: 'msft', as: 'msft_ret' },
        { op: 'correlation', inputs: ['aapl_ret', 'msft_ret'], as: 'correlation' },
      ],
      outputs: [{ kind: 'table', values: ['correlation'], title: 'Correlation of daily percent changes' }],
      explanation: 'Reads them, takes daily percent changes and correlates them on their common dates.',
    });
  });

  test('a correlation of one series is asked back, offering symbols', () => {
    assert.throws(
      () => planIntent(context('correlation of aapl', ['AAPL'])),
      (error: Clarify) => {
        assert.ok(error instanceof Clarify);
        assert.equal(
          error.message,
          'A correlation needs two or more series; I found only AAPL. Name another, e.g. "correlation of AAPL and MSFT".',
        );
        assert.deepEqual(error.candidates, [{ label: 'MSFT', value: 'MSFT' }]);
        return true;
      },
    );
  });

  test('a beta regresses the first series on the second', () => {
    const plan = planIntent(context('beta of aapl against msft', ['AAPL', 'MSFT']));
    assert.deepEqual(plan.steps.at(-1), { op: 'beta', y: 'aapl_ret', x: 'msft_ret', as: 'beta' });
    assert.deepEqual(plan.outputs, [
      { kind: 'table', values: ['beta'], title: 'Beta of AAPL close on MSFT close' },
    ]);
  });

  test('a spread is of exactly two series; "minus" wins over "ratio" by its place in the table', () => {
    const plan = planIntent(context('aapl minus msft ratio', ['AAPL', 'MSFT']));
    assert.deepEqual(plan.steps, [{ op: 'spread', inputs: ['aapl', 'msft'], as: 'spread' }]);
    assert.deepEqual(plan.outputs, [
      { kind: 'line', values: ['spread'], title: 'AAPL close minus MSFT close' },
      { kind: 'stats', values: ['spread'] },
    ]);
    assert.throws(() => planIntent(context('ratio of aapl, msft and nvda', ['AAPL', 'MSFT', 'NVDA'])), {
      message: 'A ratio is of exactly two series; I found 3: AAPL close and MSFT close and NVDA close.',
    });
  });

  test('volatility is over 30 observations unless the question names a window', () => {
    const plan = planIntent(context('volatility of aapl', ['AAPL'], { window: 10 }));
    assert.deepEqual(plan.steps, [
      { op: 'log_returns', input: 'aapl', as: 'aapl_lr' },
      { op: 'rolling_std', input: 'aapl_lr', window: 10, as: 'aapl_vol' },
    ]);
    assert.equal(
      planIntent(context('vol of aapl', ['AAPL'])).explanation,
      'Reads them, takes daily log returns and their standard deviation over 30 observations.',
    );
  });

  test('rebase to 100 takes the range start as its base date', () => {
    const plan = planIntent(context('rebase aapl to 100', ['AAPL'], { range: { from: '2026-01-02' } }));
    assert.deepEqual(plan.steps, [{ op: 'rebase', input: 'aapl', as: 'aapl_100', base_date: '2026-01-02' }]);
    assert.equal(plan.outputs[0]?.title, 'Rebased to 100 on 2026-01-02');
  });

  test('a moving average charts each series beside its mean over 20 observations', () => {
    const plan = planIntent(context('moving average of aapl and msft', ['AAPL', 'MSFT']));
    assert.deepEqual(plan.outputs, [
      {
        kind: 'line',
        values: ['aapl', 'aapl_ma', 'msft', 'msft_ma'],
        title: '20-observation moving average',
      },
    ]);
  });

  test('a resample reads its frequency and how from the question', () => {
    const plan = planIntent(context('monthly average of aapl', ['AAPL']));
    assert.deepEqual(plan.steps, [
      { op: 'resample', input: 'aapl', frequency: 'month', how: 'mean', as: 'aapl_month' },
    ]);
    assert.deepEqual(plan.outputs, [
      { kind: 'bar', values: ['aapl_month'], title: 'monthly mean' },
      { kind: 'table', values: ['aapl_month'] },
    ]);
    assert.equal(planIntent(context('weekly aapl', ['AAPL'])).steps[0]?.op, 'resample');
  });

  test('a question that matches no intent is charted with summary statistics', () => {
    assert.deepEqual(planIntent(context('aapl and msft closes', ['AAPL', 'MSFT'])), {
      steps: [],
      outputs: [
        { kind: 'line', values: ['aapl', 'msft'] },
        { kind: 'stats', values: ['aapl', 'msft'] },
      ],
      explanation: 'Reads them, charted with summary statistics.',
    });
  });
});
