/**
 * views/reads.ts: a read's `meta` as REST and MCP show it, from one metered read of a real catalog
 * entry; the envelope passes its own schema; an import run as clients see it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type MeteredRead, type ReadCost, type ReadResult, readRequestFrom } from '../../src/domain/reads.ts';
import { readCostView } from '../../src/views/cost.ts';
import { presentImportRun, readEnvelope, readMeta } from '../../src/views/reads.ts';
import { testCaller } from '../domain/harness.ts';
import { tinyCatalog } from '../domain/support.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { importRun } from './fixtures.ts';

// Read through an alias: `dataset` is the key asked for, `canonical_key` the dataset's own.
const entry = tinyCatalog().resolve('research/prices');
assert.ok(entry);

const run = importRun({
  id: 7,
  attribution: 'Example Exchange, 2026',
  importedAt: Date.parse('2026-11-20T08:30:00Z'),
});

const cost: ReadCost = {
  costMicros: 1_960_000n,
  burnedMicros: 1_960_000n,
  balanceMicros: 98_040_000n,
  outcome: 'charged',
  listCost: 2,
  costEur: '0.196',
};

function metered(value: Partial<ReadResult> = {}, readCost: ReadCost = cost): MeteredRead {
  const base = {
    entry,
    count: 1,
    examined: 3,
    fields: null,
    nextCursor: 'cur_2',
    source: 'import' as const,
    imports: [run],
    asOf: '2026-01-05',
    cut: false,
    rows: [],
  };
  return { value: { ...base, ...value } as ReadResult, cost: readCost };
}

const runView = {
  id: 7,
  format: 'generic',
  publisher: 'Example Exchange',
  file: 'prices.csv',
  sha256: 'ab'.repeat(32),
  imported_at: '2026-11-20T08:30:00.000Z',
  licence: 'CC-BY-4.0',
  attribution: 'Example Exchange, 2026',
};

describe('readMeta', () => {
  test('an imported page: keys, counts, fields, source with its imports, and one name per cost figure', () => {
    const read = metered();
    const meta = readMeta(read, readCostView(read.cost));
    assert.deepEqual(meta, {
      dataset: 'research/prices',
      canonical_key: 'equities/prices',
      count: 1,
      next_cursor: 'cur_2',
      examined: 3,
      fields: ['date', 'symbol', 'close'],
      time_field: 'date',
      sample: false,
      source: { kind: 'import', imports: [runView] },
      as_of: '2026-01-05',
      cost: {
        list_cost: '2',
        token_cost: '1.96',
        tokens_burned: '1.96',
        credits_remaining: '98.04',
        outcome: 'charged',
      },
    });
    const envelope = { data: [{ date: '2026-01-05', symbol: 'MSFT', close: 480.1 }], meta };
    assert.deepEqual(readEnvelope.parse(envelope), envelope);
  });

  test('a sample page says so in a notice; projected fields are listed as asked', () => {
    const read = metered({ source: 'sample', imports: [], fields: ['date', 'close'], nextCursor: null });
    const meta = readMeta(read, readCostView(read.cost));
    assert.equal(meta.sample, true);
    assert.equal(meta.notice, 'Generated sample data, not real observations.');
    assert.deepEqual(meta.source, { kind: 'sample', imports: [] });
    assert.deepEqual(meta.fields, ['date', 'close']);
    assert.equal(meta.next_cursor, null);
    assert.equal(readEnvelope.safeParse({ data: [], meta }).success, true);
  });

  test("external rows carry the operator's origin; a zero-burn read shows 0 burned and its notional cost", () => {
    const notional: ReadCost = { ...cost, burnedMicros: 0n, outcome: 'notional', costEur: '0' };
    const read = metered({ source: 'external', origin: 'Our warehouse', imports: [], asOf: null }, notional);
    const meta = readMeta(read, readCostView(read.cost));
    assert.deepEqual(meta.source, { kind: 'external', origin: 'Our warehouse', imports: [] });
    assert.equal(meta.as_of, null);
    assert.equal('notice' in meta, false);
    assert.deepEqual(meta.cost, {
      list_cost: '2',
      token_cost: '1.96',
      tokens_burned: '0',
      credits_remaining: '98.04',
      outcome: 'notional',
    });
    assert.equal(readEnvelope.safeParse({ data: [], meta }).success, true);
  });

  test('the envelope refuses a figure that is not an exact token amount, or an unknown outcome', () => {
    const read = metered();
    const meta = readMeta(read, readCostView(read.cost));
    const bad = { data: [], meta: { ...meta, cost: { ...meta.cost, tokens_burned: '1.9600001' } } };
    assert.deepEqual(
      readEnvelope.safeParse(bad).error?.issues.map((i) => i.path.join('.')),
      ['meta.cost.tokens_burned'],
    );
    const refunded = { data: [], meta: { ...meta, cost: { ...meta.cost, outcome: 'refunded' } } };
    assert.equal(readEnvelope.safeParse(refunded).success, false);
  });
});

test('presentImportRun: an import run as clients see it; no attribution is null', () => {
  assert.deepEqual(presentImportRun(run), runView);
  assert.equal(presentImportRun({ ...run, attribution: null }).attribution, null);
});

describe('the meta of a real metered read', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('a sample page of stocks/prices, charged 2 tokens: its meta passes the envelope schema', async () => {
    const { caller } = await testCaller(server, { tokens: 10 });
    const params = readRequestFrom({ filters: { symbol: 'AAPL' }, limit: 3, fields: 'date,close' });
    const read = await server.deps.reads.read(caller, 'views-read-1', 'stocks/prices', params);
    const meta = readMeta(read, readCostView(read.cost));
    assert.deepEqual(
      { ...meta, next_cursor: null, as_of: null },
      {
        dataset: 'stocks/prices',
        canonical_key: 'stocks/prices',
        count: 3,
        next_cursor: null,
        examined: meta.examined,
        fields: ['date', 'close'],
        time_field: 'date',
        sample: true,
        notice: 'Generated sample data, not real observations.',
        source: { kind: 'sample', imports: [] },
        as_of: null,
        cost: {
          list_cost: '2',
          token_cost: '2',
          tokens_burned: '2',
          credits_remaining: '8',
          outcome: 'charged',
        },
      },
    );
    assert.equal(typeof meta.next_cursor, 'string');
    assert.match(meta.as_of ?? '', /^\d{4}-\d{2}-\d{2}/);
    assert.ok(meta.examined >= 3, `examined ${meta.examined}`);
    const data = (read.value.rows ?? []).map((row) => JSON.parse(row.json) as Record<string, unknown>);
    assert.equal(data.length, 3);
    assert.equal(readEnvelope.safeParse({ data, meta }).success, true);
  });
});
