/** read_dataset's CSV and JSON come from the stored rows' text: they must equal what parsing them gives. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { csvCell, csvRecord } from '../../src/catalog/csv.ts';
import type { Row } from '../../src/catalog/types.ts';
import { joinCsvLines } from '../../src/store/rows.ts';
import { csvOf, csvOfRows, csvTextJson, jsonOf, rowTokens } from '../../src/views/raw-rows.ts';

const columns = ['symbol', 'name', 'close', 'volume', 'active', 'note', 'missing'];

const rows: Record<string, unknown>[] = [
  { symbol: 'AAPL', name: 'Apple Inc.', close: 246.9, volume: 53134650, active: true, note: null },
  { symbol: 'X', name: 'Quote "this", please', close: -0.5, volume: 0, active: false, note: '=SUM(A1)' },
  { symbol: 'Y', name: 'line\nbreak', close: 1e21, volume: 1.5e-7, active: true, note: ' padded ' },
  {
    symbol: 'Z',
    name: 'back\\slash \u00e9 \u2028 \t tab',
    close: 12,
    volume: 3,
    active: true,
    note: '@handle',
  },
  { symbol: 'W', name: '+1', close: 0.1, volume: -7, active: false, note: '-minus', extra: 'not a column' },
  { note: 'keys out of order', volume: 9, symbol: 'V' },
  {},
];

/** The REST rules applied to parsed values: what the CSV and the JSON must equal. */
function expectedCsv(objects: Record<string, unknown>[]): string {
  const line = (values: unknown[]) =>
    values.map((v) => csvCell(v as string | number | boolean | null)).join(',');
  return `${line(columns)}\n${objects.map((o) => line(columns.map((c) => o[c]))).join('\n')}\n`;
}

test('stored rows scanned as text give the CSV and the projected JSON that parsing them gives', () => {
  const texts = rows.map((r) => JSON.stringify(r));
  const tokens = rowTokens(texts, columns);
  assert.equal(csvOf(columns, tokens), expectedCsv(rows));
  assert.equal(csvOfRows(texts, columns), expectedCsv(rows), 'rows with all, some or other members');
  const lines = rows.map((r) => csvRecord(r as Row, columns));
  assert.equal(
    JSON.parse(csvTextJson('before\n', columns, joinCsvLines(lines, 'json'), 'after')),
    `before\n${expectedCsv(rows)}after`,
    'lines rendered at load, joined and escaped by the store, give the same text',
  );
  const projected = rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c] ?? null])));
  assert.equal(jsonOf(columns, tokens), JSON.stringify(projected));
});

test('rows that are not flat JSON.stringify output fall back to the parser, with the same result', () => {
  const odd = [
    '{ "symbol": "SPACE", "close": 1 }',
    '{"symbol":"NEST","name":{"a":[1,2]},"close":2}',
    '{"sym\\u0062ol":"ESCAPED-KEY","close":3}',
    '{"symbol":"ARR","volume":[1,2,3]}',
  ];
  const parsed = odd.map((t) => JSON.parse(t) as Record<string, unknown>);
  const tokens = rowTokens(odd, columns);
  const projected = parsed.map((r) => Object.fromEntries(columns.map((c) => [c, r[c] ?? null])));
  assert.equal(jsonOf(columns, tokens), JSON.stringify(projected));
  assert.deepEqual(tokens[0]?.slice(0, 3), ['"SPACE"', undefined, '1']);
  assert.equal(tokens[2]?.[0], '"ESCAPED-KEY"', 'an escaped key is unescaped by the parser');
});

test('rows stored with exactly the columns, in order, take the direct path to the same CSV', () => {
  const full = rows
    .slice(0, 5)
    .map((r) => Object.fromEntries(columns.map((c) => [c, r[c] ?? null])) as Record<string, unknown>);
  assert.equal(
    csvOfRows(
      full.map((r) => JSON.stringify(r)),
      columns,
    ),
    expectedCsv(full),
  );
  const odd = ['{ "symbol": "SPACE", "close": 1 }', '{"symbol":"NEST","name":{"a":1}}'];
  assert.equal(
    csvOfRows(odd, ['symbol', 'close']),
    `symbol,close\nSPACE,1\nNEST,\n`,
    'whitespace and nesting fall back to the parser',
  );
});
