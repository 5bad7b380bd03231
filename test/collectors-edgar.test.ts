/**
 * The SEC EDGAR filings index collector (`sec-index`) against its recorded answers, replayed locally:
 * the daily form index of 18 March 2020 (rows checked by hand against the file), a second run that
 * changes nothing, a quarter's full index asked again with the validators of its last answer (the
 * recorded 304 to If-Modified-Since), a quarter EDGAR does not have (the recorded S3 AccessDenied,
 * 403), a quarter's full index read whole (the day's index standing in for it: none was recorded),
 * and Tesla's submissions JSON with its older page (filings.files).
 *
 * The full-index recordings answered `form.gz`; the collector asks for the same index uncompressed
 * (`form.idx`, the client reads text), so they are served at that path.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseIndex, secIndex } from '../src/catalog/sources/sec-index.ts';
import { collectorServer, type Replay, recorded, rowsOf, startReplay, USER_AGENT } from './helpers/replay.ts';
import { walletAccount } from './helpers/server.ts';

const DAILY = 'sec/daily-index_form.20200318.idx';
const COMPANY = 'sec/daily-index_company.20221003_first150.idx';
const NOT_MODIFIED = 'sec/full-index_2025_QTR1_form.gz_HTTP304_conditional_get.json';
const ACCESS_DENIED = 'sec/full-index_2099_QTR1_form.gz_HTTP403.xml';
const TESLA = 'sec/submissions_CIK0001318605.json';
const TESLA_OLDER = 'sec/submissions_CIK0001318605-submissions-001.json';

/** The recorded 304: what was sent (If-Modified-Since) and what came back (ETag, Last-Modified). */
const conditional = JSON.parse(recorded(NOT_MODIFIED)) as {
  request: { headers: Record<string, string[]> };
  response: { status: { code: number }; headers: Record<string, string[]> };
};
const LAST_MODIFIED = conditional.response.headers['Last-Modified']?.[0] ?? '';
const ETAG = conditional.response.headers.ETag?.[0] ?? '';

let replay: Replay;
before(async () => {
  replay = await startReplay((url, headers) => {
    if (url.pathname === '/Archives/edgar/daily-index/2020/QTR1/form.20200318.idx')
      return [200, recorded(DAILY), { 'content-type': 'text/plain' }];
    if (url.pathname === '/Archives/edgar/full-index/2025/QTR1/form.idx') {
      // EDGAR's answer to a conditional GET of an unchanged index; without validators it would be the
      // whole quarter, which was not recorded.
      if (headers['if-modified-since'] || headers['if-none-match'])
        return [304, '', { etag: ETAG, 'last-modified': LAST_MODIFIED }];
      throw new Error('the full index of 2025 QTR1 was asked without validators');
    }
    if (url.pathname.startsWith('/Archives/edgar/full-index/2099/'))
      return [403, recorded(ACCESS_DENIED), { 'content-type': 'application/xml' }];
    if (url.pathname === '/submissions/CIK0001318605.json') return [200, recorded(TESLA)];
    if (url.pathname === '/submissions/CIK0001318605-submissions-001.json')
      return [200, recorded(TESLA_OLDER)];
    return null;
  });
});
after(() => replay.close());

const serve = (at: string, options: Record<string, unknown> = {}) =>
  collectorServer(at, {
    'sec-index': { enabled: false, base_url: replay.base, per_second: 10, options },
  });

test('EDGAR index: the fixed-width columns, whichever comes first; a long form type pushes the rest', () => {
  const daily = parseIndex(recorded(DAILY));
  assert.equal(daily.problems.length, 0);
  assert.equal(daily.lines.length, 4084);
  assert.deepEqual(daily.lines[0], {
    form: '1-A',
    companyName: 'DLP Positive Note Fund LLC',
    cik: '1806014',
    dateFiled: '2020-03-18',
    fileName: 'edgar/data/1806014/0001140361-20-006155.txt',
    accession: '0001140361-20-006155',
    line: 11,
  });
  const company = parseIndex(recorded(COMPANY));
  assert.equal(company.lines.length, 150);
  assert.deepEqual(
    [
      company.lines[2]?.companyName,
      company.lines[2]?.form,
      company.lines[2]?.cik,
      company.lines[2]?.dateFiled,
    ],
    ['36Kr Holdings Inc.', 'SC 13D/A', '1779476', '2022-10-03'],
  );
  // A form type wider than its column (as EDGAR's indexes carry since 2024).
  const header = recorded(DAILY).split('\n').slice(0, 10).join('\n');
  const wide = parseIndex(
    `${header}\nSCHEDULE 13G/A Abbhi Investments, LLC                                        1806888     20250102    edgar/data/1806888/0001104659-25-000001.txt\n`,
  );
  assert.deepEqual(
    [wide.lines[0]?.form, wide.lines[0]?.companyName, wide.lines[0]?.dateFiled, wide.lines[0]?.accession],
    ['SCHEDULE 13G/A', 'Abbhi Investments, LLC', '2025-01-02', '0001104659-25-000001'],
  );
});

test('EDGAR daily index: each accession number a row; again, nothing changes', async () => {
  const server = await serve('2020-03-19T12:00:00Z');
  try {
    const { key } = await walletAccount(server, 1000);
    replay.seen.length = 0;
    const run = await server.deps.collections.run('sec-index', { since: '2020-03-18' });
    assert.deepEqual([run.outcome, run.error], ['ok', null]);
    // 4,084 lines, a filing listed under each entity it concerns: 2,666 accession numbers.
    assert.deepEqual([run.rowsNew, run.rowsChanged, run.rowsRejected], [2666, 0, 0]);
    assert.deepEqual(
      replay.seen.map((s) => s.path),
      [
        '/Archives/edgar/daily-index/2020/QTR1/form.20200318.idx',
        // Not published yet (not recorded: 404): asked again next run.
        '/Archives/edgar/daily-index/2020/QTR1/form.20200319.idx',
      ],
    );
    assert.ok(replay.seen.every((s) => s.userAgent === USER_AGENT));
    // Accession numbers are not indexed: each read names the filer (an entity field) too.
    const [tenK] = await rowsOf(
      server,
      key,
      'filings/submissions',
      'cik=0001785173&accession_number=0001564590-20-011636',
    );
    assert.deepEqual(tenK, {
      cik: '0001785173',
      company_name: '89bio, Inc.',
      ticker: null,
      sic: null,
      file_number: null,
      accession_number: '0001564590-20-011636',
      filing_date: '2020-03-18',
      report_date: null,
      acceptance_datetime: null,
      act: null,
      form: '10-K',
      items: null,
      size: null,
      is_xbrl: null,
      is_inline_xbrl: null,
      primary_document: null,
      primary_doc_description: null,
    });
    // Listed under the subject (Barclays) and the filer (Cboe BZX): the first line names the row.
    const [nse] = await rowsOf(
      server,
      key,
      'filings/submissions',
      'cik=0000312070&accession_number=0001417835-20-000021',
    );
    assert.deepEqual([nse?.cik, nse?.company_name, nse?.form], ['0000312070', 'BARCLAYS BANK PLC', '25-NSE']);
    const [last] = await rowsOf(
      server,
      key,
      'filings/submissions',
      'cik=0001105608&accession_number=0001105608-20-000004',
    );
    assert.deepEqual(
      [last?.cik, last?.company_name, last?.form],
      ['0001105608', 'USA FINANCIAL SECURITIES CORPORATION', 'X-17A-5/A'],
    );
    // The day's index lists what EDGAR disseminated that day: a few filings are dated before it.
    const [effect] = await rowsOf(server, key, 'filings/submissions', 'cik=0000918160');
    assert.deepEqual(
      [effect?.accession_number, effect?.company_name, effect?.form, effect?.filing_date],
      ['9999999995-20-000581', 'AK STEEL HOLDING CORP', 'EFFECT', '2020-03-17'],
    );
    // 89bio filed an 8-K and an S-8 the same day: three rows for the filer.
    const bio = await rowsOf(server, key, 'filings/submissions', 'cik=0001785173');
    assert.deepEqual(bio.map((r) => r.form).sort(), ['10-K', '8-K', 'S-8']);
    assert.deepEqual(JSON.parse((await server.deps.datasets.collectorState('sec-index'))?.cursor ?? '{}'), {
      day: '2020-03-18',
    });

    replay.seen.length = 0;
    const again = await server.deps.collections.run('sec-index', { since: '2020-03-18' });
    assert.deepEqual([again.outcome, again.rowsNew, again.rowsChanged], ['ok', 0, 0]);
    // Without --since: from the day after the last index read.
    replay.seen.length = 0;
    const next = await server.deps.collections.run('sec-index');
    assert.deepEqual([next.outcome, next.rowsNew, next.requests], ['ok', 0, 1]);
    assert.deepEqual(
      replay.seen.map((s) => s.path),
      ['/Archives/edgar/daily-index/2020/QTR1/form.20200319.idx'],
    );
  } finally {
    await server.close();
  }
});

test("EDGAR full index: asked with the last answer's validators, an unchanged quarter is a 304", async () => {
  // 2 April 2025: the first quarter is closed; its last month comes from the daily indexes.
  const server = await serve('2025-04-02T12:00:00Z');
  try {
    const validators = JSON.stringify({ etag: ETAG, modified: LAST_MODIFIED });
    await server.deps.datasets.saveCollectorState({
      source: 'sec-index',
      cursor: JSON.stringify({ 'full:2025Q1': validators }),
      lastRunAt: null,
      lastSuccessAt: null,
      lastError: null,
      failures: 0,
      pausedUntil: null,
      claimedSlot: null,
    });
    replay.seen.length = 0;
    const run = await server.deps.collections.run('sec-index', { since: '2025-01-01' });
    assert.deepEqual([run.outcome, run.error, run.rowsNew, run.notModified], ['ok', null, 0, 1]);
    const [full, ...daily] = replay.seen;
    assert.equal(full?.path, '/Archives/edgar/full-index/2025/QTR1/form.idx');
    // What the recorded request sent, and the ETag beside it.
    assert.equal(full?.headers['if-modified-since'], conditional.request.headers['If-Modified-Since']?.[0]);
    assert.equal(full?.headers['if-none-match'], ETAG);
    assert.equal(conditional.response.status.code, 304);
    // From 2 March (31 days back) the daily indexes, weekdays only; none recorded, so none read.
    assert.equal(daily[0]?.path, '/Archives/edgar/daily-index/2025/QTR1/form.20250303.idx');
    assert.equal(daily.at(-1)?.path, '/Archives/edgar/daily-index/2025/QTR2/form.20250402.idx');
    assert.equal(daily.length, 23);
    assert.deepEqual(JSON.parse((await server.deps.datasets.collectorState('sec-index'))?.cursor ?? '{}'), {
      'full:2025Q1': validators,
      day: '2025-03-01',
    });
  } finally {
    await server.close();
  }
});

test('EDGAR full index: a quarter EDGAR does not have (403 AccessDenied) is nothing there', async () => {
  const server = await serve('2099-04-01T12:00:00Z');
  try {
    replay.seen.length = 0;
    const run = await server.deps.collections.run('sec-index', { since: '2099-01-01' });
    assert.deepEqual([run.outcome, run.error, run.rowsNew, run.datasets], ['ok', null, 0, []]);
    assert.equal(replay.seen[0]?.path, '/Archives/edgar/full-index/2099/QTR1/form.idx');
    assert.equal(await server.deps.datasets.datasetSource('filings/submissions'), null);
    assert.deepEqual(
      JSON.parse((await server.deps.datasets.collectorState('sec-index'))?.cursor ?? '{}'),
      {},
    );
  } finally {
    await server.close();
  }
});

test("EDGAR submissions: a filer's filings with its ticker, SIC and acceptance times; its older page too", async () => {
  const server = await serve('2026-03-05T12:00:00Z', { ciks: ['1318605'] });
  try {
    const { key } = await walletAccount(server, 1000);
    replay.seen.length = 0;
    const run = await server.deps.collections.run('sec-index', { since: '2026-03-05' });
    assert.deepEqual([run.outcome, run.error], ['ok', null]);
    assert.equal(run.rowsNew, 1722, '1,002 recent filings and 720 on the older page');
    assert.deepEqual(
      replay.seen.map((s) => s.path),
      [
        '/Archives/edgar/daily-index/2026/QTR1/form.20260305.idx',
        '/submissions/CIK0001318605.json',
        '/submissions/CIK0001318605-submissions-001.json',
      ],
    );
    const [eightK] = await rowsOf(
      server,
      key,
      'filings/submissions',
      'cik=0001318605&accession_number=0001628280-26-003837',
    );
    assert.deepEqual(eightK, {
      cik: '0001318605',
      company_name: 'Tesla, Inc.',
      ticker: 'TSLA',
      sic: '3711',
      file_number: '001-34756',
      accession_number: '0001628280-26-003837',
      filing_date: '2026-01-28',
      report_date: '2026-01-28',
      acceptance_datetime: '2026-01-28T21:11:04Z',
      act: '34',
      form: '8-K',
      items: '2.02,9.01',
      size: 5270374,
      is_xbrl: true,
      is_inline_xbrl: true,
      primary_document: 'tsla-20260128.htm',
      primary_doc_description: '8-K',
    });
    // The older page carries no filer: Tesla's from the first.
    const [paper] = await rowsOf(
      server,
      key,
      'filings/submissions',
      'cik=0001318605&accession_number=9999999997-05-006484',
    );
    assert.deepEqual(
      [paper?.cik, paper?.ticker, paper?.form, paper?.filing_date, paper?.report_date, paper?.items],
      ['0001318605', 'TSLA', 'REGDEX', '2005-02-17', null, '06'],
    );
    const again = await server.deps.collections.run('sec-index', { since: '2026-03-05' });
    assert.deepEqual([again.outcome, again.rowsNew, again.rowsChanged], ['ok', 0, 0]);
  } finally {
    await server.close();
  }
});

test('EDGAR full index: a quarter read whole, its validators kept for the next run', async () => {
  // No full index was recorded: the day's index (the same columns) stands in for the quarter's.
  const asked: { url: string; etag: string | null; lastModified: string | null }[] = [];
  const http = {
    get: async (url: string, options: { etag?: string | null; lastModified?: string | null } = {}) => {
      asked.push({ url, etag: options.etag ?? null, lastModified: options.lastModified ?? null });
      return url.endsWith('/full-index/2020/QTR1/form.idx')
        ? { status: 200, url, etag: ETAG, lastModified: LAST_MODIFIED, body: recorded(DAILY) }
        : { status: 404, url, etag: null, lastModified: null, body: '' };
    },
    postJson: async () => {
      throw new Error('EDGAR is asked with GET');
    },
  };
  const chunks = [];
  for await (const chunk of secIndex.run({
    http,
    baseUrl: 'https://www.sec.gov',
    cursor: {},
    now: Date.parse('2020-06-15T12:00:00Z'),
    today: '2020-06-15',
    since: '2020-03-02',
    backfill: false,
    credentials: {},
    options: {},
  }))
    chunks.push(chunk);
  assert.deepEqual(asked[0], {
    url: 'https://www.sec.gov/Archives/edgar/full-index/2020/QTR1/form.idx',
    etag: null,
    lastModified: null,
  });
  // The second quarter (from 1 April) from its daily indexes, none of them there.
  assert.equal(asked[1]?.url, 'https://www.sec.gov/Archives/edgar/daily-index/2020/QTR2/form.20200401.idx');
  assert.equal(chunks.length, 1);
  // Every line of the index, the days before --since too: one row per accession number.
  assert.equal(chunks[0]?.records.length, 2666);
  assert.deepEqual(chunks[0]?.cursor, {
    day: '2020-03-31',
    'full:2020Q1': JSON.stringify({ etag: ETAG, modified: LAST_MODIFIED }),
  });
});

test('EDGAR: option "ciks" is a list of CIKs', async () => {
  const http = {
    get: async () => {
      throw new Error('nothing is asked');
    },
    postJson: async () => {
      throw new Error('nothing is asked');
    },
  };
  const run = secIndex.run({
    http,
    baseUrl: 'https://www.sec.gov',
    cursor: {},
    now: Date.parse('2026-03-05T12:00:00Z'),
    today: '2026-03-05',
    since: null,
    backfill: false,
    credentials: {},
    options: { ciks: ['TSLA'] },
  });
  await assert.rejects(run[Symbol.asyncIterator]().next(), /option "ciks": a list of CIKs/);
});
