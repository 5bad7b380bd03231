/** The CSV reader: records and their lines, the same whether a file comes whole or in any pieces. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CsvRecordReader, csvRecords, MAX_RECORD_CHARS } from '../../../src/catalog/import/csv-reader.ts';

/** The records of `text` given to one reader in pieces cut at `cuts`. */
function inPieces(text: string, cuts: readonly number[]): { line: number; cells: string[] }[] {
  const reader = new CsvRecordReader();
  const records: { line: number; cells: string[] }[] = [];
  const at = [...new Set(cuts)].sort((a, b) => a - b);
  let from = 0;
  for (const cut of [...at, text.length]) {
    reader.push(text.slice(from, cut), cut === text.length, (cells, line) => records.push({ line, cells }));
    from = cut;
  }
  return records;
}

test('csvRecords: quoted cells hold commas, quotes and newlines; each record names its first line', () => {
  const text = '\uFEFFa,b\r\n"x, y","say ""hi"""\n\n"multi\nline",2\n';
  assert.deepEqual(
    [...csvRecords(text)],
    [
      { line: 1, cells: ['a', 'b'] },
      { line: 2, cells: ['x, y', 'say "hi"'] },
      { line: 4, cells: ['multi\nline', '2'] },
    ],
  );
  assert.throws(() => [...csvRecords('a\n"open\n')], {
    name: 'ImportError',
    message: 'The CSV file is malformed.\n  line 2: a quoted cell is never closed',
  });
});

test('line ends: LF, CRLF and a lone CR each end a record; blank lines are skipped; no end at the end', () => {
  assert.deepEqual(
    [...csvRecords('a,b\r\n1,2\r3,4\n  \n\n5,"6\r\n7"\r\n8,9')],
    [
      { line: 1, cells: ['a', 'b'] },
      { line: 2, cells: ['1', '2'] },
      { line: 3, cells: ['3', '4'] },
      { line: 6, cells: ['5', '6\r\n7'] },
      { line: 8, cells: ['8', '9'] },
    ],
  );
  // A quote inside an unquoted cell is text; after a closing quote, the rest of the cell is kept.
  assert.deepEqual([...csvRecords('a"b,"c"d\n')], [{ line: 1, cells: ['a"b', 'cd'] }]);
});

test('any pieces give the records of the whole text (cut inside quotes, between CR and LF, at a BOM)', () => {
  const cell = fc.oneof(
    fc.constantFrom('', ' ', 'x', '1.5', '2024-01-02', 'a b'),
    fc
      .string({ unit: fc.constantFrom('a', ',', '"', '\n', '\r', ' ') })
      .map((s) => `"${s.replaceAll('"', '""')}"`),
  );
  const record = fc.array(cell, { minLength: 1, maxLength: 4 }).map((cells) => cells.join(','));
  const text = fc
    .tuple(
      fc.boolean(),
      fc.array(record, { maxLength: 8 }),
      fc.constantFrom('\n', '\r\n', '\r'),
      fc.boolean(),
    )
    .map(([bom, records, end, last]) => `${bom ? '\uFEFF' : ''}${records.join(end)}${last ? end : ''}`);
  fc.assert(
    fc.property(
      text.chain((t) => fc.tuple(fc.constant(t), fc.array(fc.nat(t.length), { maxLength: 6 }))),
      ([t, cuts]) => {
        assert.deepEqual(inPieces(t, cuts), [...csvRecords(t)]);
      },
    ),
    { numRuns: 500 },
  );
});

test('a quoted cell never closed is refused once it passes the longest record, not held to the end', () => {
  const reader = new CsvRecordReader();
  reader.push('a,b\n"', false, () => {});
  const piece = 'x'.repeat(1024 * 1024);
  assert.throws(
    () => {
      for (let i = 0; i <= MAX_RECORD_CHARS / piece.length; i++) reader.push(piece, false, () => {});
    },
    { name: 'ImportError', message: /line 2: a record longer than 4 MB/ },
  );
});

/** The reader as it was written first, a character at a time: what the faster one must agree with. */
function byCharacter(text: string): { line: number; cells: string[] }[] {
  const records: { line: number; cells: string[] }[] = [];
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  while (i < text.length) {
    const start = line;
    const cells: string[] = [];
    let cell = '';
    let quoted = false;
    let ended = false;
    while (i < text.length && !ended) {
      const ch = text[i] as string;
      if (quoted) {
        if (ch === '"' && text[i + 1] === '"') {
          cell += '"';
          i += 2;
          continue;
        }
        if (ch === '"') quoted = false;
        else {
          if (ch === '\n') line++;
          cell += ch;
        }
      } else if (ch === '"' && cell.trim() === '') {
        quoted = true;
        cell = '';
      } else if (ch === ',') {
        cells.push(cell);
        cell = '';
      } else if (ch === '\n' || ch === '\r') {
        if (ch === '\r' && text[i + 1] === '\n') i++;
        line++;
        ended = true;
      } else cell += ch;
      i++;
    }
    if (quoted) throw new Error(`line ${start}: a quoted cell is never closed`);
    cells.push(cell);
    if (!(cells.length === 1 && cells[0]?.trim() === '')) records.push({ line: start, cells });
  }
  return records;
}

test('any text, well formed or not, reads as a character-by-character reader reads it', () => {
  const text = fc.string({
    unit: fc.constantFrom('a', 'b', ',', '"', '\n', '\r', ' ', '\uFEFF'),
    maxLength: 40,
  });
  fc.assert(
    fc.property(text, (t) => {
      let expected: unknown;
      try {
        expected = byCharacter(t);
      } catch (error) {
        expected = (error as Error).message;
      }
      let actual: unknown;
      try {
        actual = [...csvRecords(t)];
      } catch (error) {
        actual = (error as { problems: string[] }).problems[0];
      }
      assert.deepEqual(actual, expected);
    }),
    { numRuns: 2000 },
  );
});
