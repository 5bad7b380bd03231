/** Which column or constant each field takes, and a record as a typed row. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeSources, resolveSources, rowOf } from '../../../src/catalog/import/fields.ts';
import { Problems } from '../../../src/catalog/import/problems.ts';
import { rates } from '../../helpers/import-dataset.ts';

const none = new Set<string>();

test('--set wins over --map, --map over the column-name convention; unused columns are listed', () => {
  const sources = resolveSources(
    rates,
    ['DATE', 'Value', 'Ticker', 'Open Interest (All)', 'notes'],
    { format: 'csv', map: { series: 'Ticker', value: 'notes' }, set: { value: '1.5' } },
    none,
  );
  assert.deepEqual(Object.fromEntries(sources), {
    date: { kind: 'column', column: 'DATE', index: 0 },
    series: { kind: 'column', column: 'Ticker', index: 2 },
    value: { kind: 'set', value: 1.5 },
    open_interest_all: { kind: 'column', column: 'Open Interest (All)', index: 3 },
  });
  assert.deepEqual(describeSources(sources, ['DATE', 'Value', 'Ticker', 'Open Interest (All)', 'notes']), {
    sources: {
      date: 'column "DATE"',
      series: 'column "Ticker"',
      value: 'set 1.5',
      open_interest_all: 'column "Open Interest (All)"',
    },
    ignoredColumns: ['Value', 'notes'],
  });
});

test('every problem with the options is listed at once, naming the flag', () => {
  assert.throws(
    () =>
      resolveSources(
        rates,
        ['value'],
        { format: 'csv', map: { nope: 'x', value: 'Value' }, set: { date: 'today' } },
        none,
      ),
    {
      name: 'ImportError',
      message: [
        'The file does not fit macro/rates.',
        '  --map nope=…: macro/rates has no field "nope" (fields: date, series, value, open_interest_all)',
        '  --set date: "today" is not a date (YYYY-MM-DD)',
        '  --map value=Value: the file has no column "Value" (columns: value)',
        '  field "series" (an entity field) has no column: map one with --map series=<column> or give a constant with --set series=<value>',
      ].join('\n'),
    },
  );
});

test('rowOf: a field with no column is null; a bad cell and an empty time are problems naming where', () => {
  const sources = resolveSources(rates, ['date', 'series', 'value'], { format: 'csv' }, none);
  const problems = new Problems();
  const cells: Record<string, string> = { date: '', series: 'DGS10', value: 'abc' };
  const row = rowOf(
    rates,
    sources,
    none,
    () => 'line 7',
    (c) => cells[c.column],
    problems,
  );
  assert.deepEqual(row, { date: null, series: 'DGS10', open_interest_all: null });
  assert.deepEqual(problems.listed, [
    'line 7: column "value" -> value (number): "abc" is not a number',
    'line 7: date (the time field) is empty',
  ]);
});
