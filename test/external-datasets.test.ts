/**
 * A dataset served from the operator's own PostgreSQL table (config `external_datasets`): read through a
 * role that may only read, metered like stored rows, refused at start when misdeclared, 503
 * dataset_unavailable (nothing charged, the rest served) while the operator's database is away.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ServiceFile } from '../src/config.ts';
import { freshDatabase, sqlOn, type TestDatabase } from './helpers/backends.ts';
import { assertLedgerBalanced, bearer, startServer, walletAccount } from './helpers/server.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';

const made = await freshDatabase();
const db = 'skip' in made ? null : (made as TestDatabase);
const skip = 'skip' in made ? made.skip : false;
const role = `tmd_reader_${Math.random().toString(36).slice(2, 8)}`;
let readerUrl = '';

const declaration = (overrides: Partial<ServiceFile['external_datasets'][number]> = {}) => ({
  dataset: 'equities/stock-prices',
  url_env: 'TMD_TEST_OPERATOR_URL',
  relation: 'market.daily_prices',
  id_column: 'id',
  columns: { symbol: 'ticker', date: 'trade_date', close: 'close_px' },
  provenance: 'Closing prices from the operator’s pricing warehouse',
  assume_indexed: false,
  ...overrides,
});

before(async () => {
  if (!db) return;
  await sqlOn(
    db.url,
    `CREATE SCHEMA market;
     CREATE TABLE market.daily_prices (
       id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, ticker text NOT NULL, exchange text, mic text,
       trade_date date NOT NULL, open float8, high float8, low float8, close_px float8, adj_close float8,
       vwap float8, volume bigint, currency text, note text);
     INSERT INTO market.daily_prices
       (ticker, exchange, mic, trade_date, open, high, low, close_px, adj_close, vwap, volume, currency)
       SELECT s, 'NASDAQ', 'XNAS', date '2026-01-01' + d, 100 + d, 101 + d, 99 + d, 100.5 + d, 100.5 + d,
              100.25 + d, 1000 * d, CASE WHEN d % 2 = 0 THEN 'USD' ELSE 'EUR' END
         FROM unnest(ARRAY['AAPL', 'MSFT', 'NVDA']) s, generate_series(0, 29) d;
     CREATE INDEX ON market.daily_prices (ticker, trade_date, id);
     CREATE INDEX ON market.daily_prices (exchange, trade_date, id);
     CREATE INDEX ON market.daily_prices (mic, trade_date, id);
     CREATE INDEX ON market.daily_prices (trade_date, id);
     CREATE TABLE market.unindexed AS SELECT * FROM market.daily_prices;
     CREATE INDEX ON market.unindexed (trade_date, id);
     CREATE INDEX ON market.unindexed (ticker);
     CREATE INDEX ON market.unindexed (mic);
     -- Columns of other types behind the same fields: how each is written as JSON is under test.
     CREATE TABLE market.typed (
       id bigint PRIMARY KEY, ticker varchar(40), exchange text, mic jsonb, trade_date date, open numeric,
       high float8, low real, close_px int, adj_close smallint, vwap float8[], volume bigint,
       currency timestamptz, flag boolean);
     INSERT INTO market.typed VALUES
       (1, 'A"B\\C', E'tab\there\nnew \u0001 é 😀', '{"b": [1, 2.50], "a": null}', '2026-01-02',
        'NaN', 'Infinity', -1.5e-7, -2147483648, 32767, ARRAY[1.5, NULL]::float8[], 9007199254740993,
        '2026-01-02 03:04:05.678+00', true),
       (2, NULL, '', 'null', '2026-01-03', 0.10, '-Infinity', 'NaN', 0, 0, '{}', -1, NULL, false),
       (3, 'x', 'y', '"s"', '2026-01-04', 12345678901234567890.000001, 1e300, 3.4e38, 1, 1, NULL, 0,
        '1999-12-31 23:59:59+00', NULL);
     CREATE INDEX ON market.typed (ticker, trade_date, id);
     CREATE INDEX ON market.typed (exchange, trade_date, id);
     CREATE INDEX ON market.typed (mic, trade_date, id);
     CREATE INDEX ON market.typed (trade_date, id);
     DROP ROLE IF EXISTS ${role}; CREATE ROLE ${role} LOGIN;
     GRANT USAGE ON SCHEMA market TO ${role};
     GRANT SELECT ON ALL TABLES IN SCHEMA market TO ${role};`,
  );
  const url = new URL(db.url);
  url.username = role;
  readerUrl = url.toString();
});

after(async () => {
  delete process.env.TMD_TEST_OPERATOR_URL;
  if (!db) return;
  await db.drop();
  await sqlOn(db.url.replace(/\/[^/]*$/, '/postgres'), `DROP ROLE IF EXISTS ${role}`).catch(() => {});
});

function serveFrom(url: string, overrides: Parameters<typeof declaration>[0] = {}) {
  process.env.TMD_TEST_OPERATOR_URL = url;
  return startServer({
    config: (config) => {
      config.external_datasets = [declaration(overrides)];
    },
  });
}

test('an operator table served, paged, filtered and metered like stored rows', { skip }, async () => {
  const server = await serveFrom(readerUrl);
  try {
    const { key, account } = await walletAccount(server, 100);
    const first = await server.request('GET', '/api/v1/data/equities/stock-prices?symbol=MSFT&limit=2', {
      headers: bearer(key),
    });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.json.data[0], {
      symbol: 'MSFT',
      exchange: 'NASDAQ',
      mic: 'XNAS',
      date: '2026-01-30',
      open: 129,
      high: 130,
      low: 128,
      close: 129.5,
      adj_close: 129.5,
      vwap: 129.25,
      volume: 29000,
      currency: 'EUR',
    });
    assert.equal(first.json.data[1].date, '2026-01-29', 'newest first, as stored data');
    assert.equal(first.json.meta.source.kind, 'external');
    assert.equal(first.json.meta.source.origin, declaration().provenance);
    assert.equal(first.json.meta.as_of, '2026-01-30');
    assert.equal(first.json.meta.sample, false);
    const cursor = first.json.meta.next_cursor as string;
    assert.ok(cursor);
    const second = await server.request(
      'GET',
      `/api/v1/data/equities/stock-prices?symbol=MSFT&limit=2&cursor=${encodeURIComponent(cursor)}`,
      { headers: bearer(key) },
    );
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(
      second.json.data.map((r: { date: string }) => r.date),
      ['2026-01-28', '2026-01-27'],
    );

    // Two symbols merge in time order; a field that is not an entity field is checked row by row.
    const both = await server.request(
      'GET',
      '/api/v1/data/market/stock-prices?symbol=AAPL,NVDA&currency=USD&to=2026-01-08&limit=4',
      { headers: bearer(key) },
    );
    assert.equal(both.status, 200, both.text);
    assert.deepEqual(
      both.json.data.map((r: { symbol: string; date: string }) => `${r.symbol} ${r.date}`),
      ['NVDA 2026-01-07', 'AAPL 2026-01-07', 'NVDA 2026-01-05', 'AAPL 2026-01-05'],
    );
    assert.ok(both.json.data.every((r: { currency: string }) => r.currency === 'USD'));

    const csv = await server.request('GET', '/api/v1/data/equities/stock-prices?symbol=NVDA&limit=1', {
      headers: { ...bearer(key), accept: 'text/csv' },
    });
    assert.equal(csv.status, 200, csv.text);
    assert.equal(
      csv.text,
      'symbol,exchange,mic,date,open,high,low,close,adj_close,vwap,volume,currency\r\nNVDA,NASDAQ,XNAS,2026-01-30,129,130,128,129.5,129.5,129.25,29000,EUR\r\n',
    );

    const burns = (await server.deps.store.listEntries(account.walletId)).filter((e) => e.kind === 'burn');
    assert.equal(burns.length, 4, 'each read charged once, as stored data is');

    const described = await server.request('GET', '/api/v1/catalog/equities/stock-prices', {
      headers: bearer(key),
    });
    assert.equal(described.status, 200, described.text);
    assert.equal(described.json.data_status.source, 'external');
    assert.equal(described.json.data_status.first, '2026-01-01');

    await assert.rejects(
      server.deps.operator.importRows('equities/stock-prices', [
        { symbol: 'ZZZ', exchange: 'NYSE', mic: 'XNYS', date: '2026-01-02', close: 1 },
      ]),
      /served from the operator's own table/,
    );
    assert.equal((await sqlOn(readerUrl, 'SELECT count(*)::int AS n FROM market.daily_prices'))[0]?.n, 90);
    await assertLedgerBalanced(server);
  } finally {
    await server.close();
  }
});

test('the operator database away: 503 dataset_unavailable, nothing charged, the rest served', {
  skip,
}, async () => {
  const target = new URL(readerUrl);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  target.host = `127.0.0.1:${proxy.port}`;
  const server = await serveFrom(target.toString());
  try {
    const { key, account } = await walletAccount(server, 100);
    const path = '/api/v1/data/equities/stock-prices?symbol=AAPL&limit=1';
    assert.equal((await server.request('GET', path, { headers: bearer(key) })).status, 200);
    const before = (await server.deps.store.getWallet(account.walletId))?.balanceMicros;
    await proxy.cut();
    const refused = await server.request('GET', path, { headers: bearer(key) });
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.json.code, 'dataset_unavailable');
    assert.match(refused.json.detail, /nothing was charged/);
    assert.equal(refused.headers.get('retry-after'), '5');
    assert.equal((await server.deps.store.getWallet(account.walletId))?.balanceMicros, before);
    const other = await server.request('GET', '/api/v1/data/calendar/events?limit=1', {
      headers: bearer(key),
    });
    assert.equal(other.status, 200, 'stored datasets are served meanwhile');
    await proxy.restore();
    assert.equal((await server.request('GET', path, { headers: bearer(key) })).status, 200);
    await assertLedgerBalanced(server);
  } finally {
    await server.close();
    await proxy.close();
  }
});

test('each row is the JSON PostgreSQL would write for its columns, whatever their types', {
  skip,
}, async () => {
  const columns = { symbol: 'ticker', date: 'trade_date', close: 'close_px', currency: 'currency' };
  const server = await serveFrom(readerUrl, { relation: 'market.typed', columns });
  try {
    const page = await server.deps.datasets.queryRows({
      dataset: 'equities/stock-prices',
      filters: {},
      descending: false,
      limit: 10,
    });
    const fields =
      server.deps.catalog.resolve('equities/stock-prices')?.dataset.fields.map((f) => f.name) ?? [];
    const pairs = fields.map((f) => `'${f}', ${(columns as Record<string, string>)[f] ?? f}`).join(', ');
    const expected = await sqlOn(
      (db as TestDatabase).url,
      `SELECT json_build_object(${pairs})::text AS json FROM market.typed ORDER BY trade_date, id`,
    );
    assert.equal(page.rows.length, 3);
    // json_build_object spaces its separators; the page's rows are compact, like stored rows.
    const compact = (json: string) => json.replaceAll('" : ', '":').replaceAll(', "', ',"');
    assert.deepEqual(
      page.rows.map((r) => compact(r.json)),
      expected.map((r) => compact(String(r.json))),
    );
    // What is under test is there: a string for NaN, an exact big integer, an escaped control character.
    assert.match(page.rows[0]?.json ?? '', /"open":"NaN","high":"Infinity"/);
    assert.match(page.rows[0]?.json ?? '', /"volume":9007199254740993/);
    assert.match(page.rows[0]?.json ?? '', /\\u0001/);
  } finally {
    await server.close();
  }
});

test('a misdeclared external dataset stops the start and says which', { skip }, async () => {
  const refusals: [Parameters<typeof declaration>[0], RegExp, string?][] = [
    [{ relation: 'market.missing' }, /market\.missing\): no such table or view/],
    [{ columns: { symbol: 'sym' } }, /no column "sym" for field symbol/],
    [{ columns: { nope: 'ticker' } }, /"nope", which is not a field/],
    [{ id_column: 'ticker' }, /id column "ticker" is text: it must be an integer column/],
    [{ relation: 'market.unindexed' }, /column "exchange" \(field exchange\) leads no index/],
    [{}, /may write to it: serve it through a role that may only read/, 'admin'],
  ];
  for (const [overrides, message, who] of refusals) {
    await assert.rejects(
      serveFrom(who === 'admin' ? (db as TestDatabase).url : readerUrl, overrides),
      message,
    );
  }
  await assert.rejects(serveFrom('not-a-url'), /TMD_TEST_OPERATOR_URL must hold a postgres:\/\/ URL/);
});
