/** The encoders of one metered read: REST JSON, REST CSV and the MCP tool result, byte for byte. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CatalogEntry } from '../../src/catalog/catalog.ts';
import type { MeteredRead, ReadCost, ReadResult } from '../../src/domain/reads.ts';
import { spliceRaw } from '../../src/views/raw-parts.ts';
import { encodeReadCsv, encodeReadJson, encodeReadTool } from '../../src/views/read-encoders.ts';

const entry = {
  key: 'test/prices',
  domain: 'test',
  name: 'prices',
  dataset: { key: 'test/prices', time_field: 'date' },
  listCost: 5,
  p0: false,
  columns: ['date', 'symbol', 'close'],
  csvColumns: 'date,symbol,close',
} as unknown as CatalogEntry;

const cost: ReadCost = {
  costMicros: 4_900_000n,
  burnedMicros: 4_900_000n,
  balanceMicros: 995_100_000n,
  outcome: 'charged',
  listCost: 5,
  costEur: '0.49',
};

const rows = [
  { id: 2, t: '2026-01-02', json: '{"date":"2026-01-02","symbol":"AAPL","close":1.5}', importId: null },
  { id: 1, t: '2026-01-01', json: '{"date":"2026-01-01","symbol":"=X, Y","close":null}', importId: null },
];

function read(value: Partial<ReadResult>): MeteredRead {
  const base = {
    entry,
    count: 2,
    examined: 2,
    fields: null,
    nextCursor: 'cur1',
    source: 'import' as const,
    imports: [],
    asOf: '2026-01-02',
    cut: false,
    rows,
  };
  return { value: { ...base, ...value } as ReadResult, cost };
}

const costHeaders = {
  'x-token-cost': '4.9',
  'x-request-tokens': '4.9',
  'x-request-cost-eur': '0.49',
  'x-credits-remaining': '995.1',
  'x-data-sample': 'false',
};

const meta = {
  dataset: 'test/prices',
  canonical_key: 'test/prices',
  count: 2,
  next_cursor: 'cur1',
  examined: 2,
  fields: ['date', 'symbol', 'close'],
  time_field: 'date',
  sample: false,
  source: { kind: 'import', imports: [] },
  as_of: '2026-01-02',
  cost: {
    list_cost: '5',
    token_cost: '4.9',
    tokens_burned: '4.9',
    credits_remaining: '995.1',
    outcome: 'charged',
  },
};

test('JSON: the envelope with the stored rows as stored and one name per cost figure', () => {
  const answer = encodeReadJson(read({}));
  assert.equal(answer.status, 200);
  assert.equal(answer.contentType, 'application/json; charset=utf-8');
  assert.deepEqual(answer.headers, costHeaders);
  assert.equal(answer.body, `{"data":[${rows[0]?.json},${rows[1]?.json}],"meta":${JSON.stringify(meta)}}`);
});

test('JSON: a page of text is spliced in; a projection is rendered from the rows', () => {
  const page = read({
    rows: undefined,
    page: { count: 2, json: 'A,B', next: null, imports: [], examined: 2 },
  });
  assert.match(encodeReadJson(page).body, /^\{"data":\[A,B\],"meta":/);
  const projected = encodeReadJson(read({ fields: ['close'] }));
  assert.match(projected.body, /^\{"data":\[\{"close":1\.5\},\{"close":null\}\],"meta":\{/);
  assert.deepEqual(JSON.parse(projected.body).meta.fields, ['close']);
});

test('CSV: a header row, formula-guarded cells, the cursor and the file name in headers', () => {
  const answer = encodeReadCsv(read({}));
  assert.equal(answer.contentType, 'text/csv; charset=utf-8');
  assert.deepEqual(answer.headers, {
    ...costHeaders,
    'x-next-cursor': 'cur1',
    'content-disposition': 'inline; filename="test_prices.csv"',
  });
  assert.equal(answer.body, 'date,symbol,close\r\n2026-01-02,AAPL,1.5\r\n2026-01-01,"\'=X, Y",\r\n');
  // Stored lines are joined by the store: the encoder adds the header and the last line end.
  const stored = encodeReadCsv(
    read({
      rows: undefined,
      page: { count: 1, json: '', csv: 'l1', next: null, imports: [], examined: 2 },
      nextCursor: null,
    }),
  );
  assert.equal(stored.body, 'date,symbol,close\r\nl1\r\n');
  assert.equal(stored.headers['x-next-cursor'], undefined);
});

test('MCP: CSV text, the envelope, the cost note and the way on, with raw parts put back once', () => {
  const { result, cost: view, raw } = encodeReadTool(read({}), { limit: 100, sort: 'desc' });
  assert.deepEqual(view, {
    token_cost: '4.9',
    tokens_burned: '4.9',
    cost_eur: '0.49',
    credits_remaining: '995.1',
    outcome: 'charged',
  });
  assert.equal(raw?.length, 2);
  const message = JSON.parse(spliceRaw(JSON.stringify(result), raw ?? []));
  assert.deepEqual(message.content, [
    {
      type: 'text',
      text: 'test/prices: 2 rows, newest first\ndate,symbol,close\n2026-01-02,AAPL,1.5\n2026-01-01,"\'=X, Y",\n',
    },
    {
      type: 'text',
      text: 'Cost: 4.9 tokens (list 5); burned 4.9 tokens = 0.49 EUR; 995.1 tokens left.',
    },
    {
      type: 'text',
      text: 'next_cursor: cur1\nNext page: pass it as cursor with the same arguments; it is another read at 4.9 tokens.',
    },
  ]);
  assert.deepEqual(message.structuredContent, { data: rows.map((r) => JSON.parse(r.json)), meta });
  assert.deepEqual(message._meta, {
    'tmd.example/cost': {
      token_cost: '4.9',
      tokens_burned: '4.9',
      cost_eur: '0.49',
      credits_remaining: '995.1',
      list_cost: '5',
      outcome: 'charged',
      request_tokens: '4.9',
      request_cost_eur: '0.49',
    },
  });
});

test('MCP: an empty last page, cut short or not, says so', () => {
  const empty = encodeReadTool(read({ rows: [], count: 0, nextCursor: null, cut: false }), {
    limit: 10,
    sort: 'asc',
  });
  const message = JSON.parse(spliceRaw(JSON.stringify(empty.result), empty.raw ?? []));
  assert.equal(message.content[0].text, 'test/prices: 0 rows, oldest first\n(no rows match)\n');
  assert.equal(message.content[2].text, 'No more rows: this is the last page.');
  const cut = encodeReadTool(read({ cut: true }), { limit: 1000, sort: 'desc' });
  const first = JSON.parse(spliceRaw(JSON.stringify(cut.result), cut.raw ?? []));
  assert.match(
    first.content[0].text,
    /^test\/prices: 2 rows, newest first \(cut short of limit 1000 to stay within about 20,000 tokens of text; ask for fewer fields for more rows a page\)\n/,
  );
});
