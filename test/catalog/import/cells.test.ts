/** convertCell: a cell as its field's type, or the exact reason it is not one. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { convertCell, isRealDate } from '../../../src/catalog/import/cells.ts';
import type { FieldDef, FieldType } from '../../../src/catalog/types.ts';

const field = (type: FieldType): FieldDef => ({ name: 'x', type, description: 'x' });
const none = new Set<string>();
const convert = (type: FieldType, raw: unknown, nulls: ReadonlySet<string> = none) =>
  convertCell(field(type), raw, nulls);

test('empty cells, null tokens, null and undefined are no value', () => {
  assert.deepEqual(convert('number', ''), { value: null });
  assert.deepEqual(convert('number', '  '), { value: null });
  assert.deepEqual(convert('number', '.', new Set(['.'])), { value: null });
  assert.deepEqual(convert('string', null), { value: null });
  assert.deepEqual(convert('string', undefined), { value: null });
});

test('strings are trimmed; control characters and lone surrogates are refused', () => {
  assert.deepEqual(convert('string', '  AAPL '), { value: 'AAPL' });
  assert.deepEqual(convert('string', 'a\u0001b'), { error: '"a\\u0001b" holds a control character' });
  assert.deepEqual(convert('string', 'a\ud800'), {
    error: '"a\\ud800" is not valid Unicode (a lone surrogate)',
  });
  assert.deepEqual(convert('string', { a: 1 }), { error: 'is an object or array, not a single value' });
});

test('integers and numbers: text or JSON numbers, never booleans, always finite and safe', () => {
  assert.deepEqual(convert('integer', '+42'), { value: 42 });
  assert.deepEqual(convert('integer', 7), { value: 7 });
  assert.deepEqual(convert('integer', '4.0'), { error: '"4.0" is not an integer' });
  assert.deepEqual(convert('integer', '9007199254740993'), {
    error: '"9007199254740993" is too large for an integer',
  });
  assert.deepEqual(convert('integer', true), { error: 'true is not an integer' });
  assert.deepEqual(convert('number', '-.5e2'), { value: -50 });
  assert.deepEqual(convert('number', '1e999'), { error: '"1e999" is not a finite number' });
  assert.deepEqual(convert('number', '1,5'), { error: '"1,5" is not a number' });
});

test('booleans are true/false/1/0 in any case', () => {
  assert.deepEqual(convert('boolean', 'TRUE'), { value: true });
  assert.deepEqual(convert('boolean', '0'), { value: false });
  assert.deepEqual(convert('boolean', 'yes'), { error: '"yes" is not a boolean (true/false/1/0)' });
});

test('dates must be real days; date-times carry a zone and are stored in UTC to the second', () => {
  assert.deepEqual(convert('date', '2024-02-29'), { value: '2024-02-29' });
  assert.deepEqual(convert('date', '2023-02-29'), { error: '"2023-02-29" is not a date (YYYY-MM-DD)' });
  assert.deepEqual(convert('datetime', '2024-03-01 09:30:00+01:00'), { value: '2024-03-01T08:30:00Z' });
  assert.deepEqual(convert('datetime', '2024-03-01T24:00:00Z'), {
    error: '"2024-03-01T24:00:00Z" is not a date-time (ISO 8601 with Z or an offset)',
  });
  assert.deepEqual(convert('datetime', '2024-03-01T09:30:00'), {
    error: '"2024-03-01T09:30:00" is not a date-time (ISO 8601 with Z or an offset)',
  });
  assert.deepEqual(convert('datetime', '2024-03-01T09:30:00.5Z'), {
    error: '"2024-03-01T09:30:00.5Z" has a fraction of a second; times are stored to the second',
  });
});

test('a date is real exactly when a Date round trip gives it back (every day of 1899-2101, and near misses)', () => {
  const byDate = (text: string) => {
    const [y, m, d] = text.split('-').map(Number) as [number, number, number];
    return new Date(Date.UTC(y, m - 1, d)).toISOString().slice(0, 10) === text;
  };
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  let checked = 0;
  for (let year = 1899; year <= 2101; year++)
    for (let month = 0; month <= 13; month++)
      for (let day = 0; day <= 32; day++) {
        const text = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
        assert.equal(isRealDate(text), byDate(text), text);
        checked++;
      }
  assert.equal(checked, 203 * 14 * 33);
  for (const text of ['0050-01-01', '0099-12-31', '2024-1-01', '2024-01-01T00:00:00Z', ' 2024-01-01'])
    assert.equal(isRealDate(text), false, text);
  assert.equal(isRealDate('0100-03-01'), true);
});
