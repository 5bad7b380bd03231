/**
 * results.ts: a run's result stored as JSON (token amounts kept exact) and loaded back, the notes on
 * where the data did not meet the dates asked for, and a series' rows turned into values.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkSpec } from '../../../src/domain/analysis/check.ts';
import {
  coverageNotes,
  loadResult,
  OBSERVATIONS_PER_SERIES,
  type RunResult,
  type SeriesRead,
  storeResult,
  toComputed,
} from '../../../src/domain/analysis/results.ts';
import type { AnalysisSpec, SeriesSpec } from '../../../src/domain/analysis/spec.ts';
import { serviceCatalog } from '../support.ts';

const M = 1_000_000n;
const catalog = serviceCatalog();

const read = (fields: Partial<SeriesRead> = {}): SeriesRead => ({
  series: 'aapl',
  dataset: 'stocks/prices',
  requestId: 'req_1',
  rows: 3,
  truncated: false,
  firstDate: '2024-01-02',
  lastDate: '2024-01-04',
  costMicros: 2n * M,
  burnedMicros: 2n * M,
  ...fields,
});

const result: RunResult = {
  runId: 'run_1',
  analysisId: null,
  startedAt: 1_700_000_000_000,
  reads: [read({ costMicros: 9_007_199_254_740_993n })],
  burnedMicros: 2n * M,
  outputs: [{ kind: 'table', title: 'aapl', columns: ['date', 'aapl'], rows: [['2024-01-02', 185.64]] }],
  problems: [],
  notes: ['a note'],
  reusedFrom: { runId: 'run_0', startedAt: 1, burnedMicros: 0n },
};

describe('a stored result', () => {
  test('keeps token amounts as decimal micro strings and loads them back exactly', () => {
    const json = storeResult(result);
    assert.match(json, /"costMicros":"9007199254740993n"/);
    assert.match(json, /"burnedMicros":"0n"/);
    assert.deepEqual(loadResult(json), result);
  });

  test('a result stored before notes were kept loads with none', () => {
    const { notes: _notes, ...old } = result;
    const loaded = loadResult(storeResult(old as RunResult));
    assert.deepEqual(loaded.notes, []);
    assert.equal(loaded.reads[0]?.costMicros, 9_007_199_254_740_993n);
  });
});

describe('coverage notes', () => {
  const aapl: SeriesSpec = { id: 'aapl', dataset: 'stocks/prices', entity: {}, field: 'close' };

  test('data that meets the range (within a week) has no note', () => {
    const spec = { ...aapl, from: '2023-12-27', to: '2024-01-10' };
    assert.deepEqual(coverageNotes([spec], [read()]), []);
  });

  test('no data at all, named by label and range', () => {
    const spec = { ...aapl, label: 'Apple', from: '2030-01-01', to: '2030-02-01' };
    assert.deepEqual(coverageNotes([spec], [read({ rows: 0, firstDate: null, lastDate: null })]), [
      'There is no data for Apple from 2030-01-01 to 2030-02-01: nothing to show for it.',
    ]);
  });

  test('data that starts later and ends earlier than asked', () => {
    const spec = { ...aapl, from: '2023-01-01', to: '2024-06-30' };
    assert.deepEqual(coverageNotes([spec], [read({ firstDate: '2024-01-02T00:00:00Z' })]), [
      'The data for aapl starts 2024-01-02; showing from then (asked from 2023-01-01).',
      'The data for aapl ends 2024-01-04; showing to then (asked to 2024-06-30).',
    ]);
  });

  test('a read cut to its newest observations says so instead of a late start', () => {
    const spec = { ...aapl, from: '2000-01-01' };
    assert.equal(OBSERVATIONS_PER_SERIES, 1000);
    assert.deepEqual(coverageNotes([spec], [read({ rows: 1000, truncated: true })]), [
      'aapl has more than 1000 observations from 2000-01-01: showing the newest 1000, from 2024-01-02.',
    ]);
  });

  test('a series with no read (not made) has no note', () => {
    assert.deepEqual(coverageNotes([{ ...aapl, id: 'msft', from: '2000-01-01' }], [read()]), []);
  });
});

describe('rows to values', () => {
  const planOf = (series: SeriesSpec[], steps: AnalysisSpec['steps'] = [], shown = series[0]?.id ?? '') =>
    checkSpec({ series, steps, outputs: [{ kind: 'table', values: [shown] }] }, catalog);

  test('a numeric field: non-numbers are gaps, a repeated date keeps its first row', () => {
    const [plan] = planOf([
      { id: 'aapl', dataset: 'stocks/prices', entity: { symbol: 'AAPL' }, field: 'close', label: 'Apple' },
    ]);
    assert.ok(plan);
    const rows = [
      { date: '2024-01-02', close: 185.64 },
      { date: '2024-01-02', close: 999 },
      { date: '2024-01-03', close: null },
      { date: '2024-01-04', close: '181.91' },
      { date: '2024-01-05', close: 181.18 },
    ];
    assert.deepEqual(toComputed(plan, rows), {
      kind: 'series',
      label: 'Apple',
      series: {
        dates: ['2024-01-02', '2024-01-03', '2024-01-04', '2024-01-05'],
        values: [185.64, null, null, 181.18],
      },
    });
  });

  test('a COT net position is long minus short', () => {
    const [plan] = planOf([
      {
        id: 'gold',
        dataset: 'cot/legacy-futures',
        entity: { market_and_exchange_names: 'GOLD' },
        field: 'net:noncommercial',
      },
    ]);
    assert.ok(plan);
    const rows = [
      { report_date: '2024-01-02', noncommercial_long_all: 300, noncommercial_short_all: 100 },
      { report_date: '2024-01-09', noncommercial_long_all: 250, noncommercial_short_all: 275 },
    ];
    assert.deepEqual(toComputed(plan, rows), {
      kind: 'series',
      label: 'gold',
      series: { dates: ['2024-01-02', '2024-01-09'], values: [200, -25] },
    });
  });

  test('every tenor of a curve is a panel row with its maturity', () => {
    const [plan] = planOf(
      [{ id: 'y', dataset: 'macro/treasury-yield-series', entity: {}, field: 'par_yield' }],
      [{ op: 'curve', input: 'y', as: 'c' }],
      'c',
    );
    assert.ok(plan);
    const rows = [
      { date: '2024-01-02', tenor: '2 Yr', maturity_months: 24, par_yield: 4.33 },
      { date: '2024-01-02', tenor: '10 Yr', maturity_months: '120', par_yield: null },
    ];
    assert.deepEqual(toComputed(plan, rows), {
      kind: 'panel',
      label: 'y',
      panel: {
        rows: [
          { date: '2024-01-02', label: '2 Yr', maturityMonths: 24, value: 4.33 },
          { date: '2024-01-02', label: '10 Yr', maturityMonths: 120, value: null },
        ],
      },
    });
  });
});
