/** A file's records before they are typed: CSV under its header, NDJSON lines, a JSON array. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { headerProblems, normalizeColumnName, readRecords } from '../../../src/catalog/import/records.ts';

const plain = (text: string, format: 'csv' | 'ndjson' | 'json') => {
  const { columns, records } = readRecords(text, format);
  return { columns, records: records.map((r) => ({ where: r.where, values: Object.fromEntries(r.values) })) };
};

test('column names normalise to snake_case field names', () => {
  assert.equal(normalizeColumnName(' Open Interest (All) '), 'open_interest_all');
  assert.equal(normalizeColumnName('DATE'), 'date');
  assert.equal(normalizeColumnName('__a--b__'), 'a_b');
});

test('a CSV file: records keyed by header; a short line and a bad header are named', () => {
  assert.deepEqual(plain('date,value\n2024-01-02,1\n', 'csv'), {
    columns: ['date', 'value'],
    records: [{ where: 'line 2', values: { date: '2024-01-02', value: '1' } }],
  });
  assert.throws(() => readRecords('date,value\n2024-01-02\n', 'csv'), {
    message: 'The CSV file is malformed.\n  line 2: 1 cells, but the header has 2 columns',
  });
  assert.throws(() => readRecords('', 'csv'), { message: 'The file is empty: no header row.' });
  assert.deepEqual(headerProblems(['a', '', 'a'], 1), [
    'line 1: the header has an empty column name',
    'line 1: the header names "a" twice',
  ]);
});

test('NDJSON and JSON: the columns are every key seen; a line or record that is no object is named', () => {
  assert.deepEqual(plain('{"a":1}\n\n{"b":2}\n', 'ndjson'), {
    columns: ['a', 'b'],
    records: [
      { where: 'line 1', values: { a: 1 } },
      { where: 'line 3', values: { b: 2 } },
    ],
  });
  assert.throws(() => readRecords('{"a":1}\n{oops\n[1]\n', 'ndjson'), {
    message: 'The NDJSON file is malformed.\n  line 2: not valid JSON\n  line 3: not a JSON object',
  });
  assert.deepEqual(plain('{"data":[{"a":1}]}', 'json').records, [{ where: 'record 1', values: { a: 1 } }]);
  assert.throws(() => readRecords('{"rows":[]}', 'json'), {
    message: 'The JSON file must hold an array of objects, or {"data": [...]}.',
  });
  assert.throws(() => readRecords('[{"a":1}, 2]', 'json'), {
    message: 'The JSON file is malformed.\n  record 2: not a JSON object',
  });
});
