/**
 * The World Bank collector against its recorded Indicators API answers (GDP in current US$ of Japan and
 * the United States, 13 June 2021): rows checked by hand against the files, a second run that changes
 * nothing, paging by the answer's header, and the error the API sends with HTTP 200, which fails the
 * run without writing anything.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Chunk } from '../src/catalog/sources/source.ts';
import { worldbank } from '../src/catalog/sources/worldbank.ts';
import { PoliteHttp } from '../src/collectors/http.ts';
import { Collections } from '../src/domain/collections.ts';
import { collectorServer, type Replay, recorded, rowsOf, startReplay } from './helpers/replay.ts';
import { bearer, type TestServer, walletAccount } from './helpers/server.ts';

const PAGE_1_OF_3 = 'worldbank/v2_countries_JPN-USA_indicators_NY.GDP.MKTP.CD_page1of3.json';
const WINDOW_2018_2019 =
  'worldbank/v2_countries_JPN-USA_indicators_NY.GDP.MKTP.CD_date2018-2019_per_page2.json';
const ERROR_HTTP_200 = 'worldbank/v2_countries_JPN-USA_indicators_INVALID_error_HTTP200.json';

interface Point {
  country: { id: string };
  date: string;
  value: number | null;
}

/**
 * Japan alone over a window of years: the recorded first page holds Japan's 1971–2020 (the United States
 * follow on pages not recorded), so the API's answer for Japan in such a window is those rows.
 */
function japanWindow(url: URL): string | null {
  const [from, to] = (url.searchParams.get('date') ?? '').split(':');
  if (!from || !to || from < '1971' || url.searchParams.get('page') !== '1') return null;
  const [header, points] = JSON.parse(recorded(PAGE_1_OF_3)) as [Record<string, unknown>, Point[]];
  const kept = points.filter((p) => p.country.id === 'JP' && p.date >= from && p.date <= to);
  const perPage = Number(url.searchParams.get('per_page') ?? 50);
  return JSON.stringify([
    { ...header, page: 1, pages: Math.ceil(kept.length / perPage), per_page: perPage, total: kept.length },
    kept,
  ]);
}

let replay: Replay;
before(async () => {
  replay = await startReplay((url) => {
    if (url.pathname === '/v2/countries/JPN/indicators/NY.GDP.MKTP.CD') {
      const body = japanWindow(url);
      return body === null ? null : [200, body];
    }
    // As the API does: an unknown indicator is an error message with 200 OK.
    if (url.pathname === '/v2/countries/JPN;USA/indicators/INVALID.INDICATOR.ID')
      return [200, recorded(ERROR_HTTP_200)];
    return null;
  });
});
after(() => replay.close());

const serve = () =>
  collectorServer('2021-06-13T03:00:00Z', {
    worldbank: {
      enabled: false,
      base_url: replay.base,
      per_second: 10,
      options: { indicators: ['NY.GDP.MKTP.CD'], countries: ['JPN'] },
    },
  });

/** The server's collections with other options for the World Bank. */
function withOptions(server: TestServer, options: Record<string, unknown>): Collections {
  const config = structuredClone(server.deps.config.collectors);
  const settings = config.sources.worldbank;
  assert.ok(settings);
  settings.options = options;
  return new Collections({
    datasets: server.deps.datasets,
    catalog: server.deps.catalog,
    config,
    http: (options) => new PoliteHttp(options),
    credentials: {},
    now: server.deps.now,
  });
}

test('World Bank: each year with a value a row, the year its first day; again, nothing changes', async () => {
  const server = await serve();
  try {
    const { key } = await walletAccount(server, 1000);
    replay.seen.length = 0;
    const run = await server.deps.collections.run('worldbank', { since: '2015-01-01' });
    assert.deepEqual([run.outcome, run.error], ['ok', null]);
    assert.equal(run.rowsNew, 5, '2015 to 2019; 2020 has no value yet');
    assert.deepEqual(
      replay.seen.map((s) => s.path),
      ['/v2/countries/JPN/indicators/NY.GDP.MKTP.CD?format=json&per_page=1000&page=1&date=2015:2021'],
    );
    const rows = await rowsOf(server, key, 'economics/worldbank-series', 'limit=10');
    assert.deepEqual(rows[0], {
      series_id: 'NY.GDP.MKTP.CD.JPN',
      indicator_id: 'NY.GDP.MKTP.CD',
      country_iso3: 'JPN',
      title: 'GDP (current US$), Japan',
      units: null,
      date: '2019-01-01',
      value: 5081769542379.77,
    });
    assert.deepEqual(
      rows.map((r) => [r.date, r.value]),
      [
        ['2019-01-01', 5081769542379.77],
        ['2018-01-01', 4954806619995.19],
        ['2017-01-01', 4866864409657.68],
        ['2016-01-01', 4922538141454.62],
        ['2015-01-01', 4389475622588.97],
      ],
    );
    // The other recording, asked for 2018:2019 two a page, holds the same values for Japan.
    const [, window] = JSON.parse(recorded(WINDOW_2018_2019)) as [unknown, Point[]];
    assert.deepEqual(
      window.map((p) => [`${p.date}-01-01`, p.value]),
      rows.slice(0, 2).map((r) => [r.date, r.value]),
    );
    assert.deepEqual(JSON.parse((await server.deps.datasets.collectorState('worldbank'))?.cursor ?? '{}'), {
      'NY.GDP.MKTP.CD': '2019-01-01',
    });

    // Again, from three years before the last stored one (each release revises recent years).
    replay.seen.length = 0;
    const again = await server.deps.collections.run('worldbank');
    assert.deepEqual([again.outcome, again.rowsNew, again.rowsChanged, again.requests], ['ok', 0, 0, 1]);
    assert.match(replay.seen[0]?.path ?? '', /&date=2016:2021$/);
  } finally {
    await server.close();
  }
});

test("World Bank: the error sent with 200 OK fails the run; nothing is written, the run's log says why", async () => {
  const server = await serve();
  try {
    const collections = withOptions(server, {
      indicators: ['INVALID.INDICATOR.ID'],
      countries: ['JPN', 'USA'],
    });
    const run = await collections.run('worldbank');
    assert.equal(run.outcome, 'failed');
    assert.equal(
      run.error,
      'World Bank INVALID.INDICATOR.ID: 120 Invalid value The provided parameter value is not valid',
    );
    assert.deepEqual([run.rowsNew, run.rowsChanged, run.requests, run.datasets], [0, 0, 1, []]);
    assert.equal(await server.deps.datasets.datasetSource('economics/worldbank-series'), null);
    assert.equal(
      (await server.deps.datasets.listImportRuns({ dataset: 'economics/worldbank-series' }, 5)).length,
      0,
    );
    const state = await server.deps.datasets.collectorState('worldbank');
    assert.deepEqual([state?.cursor, state?.failures, state?.lastSuccessAt], ['{}', 1, null]);

    const { key } = await walletAccount(server, 1000);
    const log = await server.request('GET', '/api/v1/data/system/data-collection-log?limit=5', {
      headers: bearer(key),
    });
    assert.equal(log.status, 200, log.text);
    assert.deepEqual([log.json.data[0].collector, log.json.data[0].status], ['worldbank', 'failed']);
    assert.match(
      log.json.data[0].message,
      /failed, the datasets kept their rows: World Bank INVALID\.INDICATOR\.ID: 120 Invalid value/,
    );
  } finally {
    await server.close();
  }
});

test('World Bank: pages follow the header; the cursor moves only with the last page', async () => {
  const asked: string[] = [];
  const http = {
    postJson: async () => {
      throw new Error('the World Bank is asked with GET');
    },
    get: async (url: string) => {
      asked.push(url);
      // The recording is page 1 of 3 (asked at the API's default of 50 a page); pages 2 and 3 were not recorded.
      if (!url.includes('&page=1')) throw new Error('not recorded');
      return { status: 200, url, etag: null, lastModified: null, body: recorded(PAGE_1_OF_3) };
    },
  };
  const chunks = worldbank
    .run({
      http,
      baseUrl: 'https://api.worldbank.org',
      cursor: {},
      now: Date.parse('2021-06-13T03:00:00Z'),
      today: '2021-06-13',
      since: null,
      backfill: true,
      credentials: {},
      options: { indicators: ['NY.GDP.MKTP.CD'], countries: ['JPN', 'USA'] },
    })
    [Symbol.asyncIterator]();
  const first = (await chunks.next()).value as Chunk;
  assert.equal(first.records.length, 49, "Japan's 50 years on the page, less 2020 without a value");
  assert.deepEqual(first.records.at(-1)?.values, {
    series_id: 'NY.GDP.MKTP.CD.JPN',
    indicator_id: 'NY.GDP.MKTP.CD',
    country_iso3: 'JPN',
    title: 'GDP (current US$), Japan',
    units: null,
    date: '1971-01-01',
    value: 240151807460.241,
  });
  assert.deepEqual(first.cursor, {}, 'two pages to go');
  await assert.rejects(chunks.next(), /not recorded/);
  assert.deepEqual(asked, [
    'https://api.worldbank.org/v2/countries/JPN;USA/indicators/NY.GDP.MKTP.CD?format=json&per_page=1000&page=1',
    'https://api.worldbank.org/v2/countries/JPN;USA/indicators/NY.GDP.MKTP.CD?format=json&per_page=1000&page=2',
  ]);
});
