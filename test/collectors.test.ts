/**
 * Collectors against the recorded answers of their public sources (../shared/data/recorded/, see its
 * PROVENANCE.md), replayed by a local HTTP server: each source's rows checked by hand, a second run that
 * changes nothing, politeness (User-Agent, Retry-After, backoff, a paused source), a run broken off
 * midway that the next resumes, and the operator's view (`tmd collect`, the admin route, system/*).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fred } from '../src/catalog/sources/fred.ts';
import { PoliteHttp, retryAfterMs } from '../src/collectors/http.ts';
import type { ServiceFile } from '../src/config.ts';
import { Collections, PAUSE_AFTER } from '../src/domain/collections.ts';
import { runCli } from '../src/tmd.ts';
import { recordedDataDir } from './helpers/real-data.ts';
import { bearer, startServer, TestClock, type TestServer, walletAccount } from './helpers/server.ts';

const RECORDED = recordedDataDir();
const recorded = (path: string) => readFileSync(join(RECORDED, path), 'utf8');
const USER_AGENT = 'Example Data Co ops@example.com';

/** What the replay server saw, and how it should misbehave. */
const seen: { path: string; userAgent: string | undefined }[] = [];
const faults = { failObfr: false, throttleOnce: 0, treasuryDown: false };

function filterRates(body: string, url: URL): string {
  const from = url.searchParams.get('startDate') ?? '';
  const to = url.searchParams.get('endDate') ?? '9999';
  const { refRates } = JSON.parse(body) as { refRates: { effectiveDate: string }[] };
  return JSON.stringify({
    refRates: refRates.filter((r) => r.effectiveDate >= from && r.effectiveDate <= to),
  });
}

type Answer = [status: number, body: string, headers?: Record<string, string>];

const rates: Record<string, string> = {
  '/api/rates/secured/sofr/search.json': 'nyfed/sofr_search_2024-06-01_2024-06-06.json',
  '/api/rates/unsecured/effr/search.json': 'nyfed/effr_search_2023-01-01_2023-06-06.json',
  '/api/rates/unsecured/obfr/search.json': 'nyfed/obfr_search_2024-06-01_2024-06-06.json',
};

/** The recorded answer to a request, as each source's server gave it. */
function route(url: URL, ifNoneMatch: string | undefined): Answer {
  const file = rates[url.pathname];
  if (file) {
    if (faults.throttleOnce > 0) {
      faults.throttleOnce--;
      return [429, '{"error":"slow down"}', { 'retry-after': '0' }];
    }
    if (faults.failObfr && url.pathname.includes('obfr')) return [500, '{"error":"down"}'];
    return [200, filterRates(recorded(file), url)];
  }
  if (url.pathname === '/services/api/fiscal_service/v2/accounting/od/debt_to_penny') {
    if (faults.treasuryDown) return [503, 'unavailable'];
    const from = /record_date:gte:(\d{4}-\d{2}-\d{2})/.exec(url.search.replace(/%3A/g, ':'))?.[1] ?? '';
    const page = JSON.parse(recorded('treasury/fiscaldata_v2_debt_to_penny_2025Q1.json')) as {
      data: { record_date: string }[];
    };
    page.data = page.data.filter((r) => r.record_date >= from);
    return [200, JSON.stringify(page)];
  }
  if (url.pathname === '/cgi-bin/browse-edgar') {
    if (url.searchParams.get('start') === '0')
      return [
        200,
        recorded('sec/getcurrent_atom_all_count100_start0.xml'),
        { 'content-type': 'application/atom+xml' },
      ];
    return [
      503,
      recorded('sec/getcurrent_atom_all_count100_start5100_HTTP503.html'),
      { 'content-type': 'text/html' },
    ];
  }
  if (
    url.pathname ===
    '/api/xbrl/frames/us-gaap/RevenueFromContractWithCustomerExcludingAssessedTax/USD/CY2024Q2.json'
  ) {
    // As EDGAR's servers do: validators, and 304 for a copy that is current.
    const etag = '"frame-2024q2"';
    if (ifNoneMatch === etag) return [304, ''];
    return [
      200,
      recorded(
        'sec/xbrl_frames_us-gaap_RevenueFromContractWithCustomerExcludingAssessedTax_USD_CY2024Q2.json',
      ),
      { etag, 'last-modified': 'Mon, 01 Jul 2024 09:59:59 GMT' },
    ];
  }
  if (url.pathname === '/v2/natural-gas/enr/seis/data/') {
    if (url.searchParams.get('api_key') !== 'test-eia-key') return [403, '{"error":"API_KEY_INVALID"}'];
    return [200, recorded('eia/v2_natural-gas_enr_seis_data_E_ERTCES_XS0_NUS_C_2000-01.json')];
  }
  if (url.pathname === '/publicAPI/v2/timeseries/data/') {
    return [200, recorded('bls/timeseries_data_POST_APU0000701111_2022.json')];
  }
  if (url.pathname === '/resource/jun7-fc8e.json') {
    // One record (2024-08-20); asked after it, Socrata answers an empty list.
    const after = /> '(\d{4}-\d{2}-\d{2})/.exec(url.searchParams.get('$where') ?? '')?.[1] ?? '';
    return [
      200,
      after >= '2024-08-20'
        ? '[]'
        : recorded(
            'cftc/publicreporting_jun7-fc8e_legacy_futures_only_2024-08-19_2024-08-21_code_239747.json',
          ),
    ];
  }
  if (url.pathname === '/datadownload/Output.aspx') {
    return [
      200,
      recorded('federalreserve/h15_ddp_treasury_cmt_daily_csv_first31rows.csv'),
      { 'content-type': 'text/csv' },
    ];
  }
  if (url.pathname === '/service/data/EXR/M.USD.EUR.SP00.A') {
    // The recording runs to 2019-12: a later startPeriod has no results (the ECB's 404).
    if ((url.searchParams.get('startPeriod') ?? '') > '2019-12') return [404, 'No results found.'];
    return [
      200,
      recorded('ecb/sdw-wsrest_data_EXR_M.USD.EUR.SP00.A_genericdata.xml'),
      { 'content-type': 'application/xml' },
    ];
  }
  if (url.pathname === '/fred/series/observations') {
    if (url.searchParams.get('api_key') !== 'test-fred-key') return [400, '{"error_message":"Bad key"}'];
    return [200, recorded('fred/series_observations_GDP.json')];
  }
  return [404, '{}'];
}

function answer(request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? '/', 'http://replay');
  seen.push({ path: `${url.pathname}${url.search}`, userAgent: request.headers['user-agent'] });
  let answer: Answer;
  try {
    answer = route(url, request.headers['if-none-match']);
  } catch (error) {
    answer = [500, JSON.stringify({ error: (error as Error).message })];
  }
  const [status, body, headers = {}] = answer;
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(body);
}

const replay = createServer(answer);
let base = '';
before(async () => {
  await new Promise<void>((resolve) => replay.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(replay.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => replay.close(() => resolve())));

function collectorsConfig(config: ServiceFile): void {
  config.collectors = {
    user_agent: USER_AGENT,
    sources: {
      nyfed: { enabled: true, base_url: base, per_second: 10, options: { rates: ['sofr', 'effr', 'obfr'] } },
      'treasury-debt': { enabled: true, base_url: base, per_second: 10, options: {} },
      'sec-current': { enabled: true, base_url: base, options: {} },
      fred: { enabled: false, base_url: base, per_second: 10, options: { series: ['GDP'] } },
      ecb: { enabled: false, base_url: base, per_second: 10, options: { series: ['EXR/M.USD.EUR.SP00.A'] } },
      'fed-h15': { enabled: false, base_url: base, per_second: 10, options: {} },
      cftc: { enabled: false, base_url: base, per_second: 10, options: {} },
      bls: { enabled: false, base_url: base, options: { series: ['APU0000701111'] } },
      eia: {
        enabled: false,
        base_url: base,
        options: { series: ['natural-gas/enr/seis:E_ERTCES_XS0_NUS_C'] },
      },
      'sec-frames': {
        enabled: false,
        base_url: base,
        options: { frames: ['us-gaap/RevenueFromContractWithCustomerExcludingAssessedTax/USD/CY2024Q2'] },
      },
    },
  };
}

async function serve(at: string): Promise<TestServer> {
  return startServer({
    clock: new TestClock(Date.parse(at)),
    config: collectorsConfig,
    env: { FRED_API_KEY: 'test-fred-key', EIA_API_KEY: 'test-eia-key' },
  });
}

/** The server's Collections with quick retries (the service's wait a second, doubling). */
function quick(server: TestServer): Collections {
  const config = structuredClone(server.deps.config.collectors);
  return new Collections({
    datasets: server.deps.datasets,
    catalog: server.deps.catalog,
    config,
    http: (options) => new PoliteHttp({ ...options, backoffMs: 5, retries: 2 }),
    credentials: { FRED_API_KEY: 'test-fred-key' },
    now: server.deps.now,
  });
}

async function rowsOf(server: TestServer, key: string, dataset: string, query = 'limit=1000') {
  const res = await server.request('GET', `/api/v1/data/${dataset}?${query}`, { headers: bearer(key) });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.meta.sample, false, `${dataset}: real rows`);
  return res.json.data as Record<string, unknown>[];
}

test('NY Fed rates: the recorded answers become rows, a second run changes nothing', async () => {
  const server = await serve('2024-06-06T20:00:00Z');
  try {
    const { key } = await walletAccount(server, 1000);
    seen.length = 0;
    const first = await server.deps.collections.run('nyfed', { since: '2024-06-01' });
    assert.equal(first.outcome, 'ok', first.error ?? '');
    assert.deepEqual([first.rowsNew, first.rowsChanged, first.requests], [4 + 0 + 4, 0, 3]);
    assert.ok(
      seen.every((s) => s.userAgent === USER_AGENT),
      'every request names the operator',
    );
    const sofr = await rowsOf(server, key, 'macro/nyfed-sofr-series');
    assert.deepEqual(sofr[0], {
      rate_type: 'SOFR',
      effective_date: '2024-06-06',
      percent_rate: 5.33,
      percentile_1: 5.29,
      percentile_25: 5.32,
      percentile_75: 5.4,
      percentile_99: 5.44,
      volume_in_billions: 2008,
      revision_indicator: null,
    });
    assert.equal(sofr.length, 4);
    const obfr = await rowsOf(server, key, 'macro/nyfed-obfr-series');
    assert.deepEqual(
      [obfr[0]?.effective_date, obfr[0]?.percent_rate, obfr[0]?.volume_in_billions],
      ['2024-06-06', 5.32, 285],
    );

    // Again, from the cursor (less the days a rate may be revised): nothing new, nothing changed.
    seen.length = 0;
    const second = await server.deps.collections.run('nyfed');
    assert.deepEqual([second.outcome, second.rowsNew, second.rowsChanged], ['ok', 0, 0]);
    assert.ok(
      seen.some((s) => s.path.includes('sofr/search.json?startDate=2024-06-01&endDate=2024-06-06')),
      JSON.stringify(seen),
    );

    // The EFFR recording is of 2023: a backfill window there finds its 108 rates, checked at one end.
    const backfill = await server.deps.collections.run('nyfed', { since: '2023-01-01' });
    assert.equal(backfill.outcome, 'ok', backfill.error ?? '');
    const effr = await rowsOf(server, key, 'macro/nyfed-effr-series', 'limit=1&sort=asc');
    assert.deepEqual(effr[0], {
      rate_type: 'EFFR',
      effective_date: '2023-01-03',
      percent_rate: 4.33,
      percentile_1: 4.3,
      percentile_25: 4.32,
      percentile_75: 4.33,
      percentile_99: 4.6,
      volume_in_billions: 105,
      target_rate_from: 4.25,
      target_rate_to: 4.5,
      revision_indicator: null,
    });
  } finally {
    await server.close();
  }
});

test('Treasury debt to the penny and FRED: values as published, missing values null', async () => {
  const server = await serve('2025-04-01T20:00:00Z');
  try {
    const { key } = await walletAccount(server, 1000);
    const run = await server.deps.collections.run('treasury-debt', { since: '2025-01-01' });
    assert.deepEqual([run.outcome, run.rowsNew, run.error], ['ok', 61 * 3, null]);
    const total = await rowsOf(
      server,
      key,
      'macro/treasury-debt-series',
      'measure=tot_pub_debt_out_amt&limit=1',
    );
    assert.deepEqual(total[0], {
      measure: 'tot_pub_debt_out_amt',
      measure_label: 'Total public debt outstanding',
      record_date: '2025-03-31',
      amount: 36214310420174.13,
    });
    const again = await server.deps.collections.run('treasury-debt');
    assert.deepEqual([again.outcome, again.rowsNew, again.rowsChanged, again.requests], ['ok', 0, 0, 1]);

    // FRED fills the H.15 percentages only: GDP is refused by name, before any request.
    const refused = await server.deps.collections.run('fred');
    assert.equal(refused.outcome, 'failed', JSON.stringify(refused));
    assert.match(refused.error ?? '', /FRED series GDP: not an H.15 series/);
    assert.equal(refused.requests, 0);
  } finally {
    await server.close();
  }
});

test('SEC latest filings: entries until the 503 that ends paging, then only what is new', async () => {
  const server = await serve('2025-12-13T00:00:00Z');
  try {
    const { key } = await walletAccount(server, 1000);
    const run = await server.deps.collections.run('sec-current');
    assert.equal(run.outcome, 'ok', run.error ?? '');
    assert.equal(run.requests, 2, 'page 0, then the 503 past the end');
    const entries = await rowsOf(server, key, 'system/sec-rss-entries', 'cik=2063236');
    assert.deepEqual(entries[0], {
      feed_id: 'edgar-current-all',
      published_at: '2025-12-12T23:02:43Z',
      cik: '2063236',
      form_type: '4',
      accession_number: '0002063236-25-000004',
      link: 'https://www.sec.gov/Archives/edgar/data/2063236/000206323625000004/0002063236-25-000004-index.htm',
    });
    const stored = (await server.deps.datasets.datasetSource('system/sec-rss-entries'))?.rows ?? 0;
    assert.ok(stored > 90 && stored <= 100, `${stored} entries`);
    server.clock.advance(600_000);
    const again = await server.deps.collections.run('sec-current');
    // Nothing new but the poll's own record in system/sec-rss-feeds.
    assert.deepEqual([again.outcome, again.rowsNew, again.rowsChanged, again.requests], ['ok', 1, 0, 1]);
    const feeds = await rowsOf(server, key, 'system/sec-rss-feeds');
    assert.deepEqual(
      feeds.map((f) => [f.http_status, f.entries_seen]),
      [
        [200, 100],
        [200, 100],
      ],
    );
  } finally {
    await server.close();
  }
});

test('FRED observations: each as recorded, "." as null, the key sent but never recorded', async () => {
  const asked: string[] = [];
  const http = {
    postJson: async () => {
      throw new Error('FRED asks with GET');
    },
    get: async (url: string) => {
      asked.push(url);
      return {
        status: 200,
        url,
        etag: null,
        lastModified: null,
        body: recorded('fred/series_observations_GDP.json'),
      };
    },
  };
  const chunks = [];
  for await (const chunk of fred.run({
    http,
    baseUrl: 'https://api.stlouisfed.org',
    cursor: {},
    now: Date.parse('2025-01-20T12:00:00Z'),
    today: '2025-01-20',
    since: null,
    backfill: true,
    credentials: { FRED_API_KEY: 'k3y' },
    options: { series: ['DGS10'] },
  }))
    chunks.push(chunk);
  assert.deepEqual(asked, [
    'https://api.stlouisfed.org/fred/series/observations?series_id=DGS10&file_type=json&observation_start=1776-07-04&api_key=k3y',
  ]);
  const [chunk] = chunks;
  assert.equal(chunk?.records.length, 315);
  assert.deepEqual(chunk?.records[4]?.values, {
    series_id: 'DGS10',
    h15_series: 'RIFLGFCY10_N.B',
    title: 'Market yield on U.S. Treasury securities at 10-year constant maturity',
    date: '1947-01-01',
    value: '243.164',
  });
  assert.equal(chunk?.records[0]?.values.value, null, 'FRED writes a missing value as "."');
  assert.deepEqual(chunk?.cursor, { DGS10: '2024-07-01' });
  assert.ok(!chunk?.url.includes('k3y') && !chunk?.records[0]?.where.includes('k3y'));
});

test('ECB: an SDMX series as published, a month as its first day; a later window finds nothing', async () => {
  const server = await serve('2020-01-20T12:00:00Z');
  try {
    const { key } = await walletAccount(server, 1000);
    const run = await server.deps.collections.run('ecb', { backfill: true });
    assert.deepEqual([run.outcome, run.rowsNew, run.error], ['ok', 252, null]);
    const first = await rowsOf(server, key, 'ecb/observations', 'limit=1&sort=asc');
    assert.deepEqual(first[0], {
      series_key: 'EXR.M.USD.EUR.SP00.A',
      flow_ref: 'EXR',
      freq: 'M',
      currency: 'USD',
      currency_denom: 'EUR',
      series_variation: 'SP00',
      time_period: '1999-01-01',
      obs_value: 1.16078,
      obs_status: 'A',
      obs_conf: null,
      obs_com: null,
    });
    const cursor = JSON.parse((await server.deps.datasets.collectorState('ecb'))?.cursor ?? '{}');
    assert.deepEqual(cursor, { 'EXR/M.USD.EUR.SP00.A': '2019-12-01' });
    // Again from the last period: the same 2019-12 answer, nothing new or changed.
    const again = await server.deps.collections.run('ecb');
    assert.deepEqual([again.outcome, again.rowsNew, again.rowsChanged], ['ok', 0, 0]);
  } finally {
    await server.close();
  }
});

test("the Fed's H.15 download: each yield a row by its FRED id, holidays and gaps no row", async () => {
  const server = await serve('1962-02-14T22:00:00Z');
  try {
    const { key } = await walletAccount(server, 1000);
    const run = await server.deps.collections.run('fed-h15', { backfill: true });
    assert.equal(run.error, null);
    // 31 days; five of the eleven columns hold values in 1962 (1, 3, 5, 10 and 20 years); 1962-02-12
    // (Lincoln's birthday) is "ND", no data, in each.
    assert.equal(run.rowsNew, 30 * 5);
    const tenYear = await rowsOf(server, key, 'macro/fed-h15-series', 'series_id=DGS10&limit=2&sort=asc');
    assert.deepEqual(tenYear[0], {
      series_id: 'DGS10',
      h15_series: 'RIFLGFCY10_N.B',
      title: 'Market yield on U.S. Treasury securities at 10-year constant maturity',
      date: '1962-01-02',
      value: 4.06,
    });
    assert.equal(tenYear[1]?.value, 4.03);
    assert.deepEqual(JSON.parse((await server.deps.datasets.collectorState('fed-h15'))?.cursor ?? '{}'), {
      date: '1962-02-13',
    });
  } finally {
    await server.close();
  }
});

test('CFTC legacy futures (Socrata): a week of a market as published, then nothing new', async () => {
  const server = await serve('2024-08-27T12:00:00Z');
  try {
    const { key } = await walletAccount(server, 1000);
    const run = await server.deps.collections.run('cftc', { since: '2024-08-19' });
    assert.deepEqual([run.outcome, run.rowsNew, run.error], ['ok', 1, null]);
    const [row] = await rowsOf(server, key, 'cftc/legacy_futures-facts');
    assert.deepEqual(
      [
        row?.report_date,
        row?.market_and_exchange_names,
        row?.cftc_contract_market_code,
        row?.open_interest_all,
        row?.noncomm_positions_long_all,
        row?.noncomm_positions_spread_all,
        row?.tot_rept_positions_short_all,
        row?.contract_units,
      ],
      [
        '2024-08-20',
        'MICRO E-MINI RUSSELL 2000 INDX - CHICAGO MERCANTILE EXCHANGE',
        '239747',
        19404,
        4773,
        258,
        10780,
        '(RUSSEL 2000 INDEX X $0.5)',
      ],
    );
    const again = await server.deps.collections.run('cftc');
    assert.deepEqual([again.outcome, again.rowsNew, again.requests], ['ok', 0, 1]);
  } finally {
    await server.close();
  }
});

test('SEC XBRL frames: one fact per filer; asked again conditionally, an unchanged frame is a 304', async () => {
  const server = await serve('2024-07-02T12:00:00Z');
  try {
    const { key } = await walletAccount(server, 1000);
    const run = await server.deps.collections.run('sec-frames');
    assert.deepEqual([run.outcome, run.rowsNew, run.error], ['ok', 15, null]);
    const [fact] = await rowsOf(server, key, 'system/xbrl-frames', 'cik=6955');
    assert.deepEqual(fact, {
      taxonomy: 'us-gaap',
      tag: 'RevenueFromContractWithCustomerExcludingAssessedTax',
      unit: 'USD',
      cik: '6955',
      entity_name: 'ENERPAC TOOL GROUP CORP.',
      loc: 'US-WI',
      end: '2024-05-31',
      accession_number: '0000006955-24-000042',
      val: 150389000,
    });
    const again = await server.deps.collections.run('sec-frames');
    assert.deepEqual([again.outcome, again.requests, again.notModified, again.rowsNew], ['ok', 1, 1, 0]);
  } finally {
    await server.close();
  }
});

test('BLS: a series as published (a POSTed query), each month its first day', async () => {
  const server = await serve('2023-01-15T12:00:00Z');
  try {
    const { key } = await walletAccount(server, 1000);
    seen.length = 0;
    const run = await server.deps.collections.run('bls', { since: '2022-01-01' });
    assert.deepEqual([run.outcome, run.error], ['ok', null]);
    assert.equal(run.rowsNew, 12, 'twelve months of 2022');
    const [december] = await rowsOf(server, key, 'economics/bls-series', 'limit=1');
    assert.deepEqual(december, {
      series_id: 'APU0000701111',
      survey: 'AP',
      title:
        'Flour, white, all purpose, per lb. (453.6 gm) in U.S. city average, average price, not seasonally adjusted',
      units: 'Flour, white, all purpose, per lb. (453.6 gm)',
      date: '2022-12-01',
      value: 0.522,
      footnote_codes: null,
    });
    assert.deepEqual(JSON.parse((await server.deps.datasets.collectorState('bls'))?.cursor ?? '{}'), {
      date: '2022-12-01',
    });
  } finally {
    await server.close();
  }
});

test('EIA: a monthly series as published, its month the first day; the key never recorded', async () => {
  const server = await serve('2000-02-15T12:00:00Z');
  try {
    const { key } = await walletAccount(server, 1000);
    const run = await server.deps.collections.run('eia', { since: '2000-01-01' });
    assert.deepEqual([run.outcome, run.rowsNew, run.error], ['ok', 1, null]);
    const [point] = await rowsOf(server, key, 'economics/eia-series');
    assert.deepEqual(point, {
      series_id: 'E_ERTCES_XS0_NUS_C',
      title: 'U.S. Maximum Number of Active Crews Engaged in Seismic Surveying (Count)',
      units: 'COUNT',
      date: '2000-01-01',
      value: 0,
    });
    const runs = await server.deps.datasets.listImportRuns({ dataset: 'economics/eia-series' }, 1);
    assert.ok(!runs[0]?.fileName.includes('test-eia-key'), 'the API key is not recorded');
  } finally {
    await server.close();
  }
});

test('politeness: Retry-After honoured, a failing source retried, then paused after repeated failures', async () => {
  assert.equal(retryAfterMs('3'), 3000);
  assert.equal((retryAfterMs(new Date(Date.now() + 60_000).toUTCString()) as number) > 50_000, true);
  assert.equal(retryAfterMs('soon'), null);
  const server = await serve('2024-06-06T20:00:00Z');
  try {
    const collections = quick(server);
    faults.throttleOnce = 2;
    const throttled = await collections.run('nyfed', { since: '2024-06-01' });
    assert.deepEqual([throttled.outcome, throttled.requests], ['ok', 5], 'two 429s, then three answers');
    faults.treasuryDown = true;
    for (let n = 1; n <= PAUSE_AFTER; n++) {
      const failed = await collections.run('treasury-debt', { since: '2025-01-01' });
      assert.equal(failed.outcome, 'failed');
      assert.equal(failed.requests, 3, 'the first try and two retries');
      assert.match(failed.error ?? '', /HTTP 503/);
    }
    const state = await server.deps.datasets.collectorState('treasury-debt');
    assert.ok((state?.pausedUntil ?? 0) > server.clock.now(), 'paused');
    assert.equal(
      await collections.runScheduled('treasury-debt', 0),
      null,
      'a paused source is not scheduled',
    );
    faults.treasuryDown = false;
    const manual = await collections.run('treasury-debt', { since: '2025-01-01' });
    assert.equal(manual.outcome, 'ok', 'a run by hand goes ahead, and unpauses');
    assert.equal((await server.deps.datasets.collectorState('treasury-debt'))?.pausedUntil, null);
  } finally {
    faults.treasuryDown = false;
    faults.throttleOnce = 0;
    await server.close();
  }
});

test('a run broken off midway resumes from its last stored chunk and ends as an unbroken run', async () => {
  const broken = await serve('2024-06-06T20:00:00Z');
  const whole = await serve('2024-06-06T20:00:00Z');
  try {
    faults.failObfr = true;
    const first = await quick(broken).run('nyfed', { since: '2024-06-01' });
    assert.equal(first.outcome, 'failed');
    const cursor = JSON.parse((await broken.deps.datasets.collectorState('nyfed'))?.cursor ?? '{}');
    assert.deepEqual(cursor, { sofr: '2024-06-06', effr: null }, 'SOFR and EFFR stored; OBFR not');
    faults.failObfr = false;
    const resumed = await quick(broken).run('nyfed');
    assert.equal(resumed.outcome, 'ok', resumed.error ?? '');
    assert.equal(resumed.rowsNew, 4, 'only the OBFR rates were missing');
    await whole.deps.collections.run('nyfed', { since: '2024-06-01' });
    for (const dataset of ['macro/nyfed-sofr-series', 'macro/nyfed-obfr-series']) {
      const read = async (server: TestServer) =>
        (
          await server.deps.datasets.queryRows({ dataset, filters: {}, descending: false, limit: 100 })
        ).rows.map((r) => r.json);
      assert.deepEqual(await read(broken), await read(whole), dataset);
    }
  } finally {
    faults.failObfr = false;
    await broken.close();
    await whole.close();
  }
});

test('the operator sees it: tmd collect, the admin route, system/data-collection-log and sync-metadata', async () => {
  const server = await serve('2024-06-06T20:00:00Z');
  try {
    let stdout = '';
    writeFileSync(join(server.dir, 'service.json'), JSON.stringify(server.deps.config));
    const code = await runCli(['collect', 'nyfed', '--since', '2024-06-01', '--json'], {
      env: {
        DATABASE_URL: join(server.dir, 'tmd.sqlite'),
        DATA_DIR: server.dir,
        JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
        LOG_LEVEL: 'silent',
        CONFIG_FILE: join(server.dir, 'service.json'),
      },
      stdout: (t) => {
        stdout += t;
      },
      stderr: () => {},
      now: server.clock.now,
    });
    assert.equal(code, 0, stdout);
    assert.deepEqual([JSON.parse(stdout).outcome, JSON.parse(stdout).rows_new], ['ok', 8]);
    const status = await server.request('GET', '/api/v1/admin/collectors', {
      headers: { authorization: 'Bearer admin-token-for-tests-0123456789' },
    });
    assert.equal(status.status, 200, status.text);
    const nyfed = status.json.data.find((s: { source: string }) => s.source === 'nyfed');
    assert.deepEqual(
      [nyfed.enabled, nyfed.failures, nyfed.cursor.sofr, nyfed.last_run.rows_new],
      [true, 0, '2024-06-06', 8],
    );
    assert.match(nyfed.next_run_at, /^2024-06-07T13:30:00/);
    const { key } = await walletAccount(server, 1000);
    const log = await server.request('GET', '/api/v1/data/system/data-collection-log?limit=5', {
      headers: bearer(key),
    });
    assert.equal(log.json.data[0].collector, 'nyfed');
    assert.match(
      log.json.data[0].message,
      /into macro\/nyfed-sofr-series, macro\/nyfed-obfr-series: 8 new, 0 changed, 0 rejected; 3 requests/,
    );
    const sync = await server.request('GET', '/api/v1/data/system/sync-metadata?limit=5', {
      headers: bearer(key),
    });
    const row = sync.json.data.find((r: { source_id: string }) => r.source_id === 'nyfed');
    assert.equal(row.state, 'idle');
    assert.equal(JSON.parse(row.cursor).obfr, '2024-06-06');
  } finally {
    await server.close();
  }
});

test('a scheduled slot runs once across every node on the store', async () => {
  const server = await serve('2024-06-06T20:00:00Z');
  try {
    const nodes = [quick(server), quick(server), quick(server)];
    const slot = Date.parse('2024-06-06T13:30:00Z');
    const runs = await Promise.all(nodes.map((n) => n.runScheduled('nyfed', slot)));
    assert.equal(runs.filter((r) => r !== null).length, 1);
    assert.equal(await nodes[0]?.runScheduled('nyfed', slot), null, 'the same slot again: nothing');
  } finally {
    await server.close();
  }
});
