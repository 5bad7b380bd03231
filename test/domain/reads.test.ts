/** The metered read: its request from a face's arguments, its one value, and what faces are handed. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Caller } from '../../src/domain/caller.ts';
import { type DataReads, meteredReads, readRequestFrom } from '../../src/domain/reads.ts';
import { startServer, type TestServer, walletAccount } from '../helpers/server.ts';

describe('readRequestFrom', () => {
  test('absent arguments take the defaults: 100 rows, newest first, no filters', () => {
    assert.deepEqual(readRequestFrom({}), {
      filters: {},
      from: undefined,
      to: undefined,
      fields: undefined,
      limit: 100,
      cursor: undefined,
      sort: 'desc',
    });
  });

  test('fields split at commas; a single value is one filter value', () => {
    const args = {
      filters: { symbol: 'AAPL,MSFT', maturity: 120, fomc: true, gone: undefined },
      from: '2026-01-01',
      to: '2026-02-01',
      fields: 'date,close',
      limit: 5,
      cursor: 'c',
      sort: 'asc' as const,
    };
    assert.deepEqual(readRequestFrom(args), {
      filters: { symbol: ['AAPL,MSFT'], maturity: [120], fomc: [true] },
      from: '2026-01-01',
      to: '2026-02-01',
      fields: ['date', 'close'],
      limit: 5,
      cursor: 'c',
      sort: 'asc',
    });
  });

  test('in a list, REST strings stay lists; MCP strings are values, commas quoted', () => {
    const filters = { name: ['A, Inc.', 'B'], n: [1, 2] };
    assert.deepEqual(readRequestFrom({ filters }).filters, { name: ['A, Inc.', 'B'], n: [1, 2] });
    assert.deepEqual(readRequestFrom({ filters }, 'values').filters, { name: ['"A, Inc."', 'B'], n: [1, 2] });
  });
});

test('meteredReads hands faces every metered method and no unmetered fetch', async () => {
  const calls: string[] = [];
  const fake = new Proxy(
    {},
    {
      get:
        (_target, name) =>
        (...args: unknown[]) => {
          calls.push(`${String(name)}(${args.length})`);
          return name;
        },
    },
  ) as DataReads;
  const reads = meteredReads(fake);
  assert.deepEqual(Object.keys(reads).sort(), [
    'estimate',
    'priceList',
    'read',
    'resolve',
    'sourceOf',
    'status',
  ]);
  assert.equal('fetch' in reads, false);
  assert.equal('fetchRows' in reads, false);
  const caller = {} as Caller;
  assert.equal(reads.resolve('k'), 'resolve');
  await reads.read(caller, 'req', 'k', readRequestFrom({}), { as: 'json' });
  assert.deepEqual(calls, ['resolve(1)', 'read(5)']);
});

describe('DataReads.read', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('returns one value: the page with its metadata, and its cost with list cost and euros', async () => {
    const { key } = await walletAccount(server, 100);
    const caller = await server.deps.auth.authenticate(key, 'rest');
    const read = await server.deps.reads.read(
      caller,
      'req_domain_read',
      'equities/stock-prices',
      readRequestFrom({ limit: 3 }),
      { as: 'json' },
    );
    assert.deepEqual(Object.keys(read).sort(), ['cost', 'value']);
    assert.deepEqual(read.cost, {
      costMicros: 2_000_000n,
      burnedMicros: 2_000_000n,
      balanceMicros: 98_000_000n,
      outcome: 'charged',
      listCost: 2,
      costEur: '0.2',
    });
    assert.equal(read.value.entry.key, 'equities/stock-prices');
    assert.equal(read.value.count, 3);
    assert.equal(read.value.page?.count, 3);
    assert.equal(read.value.source, 'sample');
    assert.ok(read.value.nextCursor);
  });
});
