/** A row's CSV record and JSON, as loads store them. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { csvRecord, rowTexts } from '../../src/catalog/csv.ts';
import type { Row } from '../../src/catalog/types.ts';

test('rowTexts: the JSON.stringify of the row and its csvRecord, for any row and columns', () => {
  const name = fc.constantFrom('a', 'b', 'close', 'x"y', 'é', '1', '2024', 'with space');
  const value = fc.oneof(
    fc.string(),
    fc.constantFrom('=SUM(A1)', ' padded ', 'a,b', 'say "hi"', '\n'),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
  );
  const row = fc.dictionary(name, value, { maxKeys: 6 });
  fc.assert(
    fc.property(row, fc.boolean(), (given, ownOrder) => {
      const r = given as Row;
      // Most loads give the row's own fields in order (the fast path); others any columns.
      const columns = ownOrder ? Object.keys(r) : ['b', 'a', 'close'];
      assert.deepEqual(rowTexts(r, columns), { json: JSON.stringify(r), csv: csvRecord(r, columns) });
    }),
    { numRuns: 2000 },
  );
  const prices = { symbol: 'AAPL', date: '2025-01-02', close: 243.85, volume: 55_740_700, halted: false };
  assert.deepEqual(rowTexts(prices, Object.keys(prices)), {
    json: '{"symbol":"AAPL","date":"2025-01-02","close":243.85,"volume":55740700,"halted":false}',
    csv: 'AAPL,2025-01-02,243.85,55740700,false',
  });
});
