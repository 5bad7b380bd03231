/**
 * The Workbench's transforms against values worked out by hand on small series, and their edge cases:
 * gaps, unequal calendars, windows longer than the data, division by zero.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  align,
  correlationMatrix,
  cotNet,
  curveOn,
  difference,
  logReturns,
  maxDrawdown,
  olsBeta,
  pctChange,
  percentileRank,
  periodStart,
  ratio,
  rebase,
  resample,
  rollingMean,
  rollingStd,
  rollingZScore,
  type Series,
  spread,
  summarize,
  TransformError,
  twosTens,
  yoy,
} from '../../../src/domain/analysis/transforms.ts';

const days = (n: number, from = '2024-01-01'): string[] =>
  Array.from({ length: n }, (_, i) =>
    new Date(Date.parse(`${from}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10),
  );
const s = (values: (number | null)[], dates = days(values.length)): Series => ({ dates, values });
/** Equal within 1e-9 (relative), nulls equal to nulls. */
function near(actual: readonly (number | null)[], expected: readonly (number | null)[]): void {
  assert.equal(actual.length, expected.length, `${actual} vs ${expected}`);
  actual.forEach((a, i) => {
    const e = expected[i];
    if (e === null || e === undefined) {
      assert.equal(a, null, `index ${i}: ${a} should be null`);
      return;
    }
    assert.ok(a !== null && Math.abs(a - e) <= 1e-9 * Math.max(1, Math.abs(e)), `index ${i}: ${a} vs ${e}`);
  });
}

describe('changes', () => {
  test('percent change: (x_t / x_{t-1} - 1) * 100, the first observation has none', () => {
    near(pctChange(s([100, 110, 99, 99])).values, [null, 10, -10, 0]);
  });
  test('percent change over 2 observations', () => {
    near(pctChange(s([100, 110, 120, 99]), 2).values, [null, null, 20, -10]);
  });
  test('a gap makes its own change and the next one null; never bridged', () => {
    near(pctChange(s([100, null, 120, 132])).values, [null, null, null, 10]);
  });
  test('a change from 0 is null, not Infinity', () => {
    near(pctChange(s([0, 5, 10])).values, [null, null, 100]);
  });
  test('log returns: ln(x_t / x_{t-1}); null for non-positive levels', () => {
    near(logReturns(s([100, 200, 100, -1, 5])).values, [null, Math.log(2), -Math.log(2), null, null]);
  });
  test('difference: x_t - x_{t-p}', () => {
    near(difference(s([3, 5, 4, null, 10])).values, [null, 2, -1, null, null]);
    near(difference(s([3, 5, 4, 10]), 3).values, [null, null, null, 7]);
  });
  test('a lag must be a whole number >= 1', () => {
    assert.throws(() => pctChange(s([1, 2]), 0), TransformError);
  });
});

describe('year over year, by date', () => {
  test('against the same day a year earlier', () => {
    const out = yoy(s([100, 110], ['2023-03-15', '2024-03-15']));
    near(out.values, [null, 10]);
  });
  test('a weekend a year ago: the last observation on or before, within 7 days', () => {
    // 2023-03-18 was a Saturday; the Friday 2023-03-17 counts.
    near(yoy(s([50, 60], ['2023-03-17', '2024-03-18'])).values, [null, 20]);
  });
  test('nothing within 7 days before a year ago: null (unequal calendars are not shifted)', () => {
    near(yoy(s([50, 60], ['2023-03-01', '2024-03-18'])).values, [null, null]);
  });
  test('29 February looks back to 28 February', () => {
    near(yoy(s([80, 100], ['2023-02-28', '2024-02-29'])).values, [null, 25]);
  });
  test('monthly data: the same month a year earlier', () => {
    const dates = ['2023-01-01', '2023-02-01', '2024-01-01', '2024-02-01'];
    near(yoy(s([200, 100, 210, 90], dates)).values, [null, null, 5, -10]);
  });
});

describe('rebase', () => {
  test('to 100 at the first value', () => {
    near(rebase(s([50, 55, 45])).values, [100, 110, 90]);
  });
  test('to 100 at the first value on or after a date, skipping a gap', () => {
    near(rebase(s([50, null, 40, 44]), '2024-01-02').values, [125, null, 100, 110]);
  });
  test('no value to rebase on, or a base of 0: refused', () => {
    assert.throws(() => rebase(s([1, 2]), '2025-01-01'), /no value on or after 2025-01-01/);
    assert.throws(() => rebase(s([0, 2])), /base value .* is 0/);
  });
});

describe('rolling windows over N observations', () => {
  test('mean of 3', () => {
    near(rollingMean(s([1, 2, 3, 4, 5]), 3).values, [null, null, 2, 3, 4]);
  });
  test('sample std of 3: [2,4,6] -> 2, [4,6,9] -> sqrt(19/3)', () => {
    near(rollingStd(s([2, 4, 6, 9]), 3).values, [null, null, 2, Math.sqrt(19 / 3)]);
  });
  test('z-score of the last value in its window: [2,4,9] -> (9-5)/sqrt(13)', () => {
    near(rollingZScore(s([2, 4, 9]), 3).values, [null, null, 4 / Math.sqrt(13)]);
  });
  test('a constant window has no z-score', () => {
    near(rollingZScore(s([5, 5, 5]), 3).values, [null, null, null]);
  });
  test('a gap inside the window makes it null until the window has passed it', () => {
    near(rollingMean(s([1, null, 3, 5, 7]), 2).values, [null, null, null, 4, 6]);
  });
  test('a window longer than the series: all null (too short)', () => {
    near(rollingMean(s([1, 2]), 5).values, [null, null]);
  });
  test('std needs a window of 2 or more', () => {
    assert.throws(() => rollingStd(s([1, 2]), 1), /window must be a whole number >= 2/);
  });
});

describe('resample', () => {
  test('periods start on Monday, the 1st of the month, the 1st of the quarter', () => {
    assert.equal(periodStart('2024-01-07', 'week'), '2024-01-01'); // a Sunday
    assert.equal(periodStart('2024-01-08', 'week'), '2024-01-08'); // a Monday
    assert.equal(periodStart('2024-05-17', 'month'), '2024-05-01');
    assert.equal(periodStart('2024-05-17', 'quarter'), '2024-04-01');
    assert.equal(periodStart('2024-12-31T20:00:00Z', 'quarter'), '2024-10-01');
  });
  const series = s(
    [1, 2, null, 4, 10],
    ['2024-01-30', '2024-01-31', '2024-02-01', '2024-02-02', '2024-04-01'],
  );
  test('monthly last, mean and sum; a gap inside a month is skipped', () => {
    assert.deepEqual(resample(series, 'month', 'last'), {
      dates: ['2024-01-01', '2024-02-01', '2024-04-01'],
      values: [2, 4, 10],
    });
    assert.deepEqual(resample(series, 'month', 'mean').values, [1.5, 4, 10]);
    assert.deepEqual(resample(series, 'month', 'sum').values, [3, 4, 10]);
  });
  test('a month with no value at all is left out (March here), not zero', () => {
    assert.ok(!resample(series, 'month', 'sum').dates.includes('2024-03-01'));
  });
  test('quarterly and weekly', () => {
    assert.deepEqual(resample(series, 'quarter', 'sum'), {
      dates: ['2024-01-01', '2024-04-01'],
      values: [7, 10],
    });
    assert.deepEqual(resample(series, 'week', 'last'), {
      dates: ['2024-01-29', '2024-04-01'],
      values: [4, 10],
    });
  });
});

describe('two or more series: common dates only', () => {
  // a trades on 1,2,3,5; b on 2,3,4,5 with a gap on 3: common dates with values are 2 and 5.
  const a = s([10, 12, 11, 15], ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-05']);
  const b = s([4, null, 5, 3], ['2024-01-02', '2024-01-03', '2024-01-04', '2024-01-05']);
  test('align keeps the dates where every series has a value', () => {
    assert.deepEqual(align([a, b]), [
      { dates: ['2024-01-02', '2024-01-05'], values: [12, 15] },
      { dates: ['2024-01-02', '2024-01-05'], values: [4, 3] },
    ]);
  });
  test('spread and ratio on common dates; a ratio to 0 is null', () => {
    assert.deepEqual(spread(a, b), { dates: ['2024-01-02', '2024-01-05'], values: [8, 12] });
    assert.deepEqual(ratio(a, b), { dates: ['2024-01-02', '2024-01-05'], values: [3, 5] });
    assert.deepEqual(ratio(s([1, 2]), s([0, 4])).values, [null, 0.5]);
  });
  test('2s10s: the 10-year minus the 2-year', () => {
    near(twosTens(s([4.1, 4.2]), s([3.5, 3.9])).values, [0.6, 0.3]);
  });
});

describe('correlation and regression', () => {
  test('perfectly related and opposite series: +1 and -1 over their common dates', () => {
    const x = s([1, 2, 3, 4]);
    const y = s([2, 4, 6, 8]);
    const z = s([4, 3, 2, 1]);
    const m = correlationMatrix(['x', 'y', 'z'], [x, y, z]);
    near(m.matrix.flat(), [1, 1, -1, 1, 1, -1, -1, -1, 1]);
    assert.equal(m.observations, 4);
  });
  test('a hand-worked correlation: x=[1,2,3], y=[1,3,2] -> 0.5', () => {
    near(correlationMatrix(['x', 'y'], [s([1, 2, 3]), s([1, 3, 2])]).matrix.flat(), [1, 0.5, 0.5, 1]);
  });
  test('fewer than 3 common dates or a constant series: null', () => {
    assert.deepEqual(correlationMatrix(['x', 'y'], [s([1, 2]), s([2, 1])]).matrix, [
      [null, null],
      [null, null],
    ]);
    assert.equal(correlationMatrix(['x', 'y'], [s([1, 2, 3]), s([5, 5, 5])]).matrix[0]?.[1], null);
  });
  test('OLS: y = 1 + 2x exactly -> beta 2, alpha 1, R^2 1', () => {
    const r = olsBeta(s([3, 5, 7, 9]), s([1, 2, 3, 4]));
    near([r.beta, r.alpha, r.r2], [2, 1, 1]);
    assert.equal(r.observations, 4);
  });
  test('OLS by hand: x=[1,2,3], y=[1,3,2] -> beta 0.5, alpha 1, R^2 0.25', () => {
    const r = olsBeta(s([1, 3, 2]), s([1, 2, 3]));
    near([r.beta, r.alpha, r.r2], [0.5, 1, 0.25]);
  });
  test('OLS on a constant x: no beta', () => {
    assert.deepEqual(olsBeta(s([1, 2, 3]), s([2, 2, 2])), {
      beta: null,
      alpha: null,
      r2: null,
      observations: 3,
    });
  });
});

describe('maximum drawdown', () => {
  test('100 -> 120 -> 90 -> 130: -25 % from the 120 peak, recovered on the 130', () => {
    const out = maxDrawdown(s([100, 120, 90, 130]));
    assert.deepEqual(out, {
      maxDrawdownPct: -25,
      peakDate: '2024-01-02',
      troughDate: '2024-01-03',
      recoveryDate: '2024-01-04',
    });
  });
  test('a series that only rises has no drawdown; gaps are skipped', () => {
    assert.deepEqual(maxDrawdown(s([1, null, 2, 3])), {
      maxDrawdownPct: 0,
      peakDate: null,
      troughDate: null,
      recoveryDate: null,
    });
  });
  test('not recovered yet: recoveryDate null', () => {
    assert.equal(maxDrawdown(s([10, 8, 9])).recoveryDate, null);
    assert.equal(maxDrawdown(s([10, 8, 9])).maxDrawdownPct, -20);
  });
  test('returns (negative values) are refused', () => {
    assert.throws(() => maxDrawdown(s([1, -1])), /positive levels/);
  });
});

describe('COT', () => {
  test('net position is long minus short of the trader class; a missing side is a gap', () => {
    const rows = [
      { report_date: '2024-01-02', noncommercial_long_all: 300, noncommercial_short_all: 100 },
      { report_date: '2024-01-09', noncommercial_long_all: 250, noncommercial_short_all: 300 },
      { report_date: '2024-01-16', noncommercial_long_all: null, noncommercial_short_all: 1 },
    ];
    assert.deepEqual(cotNet(rows, 'report_date', 'noncommercial'), {
      dates: ['2024-01-02', '2024-01-09', '2024-01-16'],
      values: [200, -50, null],
    });
  });
  test('percentile rank over 5 weeks: lowest 0, highest 100, ties share', () => {
    near(percentileRank(s([10, 20, 30, 40, 50, 5, 50]), 5).values, [null, null, null, null, 100, 0, 87.5]);
    near(percentileRank(s([7, 7, 7]), 3).values, [null, null, 50]);
  });
});

describe('the Treasury curve', () => {
  const rows = [
    { date: '2024-05-01', label: '10 Yr', maturityMonths: 120, value: 4.5 },
    { date: '2024-05-01', label: '2 Yr', maturityMonths: 24, value: 4.9 },
    { date: '2024-05-01', label: '3 Mo', maturityMonths: 3, value: 5.4 },
    { date: '2024-05-02', label: '10 Yr', maturityMonths: 120, value: 4.6 },
    { date: '2024-05-02', label: '2 Yr', maturityMonths: 24, value: null },
  ];
  test('on a date: the tenors sorted by maturity', () => {
    assert.deepEqual(curveOn(rows, '2024-05-01'), {
      date: '2024-05-01',
      points: [
        { label: '3 Mo', maturityMonths: 3, value: 5.4 },
        { label: '2 Yr', maturityMonths: 24, value: 4.9 },
        { label: '10 Yr', maturityMonths: 120, value: 4.5 },
      ],
    });
  });
  test('a date with fewer than two tenors (or a holiday) falls back to the latest full day before it', () => {
    assert.equal(curveOn(rows, '2024-05-03').date, '2024-05-01');
    assert.throws(() => curveOn(rows, '2024-04-01'), /no curve/);
  });
});

describe('summary statistics', () => {
  test('count, dates, mean, sample std, min, max and last over the values present', () => {
    assert.deepEqual(summarize(s([2, null, 4, 6])), {
      count: 3,
      firstDate: '2024-01-01',
      lastDate: '2024-01-04',
      mean: 4,
      std: 2,
      min: 2,
      max: 6,
      last: 6,
    });
    assert.equal(summarize(s([null])).count, 0);
  });
});
