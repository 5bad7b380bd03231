/** CsvRowBuilder: a CSV file's bytes, piece by piece, as batches of typed rows. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CsvRowBuilder } from '../../../src/catalog/import/csv-rows.ts';
import { rates } from '../../helpers/import-dataset.ts';

test('pieces cut inside a character and inside a record give whole rows, batch by batch', () => {
  const bytes = Buffer.from(
    'date,series,value\n2024-01-01,Zürich,1\n2024-01-02,"Genève, GE",2\n2024-01-03,B,3',
  );
  const builder = new CsvRowBuilder(rates, { name: 'a.csv', batchRows: 2 });
  const batches = [];
  // One byte at a time: every cut, the two bytes of ü and è included.
  for (let i = 0; i < bytes.length; i++) batches.push(...builder.push(bytes.subarray(i, i + 1)));
  batches.push(...builder.finish());
  assert.deepEqual(batches, [
    [
      { date: '2024-01-01', series: 'Zürich', value: 1, open_interest_all: null },
      { date: '2024-01-02', series: 'Genève, GE', value: 2, open_interest_all: null },
    ],
    [{ date: '2024-01-03', series: 'B', value: 3, open_interest_all: null }],
  ]);
  assert.equal(builder.rows, 3);
});

test('a refused header stops the reading; the end says why', () => {
  const builder = new CsvRowBuilder(rates, { name: 'b.csv' });
  assert.deepEqual(builder.push(Buffer.from('date,,value\n2024-01-01,A,1\n')), []);
  assert.equal(builder.badHeader, true);
  assert.throws(() => builder.finish(), {
    name: 'ImportError',
    message: 'The CSV file is malformed.\n  line 1: the header has an empty column name',
  });
});
