/**
 * check.ts: an analysis checked against the service's catalog before anything is read. How each series
 * is read (a field, a COT net position, every tenor of a curve), and every problem listed at once with
 * its path, or 404 for an unknown dataset.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkSpec } from '../../../src/domain/analysis/check.ts';
import type { AnalysisSpec, SeriesSpec } from '../../../src/domain/analysis/spec.ts';
import { AppError } from '../../../src/errors.ts';
import { serviceCatalog } from '../support.ts';
import { compare } from './fixtures.ts';

const catalog = serviceCatalog();
const aapl: SeriesSpec = { id: 'aapl', dataset: 'stocks/prices', entity: { symbol: 'AAPL' }, field: 'close' };
const gold: SeriesSpec = {
  id: 'gold',
  dataset: 'cot/legacy-futures',
  entity: { market_and_exchange_names: 'GOLD - COMMODITY EXCHANGE INC.' },
  field: 'net:noncommercial',
};
const yields: SeriesSpec = {
  id: 'y',
  dataset: 'macro/treasury-yield-series',
  entity: {},
  field: 'par_yield',
};

/** The plans of a spec the catalog accepts, without their catalog entries. */
const plans = (spec: AnalysisSpec) =>
  checkSpec(spec, catalog).map(({ entry, ...plan }) => ({ key: entry.dataset.key, ...plan }));

/** The code, message and listed problems of a refused spec. */
function refusal(spec: AnalysisSpec): { code: string; message: string; extras: unknown } {
  try {
    checkSpec(spec, catalog);
  } catch (error) {
    assert.ok(error instanceof AppError);
    return { code: error.code, message: error.message, extras: error.extras };
  }
  assert.fail('expected the spec to be refused');
}

describe('an analysis the catalog can run', () => {
  test('a stock close is read as a plain field: the time field and the field', () => {
    assert.deepEqual(plans(compare), [
      {
        key: 'stocks/prices',
        spec: compare.series[0],
        timeField: 'date',
        shape: { kind: 'field', field: 'close' },
        fields: ['date', 'close'],
      },
      {
        key: 'stocks/prices',
        spec: compare.series[1],
        timeField: 'date',
        shape: { kind: 'field', field: 'close' },
        fields: ['date', 'close'],
      },
    ]);
  });

  test('a COT net position reads long and short; a yield curve reads every tenor with its maturity', () => {
    const spec: AnalysisSpec = {
      series: [gold, yields],
      steps: [{ op: 'curve', input: 'y', as: 'curve' }],
      outputs: [{ kind: 'line', values: ['gold', 'curve'] }],
    };
    assert.deepEqual(plans(spec), [
      {
        key: 'cot/legacy-futures',
        spec: gold,
        timeField: 'report_date',
        shape: {
          kind: 'net',
          traderClass: 'noncommercial',
          long: 'noncommercial_long_all',
          short: 'noncommercial_short_all',
        },
        fields: ['report_date', 'noncommercial_long_all', 'noncommercial_short_all'],
      },
      {
        key: 'macro/treasury-yield-series',
        spec: yields,
        timeField: 'date',
        shape: { kind: 'panel', field: 'par_yield', labelField: 'tenor', maturityField: 'maturity_months' },
        fields: ['date', 'tenor', 'maturity_months', 'par_yield'],
      },
    ]);
  });

  test('align redefines its inputs in place; a correlation matrix is shown as a table', () => {
    const spec: AnalysisSpec = {
      ...compare,
      steps: [
        { op: 'align', inputs: ['aapl', 'msft'] },
        { op: 'correlation', inputs: ['aapl', 'msft'], as: 'corr' },
      ],
      outputs: [
        { kind: 'table', values: ['corr'] },
        { kind: 'stats', values: ['aapl'] },
      ],
    };
    assert.equal(checkSpec(spec, catalog).length, 2);
  });
});

describe('an analysis the catalog cannot run', () => {
  test('an unknown dataset: 404 dataset_not_found with the near names', () => {
    const spec: AnalysisSpec = { ...compare, series: [{ ...aapl, dataset: 'stocks/pricez' }] };
    assert.deepEqual(refusal(spec), {
      code: 'dataset_not_found',
      message: 'No dataset "stocks/pricez" (series.0.dataset). Did you mean stocks/prices, stocks/profiles?',
      extras: { suggestions: ['stocks/prices', 'stocks/profiles'] },
    });
  });

  test('every problem of the series at once, each with its path', () => {
    const spec: AnalysisSpec = {
      series: [
        { ...aapl, entity: { ticker: 'A' }, from: '2024-02-01', to: '2024-01-01' },
        aapl,
        { id: 'p', dataset: 'stocks/prices', entity: {}, field: 'close' },
        { id: 'q', dataset: 'stocks/prices', entity: { symbol: 'A' }, field: 'symbol' },
        { id: 'n', dataset: 'stocks/prices', entity: { symbol: 'A' }, field: 'net:swap' },
      ],
      steps: [],
      outputs: [{ kind: 'line', values: ['aapl'] }],
    };
    const { code, extras } = refusal(spec);
    assert.equal(code, 'invalid_request');
    assert.deepEqual(extras, {
      errors: [
        {
          path: 'series.0.entity.ticker',
          message: 'stocks/prices has no entity field ticker; its entity fields are symbol, exchange',
        },
        { path: 'series.0.to', message: 'must not be before from' },
        { path: 'series.1.id', message: 'aapl is used twice' },
        {
          path: 'series.2.entity',
          message: 'name one entity (symbol, exchange): only a yield curve reads every entity at once',
        },
        {
          path: 'series.3.field',
          message:
            'symbol is not a numeric field of stocks/prices; its numeric fields are open, high, low, close, adj_close, volume',
        },
        {
          path: 'series.4.field',
          message:
            "stocks/prices has no swap_long_all and swap_short_all: net:<class> needs a COT report's trader class (net:noncommercial, net:commercial, net:m_money, net:prod_merc, net:swap)",
        },
      ],
    });
  });
});

describe('steps and outputs the catalog cannot run', () => {
  test('steps and outputs given the wrong kind of value, or a name nothing defines', () => {
    const spec: AnalysisSpec = {
      series: [aapl],
      steps: [
        { op: 'correlation', inputs: ['aapl', 'zz'], as: 'm' },
        { op: 'rebase', input: 'm', as: 'aapl' },
        { op: 'curve', input: 'aapl', as: 'c' },
      ],
      outputs: [
        { kind: 'line', values: ['m', 'nothing'] },
        { kind: 'stats', values: ['c'] },
      ],
    };
    const { message, extras } = refusal(spec);
    const errors = [
      { path: 'steps.0', message: 'correlation reads zz, which nothing before it defines' },
      { path: 'steps.1', message: 'rebase needs a series, and m is a matrix' },
      { path: 'steps.1.as', message: 'aapl is already defined: give the result a new name' },
      {
        path: 'steps.2',
        message: 'curve reads every tenor: read aapl with no entity (only a dataset with maturity_months)',
      },
      { path: 'outputs.0.values.0', message: 'a line chart shows series or curves; show m as a table' },
      { path: 'outputs.0.values.1', message: 'nothing is named nothing' },
      { path: 'outputs.1.values.0', message: 'statistics are of series; c is a curve' },
    ];
    assert.deepEqual(extras, { errors });
    assert.equal(
      message,
      `The analysis cannot run: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}.`,
    );
  });

  test('a COT series with no market, and every tenor used as one series', () => {
    const spec: AnalysisSpec = {
      series: [{ ...gold, entity: {} }, yields],
      steps: [{ op: 'pct_change', input: 'y', as: 'r' }],
      outputs: [{ kind: 'table', values: ['y'] }],
    };
    assert.deepEqual(refusal(spec), {
      code: 'invalid_request',
      message:
        'The analysis cannot run: series.0.entity: name the market (market_and_exchange_names); steps.0: y holds every entity: name one in its entity, or read it with a curve step; outputs.0.values.0: y holds every entity: show a curve of it.',
      extras: {
        errors: [
          { path: 'series.0.entity', message: 'name the market (market_and_exchange_names)' },
          {
            path: 'steps.0',
            message: 'y holds every entity: name one in its entity, or read it with a curve step',
          },
          { path: 'outputs.0.values.0', message: 'y holds every entity: show a curve of it' },
        ],
      },
    });
  });
});
