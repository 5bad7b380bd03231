/** Data reads: the envelope, filters, fields, paging, sorting, CSV, and the catalog. */
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { csvCell } from '../src/catalog/csv.ts';
import { CursorCodec, planRead, quoteValue, splitValues } from '../src/catalog/read-plan.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { refusalOf, rpc, toolCall } from './helpers/mcp.ts';
import {
  assertLedgerBalanced,
  bearer,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

let server: TestServer;
let key: string;
before(async () => {
  // Limits are not what this file tests: room for the concurrency it needs.
  server = await startServer({
    config: (c) => {
      for (const tier of c.pricing.loyalty_tiers) tier.rate_limit = 100_000;
      c.limits.wallet.concurrent = 1000;
    },
  });
  key = (await walletAccount(server, 1000)).key;
});
after(async () => {
  await assertLedgerBalanced(server);
  await server.close();
});

const get = (path: string, headers: Record<string, string> = {}) =>
  server.request('GET', path, { headers: { ...bearer(key), ...headers } });

describe('JSON reads', () => {
  test('the envelope has data and meta, 100 rows by default, newest first, marked as sample', async () => {
    const res = await get('/api/v1/data/equities/stock-prices');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.data.length, 100);
    assert.equal(res.json.meta.count, 100);
    assert.equal(res.json.meta.dataset, 'equities/stock-prices');
    assert.equal(res.json.meta.sample, true);
    assert.equal(res.headers.get('x-data-sample'), 'true');
    assert.equal(typeof res.json.meta.next_cursor, 'string');
    const times = res.json.data.map((r: Record<string, string>) => r[res.json.meta.time_field]);
    assert.deepEqual(times, [...times].sort().reverse(), 'descending by default');
    assert.equal(res.json.meta.cost.token_cost, '2');
    assert.equal(res.json.meta.cost.outcome, 'charged');
  });

  test('an alias reads the same rows as its canonical key', async () => {
    const a = await get('/api/v1/data/equities/stock-prices?symbol=AAPL&limit=5');
    const b = await get('/api/v1/data/market/stock-prices?symbol=AAPL&limit=5');
    assert.equal(a.status, 200);
    assert.deepEqual(a.json.data, b.json.data);
    assert.equal(b.json.meta.dataset, 'market/stock-prices');
    assert.equal(b.json.meta.canonical_key, a.json.meta.canonical_key);
  });

  test('entity filters, comma-separated or repeated, select only those entities', async () => {
    const comma = await get('/api/v1/data/equities/stock-prices?symbol=AAPL,MSFT&limit=1000');
    const repeated = await get('/api/v1/data/equities/stock-prices?symbol=AAPL&symbol=MSFT&limit=1000');
    assert.equal(comma.status, 200);
    const symbols = new Set(comma.json.data.map((r: { symbol: string }) => r.symbol));
    assert.deepEqual([...symbols].sort(), ['AAPL', 'MSFT']);
    assert.deepEqual(comma.json.data, repeated.json.data);
  });

  test('from/to (and start_date/end_date) bound the time field inclusively', async () => {
    const all = await get('/api/v1/data/equities/stock-prices?symbol=AAPL&sort=asc&limit=1000');
    const dates: string[] = all.json.data.map((r: { date: string }) => r.date);
    const from = dates[2] as string;
    const to = dates[5] as string;
    const res = await get(`/api/v1/data/equities/stock-prices?symbol=AAPL&from=${from}&to=${to}&sort=asc`);
    assert.deepEqual(
      res.json.data.map((r: { date: string }) => r.date),
      dates.slice(2, 6),
    );
    const alias = await get(
      `/api/v1/data/equities/stock-prices?symbol=AAPL&start_date=${from}&end_date=${to}&order=asc`,
    );
    assert.deepEqual(alias.json.data, res.json.data);
  });

  test('time bounds with a time of day: to the second, a missing Z is UTC, both ends inclusive', async () => {
    const all = await get('/api/v1/data/calendar/events?sort=asc&limit=1000');
    const times: string[] = all.json.data.map((r: { datetime: string }) => r.datetime);
    const at = times.find((t) => t.endsWith(':00Z') && times.filter((u) => u === t).length === 1) as string;
    assert.match(at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00Z$/);
    const between = async (from: string, to: string) =>
      (await get(`/api/v1/data/calendar/events?from=${from}&to=${to}&sort=asc&limit=1000`)).json.data.map(
        (r: { datetime: string }) => r.datetime,
      );
    for (const spelling of [at, at.slice(0, 19), at.slice(0, 16), `${at.slice(0, 16)}Z`]) {
      assert.deepEqual(await between(spelling, spelling), [at], spelling);
    }
    const day = at.slice(0, 10);
    assert.deepEqual(
      await between(day, at.slice(0, 16)),
      times.filter((t) => t.startsWith(day) && t <= at),
    );
  });

  test('the store gets bounds written as stored times, never with a control character (PostgreSQL text cannot hold NUL)', () => {
    const entry = server.deps.reads.resolve('calendar/events');
    const plan = (from: string | undefined, to: string | undefined) =>
      planRead(entry, { filters: {}, from, to, limit: 10, sort: 'asc' }, new CursorCodec(Buffer.alloc(32)))
        .query;
    assert.deepEqual(
      [plan('2027-12-31T23:30', '2027-12-31T23:30').from, plan(undefined, '2027-12-31T23:30').toExclusive],
      ['2027-12-31T23:30:00Z', '2027-12-31T23:30:01Z'],
    );
    // An exclusive bound at midnight is written as a date, which sorts before every time of its day.
    assert.equal(plan(undefined, '2027-12-31T23:59:59Z').toExclusive, '2028-01-01');
    assert.equal(plan('2027-12-31', '2027-12-31').toExclusive, '2028-01-01');
    assert.equal(plan('2027-12-31', undefined).from, '2027-12-31');
  });

  test('a reversed range, an impossible date and a control character in a filter are 400s that burn nothing', async () => {
    const wallet = await walletAccount(server, 10);
    const before = await server.deps.store.getWallet(wallet.account.walletId);
    for (const query of [
      'calendar/events?from=2027-12-31T23:00:00Z&to=2027-12-31T01:00:00Z',
      'calendar/events?from=2024-02-30',
      'calendar/events?to=2027-12-31T25:00Z',
      'equities/stock-prices?symbol=A%00B',
      'equities/stock-prices?symbol=A%0AB',
    ]) {
      const res = await server.request('GET', `/api/v1/data/${query}`, { headers: bearer(wallet.key) });
      assert.equal(res.status, 400, `${query}: ${res.text}`);
      assert.equal(res.json.code, 'invalid_request', query);
    }
    assert.deepEqual(await server.deps.store.getWallet(wallet.account.walletId), before);
  });

  test('a top-up made elsewhere (another node, tmd credit) is read before a read is refused for want of tokens', async () => {
    const wallet = await walletAccount(server, 1);
    const cost2 = '/api/v1/data/equities/stock-prices?limit=1';
    const refused = await server.request('GET', cost2, { headers: bearer(wallet.key) });
    assert.equal(refused.status, 402);
    assert.equal(refused.json.code, 'insufficient_tokens');
    // Another process on the same database: this node's key cache has not seen the credit.
    const elsewhere = new SqliteStore(join(server.dir, 'tmd.sqlite'));
    try {
      await elsewhere.credit({
        walletId: wallet.account.walletId,
        kind: 'topup',
        amountMicros: 10_000_000n,
        at: server.clock.now(),
      });
    } finally {
      await elsewhere.close();
    }
    const served = await server.request('GET', cost2, { headers: bearer(wallet.key) });
    assert.equal(served.status, 200, served.text);
    assert.equal(served.headers.get('x-credits-remaining'), '9');
  });

  test('on a dataset with an entity field named format, format filters it; Accept picks CSV there', async () => {
    const path = '/api/v1/data/geospatial/spatial-asset-manifest';
    const all = await get(`${path}?limit=1000`);
    const formats = [...new Set(all.json.data.map((r: { format: string }) => r.format))] as string[];
    assert.ok(formats.length > 1, formats.join());
    const one = formats[0] as string;
    const filtered = await get(`${path}?format=${encodeURIComponent(one)}&limit=1000`);
    assert.equal(filtered.status, 200, filtered.text);
    assert.ok(filtered.json.data.length > 0);
    assert.ok(filtered.json.data.every((r: { format: string }) => r.format === one));
    const csv = await get(`${path}?format=${encodeURIComponent(one)}&limit=5`, { accept: 'text/csv' });
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
    const elsewhere = await get('/api/v1/data/equities/stock-prices?format=xml');
    assert.equal(elsewhere.status, 400);
    assert.equal(elsewhere.json.code, 'invalid_request');
  });

  test('fields projects the rows', async () => {
    const res = await get('/api/v1/data/equities/stock-prices?fields=symbol,close&limit=3');
    assert.equal(res.status, 200);
    assert.equal(res.json.data.length, 3);
    for (const row of res.json.data) assert.deepEqual(Object.keys(row), ['symbol', 'close']);
    assert.deepEqual(res.json.meta.fields, ['symbol', 'close']);
  });

  test('the cursor pages through every row exactly once, each page a metered read', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    let lastBalance = Number.POSITIVE_INFINITY;
    do {
      const suffix: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const res = await get(`/api/v1/data/equities/stock-prices?symbol=AAPL,MSFT&limit=7&sort=asc${suffix}`);
      assert.equal(res.status, 200, res.text);
      for (const row of res.json.data) seen.push(`${row.symbol}@${row.date}`);
      const balance = Number(res.headers.get('x-credits-remaining'));
      assert.ok(balance < lastBalance, 'each page burns');
      lastBalance = balance;
      cursor = res.json.meta.next_cursor;
      pages++;
    } while (cursor);
    const whole = await get('/api/v1/data/equities/stock-prices?symbol=AAPL,MSFT&limit=1000&sort=asc');
    assert.deepEqual(
      seen,
      whole.json.data.map((r: { symbol: string; date: string }) => `${r.symbol}@${r.date}`),
    );
    assert.equal(pages, Math.ceil(seen.length / 7));
  });
});

describe('bounds and typed filters', () => {
  const yields = '/api/v1/data/macro/treasury-yield-series';
  const datesOf = (res: { json: { data: { date: string }[] } }) => [
    ...new Set(res.json.data.map((r) => r.date)),
  ];

  test('on a date time field, a from at midnight keeps its own day; a later time starts the next day', async () => {
    const newest = await get(`${yields}?limit=1`);
    const day = newest.json.data[0].date as string;
    const byDate = await get(`${yields}?from=${day}&to=${day}&limit=1000`);
    assert.equal(byDate.status, 200);
    assert.deepEqual(datesOf(byDate), [day]);
    for (const from of [`${day}T00:00:00Z`, `${day}T00:00`, `${day}T00:00:00`]) {
      const res = await get(`${yields}?from=${from}&to=${day}&limit=1000`);
      assert.equal(res.status, 200, from);
      assert.equal(res.json.data.length, byDate.json.data.length, `from=${from} is the start of ${day}`);
    }
    const later = await get(`${yields}?from=${day}T00:00:01Z&limit=1000`);
    assert.equal(later.json.data.length, 0, 'no day starts after the newest day began');
  });

  test('on a date time field, a to with a time takes in its own day only, up to its last second', async () => {
    const newest = await get(`${yields}?limit=1&sort=asc`);
    const day = newest.json.data[0].date as string;
    const byDate = await get(`${yields}?to=${day}&limit=1000`);
    assert.ok(byDate.json.data.length > 0);
    for (const to of [`${day}T23:59:59Z`, `${day}T00:00:00Z`, `${day}T12:00`]) {
      const res = await get(`${yields}?to=${to}&limit=1000`);
      assert.equal(res.status, 200, to);
      assert.deepEqual(datesOf(res), [day], `to=${to} stops at ${day}`);
    }
  });

  test('limit is a whole number of digits: 0x10, 1e1, 2.0 or an empty value is a free 400, on MCP as on REST', async () => {
    for (const limit of ['0x10', '1e1', '2.0', '', ' 5']) {
      const res = await get(`${yields}?limit=${encodeURIComponent(limit)}`);
      assert.equal(res.status, 400, `limit=${limit}`);
      assert.equal(res.json.code, 'invalid_request');
    }
    for (const limit of ['0x10', true, [7], 2.5]) {
      const res = await rpc(
        server,
        bearer(key),
        toolCall('read_dataset', { dataset: 'macro/treasury-yield-series', limit }),
      );
      assert.equal(refusalOf(res.json.result).code, 'invalid_request', JSON.stringify(limit));
    }
    assert.equal((await get(`${yields}?limit=007`)).json.data.length, 7, 'leading zeros are still digits');
  });

  test('to=9999-12-31 (or its last second) is no upper bound at all', async () => {
    const open = await get(`${yields}?limit=5`);
    for (const to of ['9999-12-31', '9999-12-31T23:59:59Z']) {
      const res = await get(`${yields}?to=${to}&limit=5`);
      assert.equal(res.status, 200, to);
      assert.deepEqual(res.json.data, open.json.data, `to=${to}`);
    }
  });

  test('number filters match by value (01 is 1); booleans take true/false/1/0 in any case; other values are 400 and free', async () => {
    const one = await get(`${yields}?limit=1`);
    const months = one.json.data[0].maturity_months as number;
    const exact = await get(`${yields}?maturity_months=${months}&limit=50`);
    assert.ok(exact.json.data.length > 0);
    assert.ok(exact.json.data.every((r: { maturity_months: number }) => r.maturity_months === months));
    const padded = await get(`${yields}?maturity_months=0${months}&limit=50`);
    assert.deepEqual(padded.json.data, exact.json.data, 'a leading zero is the same number');

    const events = '/api/v1/data/calendar/fed-events';
    const yes = await get(`${events}?is_fomc_meeting=true&limit=50`);
    assert.ok(yes.json.data.length > 0);
    for (const spelling of ['TRUE', 'True', '1']) {
      const res = await get(`${events}?is_fomc_meeting=${spelling}&limit=50`);
      assert.deepEqual(res.json.data, yes.json.data, spelling);
    }
    // MCP takes the same filters as JSON numbers and booleans.
    for (const [dataset, filters, rest] of [
      ['macro/treasury-yield-series', { maturity_months: months }, exact],
      ['macro/treasury-yield-series', { maturity_months: [months, 99999] }, exact],
      ['calendar/fed-events', { is_fomc_meeting: true }, yes],
    ] as const) {
      const mcp = await rpc(server, bearer(key), toolCall('read_dataset', { dataset, filters, limit: 50 }));
      assert.equal(mcp.status, 200, mcp.text);
      assert.equal(mcp.json.result.isError, undefined, mcp.text);
      assert.deepEqual(mcp.json.result.structuredContent.data, rest.json.data, JSON.stringify(filters));
    }
    const no = await get(`${events}?is_fomc_meeting=0&limit=50`);
    assert.ok(no.json.data.every((r: { is_fomc_meeting: boolean }) => r.is_fomc_meeting === false));

    const long = await get(`${yields}?maturity_months=0000000000000000${months}&limit=50`);
    assert.deepEqual(long.json.data, exact.json.data, 'any number of leading zeros');
    const big = await get(`${yields}?maturity_months=9007199254740991&limit=5`);
    assert.equal(big.status, 200, 'the largest safe integer is a value (matching nothing)');
    assert.equal(big.json.data.length, 0);

    const before = await get('/api/v1/me');
    for (const [path, field] of [
      [`${yields}?maturity_months=9007199254740993`, 'maturity_months'],
      [`${yields}?maturity_months=twelve`, 'maturity_months'],
      [`${yields}?maturity_months=1.5`, 'maturity_months'],
      [`${yields}?maturity_months=0x10`, 'maturity_months'],
      [`${events}?is_fomc_meeting=yes`, 'is_fomc_meeting'],
    ] as const) {
      const res = await get(path);
      assert.equal(res.status, 400, path);
      assert.equal(res.json.code, 'invalid_request');
      assert.equal(res.json.errors[0].path, field);
    }
    const after = await get('/api/v1/me');
    assert.equal(after.json.wallet.balance, before.json.wallet.balance, 'refused reads are free');
  });
});

describe('CSV reads', () => {
  test('format=csv and Accept: text/csv give the same CSV, with the cost headers', async () => {
    const byParam = await get('/api/v1/data/equities/stock-prices?symbol=AAPL&limit=3&format=csv');
    const byAccept = await get('/api/v1/data/equities/stock-prices?symbol=AAPL&limit=3', {
      accept: 'text/csv',
    });
    assert.equal(byParam.status, 200);
    assert.match(byParam.headers.get('content-type') ?? '', /^text\/csv/);
    assert.equal(byParam.text, byAccept.text);
    const lines = byParam.text.trimEnd().split('\r\n');
    assert.equal(lines.length, 4);
    assert.ok(lines[0]?.split(',').includes('symbol'));
    assert.equal(byParam.headers.get('x-token-cost'), '2');
    assert.ok(byParam.headers.get('x-next-cursor'));
  });

  test('full-row CSV (REST and MCP) joins lines stored at load; rows loaded without them render the same bytes', async () => {
    const dataset = 'macro/fed-ddp-series';
    const entry = server.deps.reads.resolve(dataset);
    // Awkward but real-shaped rows: formula starts, quotes, commas, line breaks, nulls, a missing field.
    const rows = Array.from({ length: 30 }, (_, i) => {
      const row: Record<string, string | number | boolean | null> = {};
      entry.columns.forEach((column, c) => {
        if (column === entry.dataset.time_field)
          row[column] = `2026-01-${String(1 + (i % 28)).padStart(2, '0')}`;
        else if (c % 4 === 0) row[column] = i % 3 === 0 ? null : i * 1.25 - 7;
        else if (c % 4 === 1)
          row[column] = ['=SUM(A1)', 'plain', 'a, "b"', 'two\nlines', ' pad '][i % 5] as string;
        else if (c % 4 === 2) row[column] = i % 2 === 0;
        else if (i % 4 !== 0) row[column] = `v${i}`;
      });
      return row;
    });
    const read = async () => {
      const rest = await get(`/api/v1/data/${dataset}?limit=50&format=csv`);
      assert.equal(rest.status, 200, rest.text);
      const mcp = await rpc(server, bearer(key), toolCall('read_dataset', { dataset, limit: 50 }));
      assert.equal(mcp.status, 200, mcp.text);
      return { rest: rest.text, mcp: mcp.json.result.content[0].text as string };
    };
    const { store } = server.deps;
    assert.equal(
      await store.loadRows(entry.dataset.key, entry.dataset.time_field, rows, 'import', entry.columns),
      true,
    );
    const stored = (
      await store.queryRows({
        dataset: entry.dataset.key,
        filters: {},
        descending: true,
        limit: 1,
        csvColumns: entry.csvColumns,
      })
    ).rows;
    assert.equal(typeof stored[0]?.csv, 'string', 'the load stored CSV lines');
    const fromLines = await read();
    // The same rows without stored lines (as loaded before they existed): rendered from the JSON per read.
    assert.equal(await store.loadRows(entry.dataset.key, entry.dataset.time_field, rows, 'import'), true);
    const rendered = await read();
    assert.equal(fromLines.rest, rendered.rest);
    assert.equal(fromLines.mcp, rendered.mcp);
    // And both equal the CSV written from the JSON answer with the REST rules.
    const json = await get(`/api/v1/data/${dataset}?limit=50`);
    const expected = [
      entry.columns.map((c) => csvCell(c)).join(','),
      ...json.json.data.map((r: Record<string, string | number | boolean | null>) =>
        entry.columns.map((c) => csvCell(r[c])).join(','),
      ),
    ];
    assert.equal(fromLines.rest, `${expected.join('\r\n')}\r\n`);
    assert.ok(fromLines.mcp.includes(`\n${expected.join('\n')}\n`), fromLines.mcp);
  });

  test('cells that a spreadsheet would run as formulas are neutralised', () => {
    assert.equal(csvCell('=HYPERLINK("http://x")'), `"'=HYPERLINK(""http://x"")"`);
    assert.equal(csvCell('+1'), "'+1");
    assert.equal(csvCell('-2+3'), "'-2+3");
    assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(csvCell('\tcmd'), "'\tcmd");
    assert.equal(csvCell(-5), '-5', 'numbers are numbers');
    assert.equal(csvCell('a,b'), '"a,b"');
    assert.equal(csvCell(null), '');
  });
});

describe('catalog', () => {
  test('lists and filters by domain, free and cost, without a key', async () => {
    const all = await server.request('GET', '/api/v1/catalog');
    assert.equal(all.status, 200);
    const free = await server.request('GET', '/api/v1/catalog?free=true');
    assert.ok(free.json.data.every((e: { p0: boolean }) => e.p0));
    const cheap = await server.request('GET', '/api/v1/catalog?max_cost=1');
    assert.ok(cheap.json.data.length >= 10);
    assert.ok(cheap.json.data.every((e: { list_cost: number }) => e.list_cost <= 1));
    for (const bad of ['', '0x10', '-1', '1.5', 'one']) {
      const res = await server.request('GET', `/api/v1/catalog?max_cost=${bad}`);
      assert.equal(res.status, 400, `max_cost=${bad} is no whole number, not 0 or 16`);
      assert.equal(res.json.code, 'invalid_request');
    }
    const cftc = await server.request('GET', '/api/v1/catalog?domain=cftc');
    assert.ok(cftc.json.data.every((e: { domain: string }) => e.domain === 'cftc'));
    assert.ok(cftc.json.data.length >= 14);
  });

  test('describes a dataset: fields, cost, P0 flag, aliases, example', async () => {
    const res = await server.request('GET', '/api/v1/catalog/positioning/legacy_futures-facts');
    assert.equal(res.status, 200);
    assert.equal(res.json.list_cost, 5);
    assert.equal(res.json.p0, true);
    assert.ok(res.json.aliases.includes('cftc/legacy_futures-facts'));
    assert.ok(res.json.fields.some((f: { name: string }) => /open_interest/.test(f.name)));
    assert.match(res.json.example, /^\/api\/v1\/data\/positioning\/legacy_futures-facts\?/);
    const system = await server.request('GET', '/api/v1/catalog/system/api-usage');
    assert.equal(system.json.p0, false);
    assert.equal(system.json.list_cost, 1);
  });

  test('an unknown dataset is 404 with close matches', async () => {
    const res = await server.request('GET', '/api/v1/catalog/cftc/legacy_futures-fact');
    assert.equal(res.status, 404);
    assert.equal(res.json.code, 'dataset_not_found');
    assert.ok(res.json.suggestions.includes('cftc/legacy_futures-facts'));
  });

  test('every catalog key is readable by a live key', async () => {
    const all = await server.request('GET', '/api/v1/catalog');
    const { key: rich } = await walletAccount(server, 5000);
    let burned = 0;
    for (const entry of all.json.data as { key: string; list_cost: number }[]) {
      const res = await server.request('GET', `/api/v1/data/${entry.key}?limit=2`, { headers: bearer(rich) });
      assert.equal(res.status, 200, `${entry.key}: ${res.text}`);
      // system/* datasets made from the service's records are empty until there are records.
      const records = res.json.meta.source.kind === 'records';
      assert.ok(res.json.data.length > 0 || records, `${entry.key} has rows`);
      // Level 2 (2% off) from 500 tokens burned this month (spec 2.4).
      const expected = burned >= 500 ? (entry.list_cost * 98) / 100 : entry.list_cost;
      assert.equal(Number(res.headers.get('x-token-cost')), expected, entry.key);
      burned += expected;
    }
    assert.ok(burned > 500, 'the walk crossed into level 2');
  });

  test("every dataset's example read returns rows, a filter value with a comma included", async () => {
    // A server of its own: other tests here load rows of their own into some datasets.
    const own = await startServer({
      config: (c) => {
        for (const tier of c.pricing.loyalty_tiers) tier.rate_limit = 100_000;
      },
    });
    try {
      const all = await own.request('GET', '/api/v1/catalog');
      const { key: rich } = await walletAccount(own, 5000);
      let withComma = 0;
      for (const entry of all.json.data as { key: string }[]) {
        const described = await own.request('GET', `/api/v1/catalog/${entry.key}`, { headers: bearer(rich) });
        const example = described.json.example as string;
        if (decodeURIComponent(example).includes('"')) withComma++;
        const res = await own.request('GET', example, { headers: bearer(rich) });
        assert.equal(res.status, 200, `${example}: ${res.text}`);
        const records = res.json.meta.source.kind === 'records';
        assert.ok(res.json.data.length > 0 || records, `${example} returns rows`);
      }
      assert.ok(withComma > 0, 'some example filters on a value with a comma');
    } finally {
      await own.close();
    }
  });

  test('a filter value with a comma or a quote is written in double quotes; unquoted commas separate values', () => {
    assert.deepEqual(splitValues('AAPL, MSFT'), ['AAPL', 'MSFT']);
    assert.deepEqual(splitValues('"Tesla, Inc.",AAPL'), ['Tesla, Inc.', 'AAPL']);
    assert.deepEqual(splitValues(' "say ""hi""" , x'), ['say "hi"', 'x']);
    assert.deepEqual(splitValues('a,,b'), ['a', '', 'b']);
    for (const value of ['Tesla, Inc.', 'say "hi"', ' padded ', 'plain']) {
      assert.deepEqual(splitValues(quoteValue(value)), [value], value);
    }
    for (const bad of ['"open', '"closed" trailing']) {
      assert.throws(
        () => splitValues(bad),
        (e: { code?: string }) => e.code === 'invalid_request',
        bad,
      );
    }
  });
});

test("a cursor's MAC is HMAC-SHA-256 as createHmac computes it, for short and long keys", () => {
  for (const size of [16, 32, 64, 65, 100]) {
    const secret = randomBytes(size);
    const fingerprint = randomBytes(20).toString('hex');
    const cursor = new CursorCodec(secret).encode(fingerprint, { t: '2026-11-25', id: 12345 });
    const [payload, mac] = cursor.split('.') as [string, string];
    const expected = createHmac('sha256', secret)
      .update(`${payload}\n${fingerprint}`)
      .digest()
      .subarray(0, 16);
    assert.equal(mac, expected.toString('base64url'), `key of ${size} bytes`);
    assert.deepEqual(new CursorCodec(secret).decode(cursor, fingerprint), { t: '2026-11-25', id: 12345 });
    assert.throws(() => new CursorCodec(randomBytes(size)).decode(cursor, fingerprint), /not valid/);
  }
});
