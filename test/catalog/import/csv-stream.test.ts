/** CsvRowStream: a CSV file handed on in batches as it is parsed, and refused whole on a bad record. */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { CsvRowStream } from '../../../src/catalog/import/csv-stream.ts';
import type { Row } from '../../../src/catalog/types.ts';
import { rates } from '../../helpers/import-dataset.ts';

const input = (text: string | Buffer, chunk = 7) => {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) chunks.push(bytes.subarray(i, i + chunk));
  return Readable.from(chunks);
};

async function batchesOf(stream: CsvRowStream): Promise<Row[][]> {
  const out: Row[][] = [];
  for await (const batch of stream.batches()) out.push(batch);
  return out;
}

test('rows come in batches of batchRows; progress is told every progressEvery rows and at the end', async () => {
  const text = 'date,series,value\n2024-01-01,A,1\n2024-01-02,A,2\n\n2024-01-03,A,3\n';
  const progress: { rows: number; bytes: number }[] = [];
  const stream = new CsvRowStream(rates, input(text), {
    name: 'a.csv',
    batchRows: 2,
    progressEvery: 2,
    onProgress: (p) => progress.push(p),
  });
  assert.deepEqual(await batchesOf(stream), [
    [
      { date: '2024-01-01', series: 'A', value: 1, open_interest_all: null },
      { date: '2024-01-02', series: 'A', value: 2, open_interest_all: null },
    ],
    [{ date: '2024-01-03', series: 'A', value: 3, open_interest_all: null }],
  ]);
  assert.equal(stream.rows, 3);
  assert.deepEqual(stream.sources, {
    date: 'column "date"',
    series: 'column "series"',
    value: 'column "value"',
    open_interest_all: null,
  });
  assert.deepEqual(stream.ignoredColumns, []);
  assert.deepEqual(
    progress.map((p) => p.rows),
    [2, 3],
  );
  assert.equal(progress.at(-1)?.bytes, Buffer.byteLength(text));
});

test('after a refused record no batch is handed on; the file is read to its end and every line named', async () => {
  const text = 'date,series,value\n2024-01-01,A,1\n2024-01-02,A,x\n2024-01-03,A\n2024-01-04,A,"4\n"\n';
  const stream = new CsvRowStream(rates, input(text), { name: 'b.csv', batchRows: 1 });
  const seen: Row[][] = [];
  await assert.rejects(
    (async () => {
      for await (const batch of stream.batches()) seen.push(batch);
    })(),
    {
      name: 'ImportError',
      message: 'The CSV file is malformed.\n  line 4: 2 cells, but the header has 3 columns',
    },
  );
  assert.deepEqual(seen, [[{ date: '2024-01-01', series: 'A', value: 1, open_interest_all: null }]]);
  assert.equal(stream.rows, 3);
});

test('invalid values alone are counted and listed with their lines', async () => {
  const text = 'date,series,value\n2024-01-01,A,x\n2024-13-01,A,1\n';
  await assert.rejects(batchesOf(new CsvRowStream(rates, input(text), { name: 'c.csv' })), {
    message:
      '2 invalid value(s) in the file; nothing was imported.\n' +
      '  line 2: column "value" -> value (number): "x" is not a number\n' +
      '  line 3: column "date" -> date (date): "2024-13-01" is not a date (YYYY-MM-DD)',
  });
});

test('an empty file, a header alone, a bad header and bytes that are not UTF-8 are refused', async () => {
  const refuse = (text: string | Buffer, message: string) =>
    assert.rejects(batchesOf(new CsvRowStream(rates, input(text), { name: 'd.csv' })), { message });
  await refuse('', 'The file is empty: no header row.');
  await refuse('date,series,value\n', 'The file holds no rows.');
  await refuse(
    'date,date,series\n2024-01-01,A,1\n',
    'The CSV file is malformed.\n  line 1: the header names "date" twice',
  );
  await refuse(
    Buffer.from([0x64, 0x61, 0x74, 0x65, 0x0a, 0xe9, 0x0a]),
    'd.csv is not UTF-8 text; convert it first (e.g. iconv -f latin1 -t utf-8).',
  );
});
