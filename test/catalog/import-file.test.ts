/** parseImport and parseMapFile: a whole file as typed rows, and a field -> column mapping file. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseImport, parseMapFile } from '../../src/catalog/import-file.ts';
import { rates } from '../helpers/import-dataset.ts';

test('a CSV file with --set and a null token becomes typed rows, each field saying where it came from', () => {
  const parsed = parseImport(rates, 'DATE,Value,Notes\n2024-01-02,4.25,x\n2024-01-03,.,y\n', {
    format: 'csv',
    set: { series: 'DGS10' },
    nullTokens: ['.'],
  });
  assert.deepEqual(parsed, {
    rows: [
      { date: '2024-01-02', series: 'DGS10', value: 4.25, open_interest_all: null },
      { date: '2024-01-03', series: 'DGS10', value: null, open_interest_all: null },
    ],
    sources: {
      date: 'column "DATE"',
      series: 'set "DGS10"',
      value: 'column "Value"',
      open_interest_all: null,
    },
    ignoredColumns: ['Notes'],
  });
});

test('NDJSON and the JSON read envelope give the same rows', () => {
  const ndjson = parseImport(rates, '{"date":"2024-01-02","series":"A","value":1}\n', { format: 'ndjson' });
  const json = parseImport(rates, '{"data":[{"date":"2024-01-02","series":"A","value":1}]}', {
    format: 'json',
  });
  assert.deepEqual(ndjson.rows, [{ date: '2024-01-02', series: 'A', value: 1, open_interest_all: null }]);
  assert.deepEqual(json, ndjson);
});

test('a file with no rows, or with invalid values, is refused whole', () => {
  assert.throws(() => parseImport(rates, 'date,series\n', { format: 'csv' }), {
    message: 'The file holds no rows.',
  });
  assert.throws(
    () => parseImport(rates, '[{"date":"2024-01-02","series":"A","value":"x"}]', { format: 'json' }),
    {
      name: 'ImportError',
      message:
        '1 invalid value(s) in the file; nothing was imported.\n  record 1: column "value" -> value (number): "x" is not a number',
    },
  );
});

test('a mapping file is a JSON object of strings; "$" keys are comments', () => {
  assert.deepEqual(parseMapFile('{"$comment":"CFTC","date":"As of Date","value":"Open"}', 'm.json'), {
    date: 'As of Date',
    value: 'Open',
  });
  assert.throws(() => parseMapFile('[1]', 'm.json'), {
    message: 'The mapping file m.json must be a JSON object of field -> column.',
  });
  assert.throws(() => parseMapFile('{"date":1,"value":null}', 'm.json'), {
    message:
      'The mapping file m.json is invalid.\n  "date": the column must be a string\n  "value": the column must be a string',
  });
  assert.throws(() => parseMapFile('{', 'm.json'), {
    message: /^The mapping file m\.json is not valid JSON\.\n {2}/,
  });
});
