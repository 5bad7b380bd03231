/**
 * Reads as a customer makes them on a dataset larger than the scan cap: entity filters walk their index,
 * a filter no index serves examines at most SCAN_CAP rows a read (on a read worker) and its cursor goes on,
 * each page one metered read; bad filters are free 400s.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SCAN_CAP } from '../src/catalog/read-plan.ts';
import type { Row } from '../src/catalog/types.ts';
import { stockPriceRow } from './helpers/rows.ts';
import {
  assertLedgerBalanced,
  bearer,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

const DATASET = 'equities/stock-prices';
const SYMBOLS = 40;
const DAYS = 125;

let server: TestServer;
let key: string;
let walletId: string;
const rows: Row[] = [];
before(async () => {
  server = await startServer({
    config: (c) => {
      for (const tier of c.pricing.loyalty_tiers) tier.rate_limit = 100_000;
      c.limits.wallet.concurrent = 1000;
    },
  });
  const wallet = await walletAccount(server, 10_000);
  key = wallet.key;
  walletId = wallet.account.walletId;
  for (let s = 0; s < SYMBOLS; s++) {
    for (let d = 0; d < DAYS; d++) {
      rows.push(
        stockPriceRow(
          `S${String(s).padStart(2, '0')}`,
          new Date(Date.UTC(2025, 0, 1 + d)).toISOString().slice(0, 10),
          100 + s + d / 100,
          { exchange: s % 2 ? 'NASDAQ' : 'NYSE', mic: s % 2 ? 'XNAS' : 'XNYS', volume: s * 1000 + d },
        ),
      );
    }
  }
  const entry = server.deps.reads.resolve(DATASET);
  await server.deps.store.loadRows(DATASET, 'date', rows, 'import', entry.columns);
});
after(async () => {
  await assertLedgerBalanced(server);
  await server.close();
});

const get = (query: string) =>
  server.request('GET', `/api/v1/data/${DATASET}?${query}`, { headers: bearer(key) });
const burns = async () =>
  (await server.deps.store.listEntries(walletId)).filter((e) => e.kind === 'burn').length;

/** Every page of a read, following meta.next_cursor: the rows, and each page's count and examined. */
async function everyPage(query: string) {
  const seen: Row[] = [];
  const pages: { count: number; examined: number }[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(res.status, 200, res.text);
    seen.push(...res.json.data);
    pages.push({ count: res.json.meta.count, examined: res.json.meta.examined });
    cursor = res.json.meta.next_cursor;
  } while (cursor && pages.length < 100);
  assert.equal(cursor, null, 'the cursor ends');
  return { seen, pages };
}

describe('indexed and capped reads over REST', () => {
  test('an entity read examines its page and the row after it, and finds the rows of that entity', async () => {
    const res = await get('symbol=S07&limit=10&sort=asc&from=2025-02-01');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.json.data.map((r: Row) => [r.symbol, r.date]),
      rows
        .filter((r) => r.symbol === 'S07' && String(r.date) >= '2025-02-01')
        .slice(0, 10)
        .map((r) => [r.symbol, r.date]),
    );
    assert.deepEqual([res.json.meta.count, res.json.meta.examined], [10, 11]);
  });

  test(`a filter on another field examines at most ${SCAN_CAP} rows a read; following the cursor finds every match, each page charged`, async () => {
    assert.ok(rows.length > SCAN_CAP * 2, 'the dataset is larger than the cap');
    const wanted = [rows[5], rows[rows.length - 3], rows[SCAN_CAP + 17]].map((r) => r?.volume as number);
    const before = await burns();
    const { seen, pages } = await everyPage(`volume=${wanted.join(',')}&limit=2`);
    assert.deepEqual(
      seen.map((r) => r.volume).sort((a, b) => Number(a) - Number(b)),
      [...wanted].sort((a, b) => a - b),
    );
    assert.ok(pages.length >= Math.ceil(rows.length / SCAN_CAP), JSON.stringify(pages));
    assert.ok(
      pages.every((p) => p.examined <= SCAN_CAP && p.count <= 2),
      JSON.stringify(pages),
    );
    assert.ok(
      pages.some((p) => p.count === 0 && p.examined === SCAN_CAP),
      'a page may be empty and still go on',
    );
    assert.equal(await burns(), before + pages.length, 'every page is one metered read');
    assert.ok(
      (server.deps.store as unknown as { readWorkers: number }).readWorkers >= 1,
      'the scans ran on a read worker',
    );
  });

  test('the same read in CSV carries its cursor in X-Next-Cursor', async () => {
    const res = await server.request('GET', `/api/v1/data/${DATASET}?volume=-5&format=csv`, {
      headers: bearer(key),
    });
    assert.equal(res.status, 200, res.text);
    assert.ok(res.headers.get('x-next-cursor'), 'the scan stopped at the cap: the cursor goes on');
  });

  test('bad filters are 400s naming the field and what it takes, and cost nothing', async () => {
    const before = await burns();
    const cases: [string, RegExp][] = [
      [
        'colour=blue',
        /Unknown parameter or filter "colour".*entity fields \(symbol, exchange, mic\) are indexed/,
      ],
      ['volume=lots', /Filter "volume" takes whole numbers/],
      ['close=1e', /Filter "close" takes numbers/],
      [
        `symbol=${Array.from({ length: 101 }, (_, i) => `X${i}`).join(',')}`,
        /Filter "symbol" takes at most 100 values/,
      ],
      ['from=2025-03-01&to=2025-02-01', /"from" is after "to"/],
      ['from=2025-02-30', /not a real date/],
    ];
    for (const [query, detail] of cases) {
      const res = await get(query);
      assert.equal(res.status, 400, `${query}: ${res.text}`);
      assert.equal(res.json.code, 'invalid_request');
      assert.match(res.json.detail, detail, query);
    }
    assert.equal(await burns(), before);
  });
});
