/**
 * The EDGAR ownership collector against two recorded full submissions, replayed locally: a Form 4 of
 * AAR CORP (0001127602-25-001055, one sale) and a 13F-HR of LTS One Management LP
 * (0001894188-23-000007, fourteen holdings at 2023-09-30). Rows are checked by hand against the files;
 * a second run asks nothing, a backfill asks again and changes nothing, and a submission EDGAR does not
 * have fails the run before anything is written.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { filingsOf } from '../src/catalog/sources/ownership.ts';
import { PoliteHttp } from '../src/collectors/http.ts';
import { Collections } from '../src/domain/collections.ts';
import { collectorServer, type Replay, recorded, rowsOf, startReplay, USER_AGENT } from './helpers/replay.ts';
import { type TestServer, walletAccount } from './helpers/server.ts';

const FORM4 = '/Archives/edgar/data/1750/000112760225001055/0001127602-25-001055.txt';
const THIRTEEN_F = '/Archives/edgar/data/1894188/000189418823000007/0001894188-23-000007.txt';
let replay: Replay;

before(async () => {
  replay = await startReplay((url) => {
    if (url.pathname === FORM4)
      return [
        200,
        recorded('sec/form4_full_submission_0001127602-25-001055.txt'),
        { 'content-type': 'text/plain' },
      ];
    if (url.pathname === THIRTEEN_F)
      return [
        200,
        recorded('sec/13F-HR_full_submission_0001894188-23-000007.txt'),
        { 'content-type': 'text/plain' },
      ];
    return null;
  });
});
after(() => replay.close());

const serve = (filings: string[]) =>
  collectorServer('2025-01-11T12:00:00Z', {
    'sec-ownership': { enabled: false, base_url: replay.base, per_second: 10, options: { filings } },
  });

test('EDGAR ownership: a Form 4 becomes its transaction, a 13F-HR its holdings; again, nothing changes', async () => {
  const server = await serve(['1750/0001127602-25-001055', '0001894188-23-000007']);
  try {
    const { key } = await walletAccount(server, 1000);
    replay.seen.length = 0;
    const run = await server.deps.collections.run('sec-ownership');
    assert.deepEqual([run.outcome, run.rowsNew, run.rowsChanged, run.error], ['ok', 15, 0, null]);
    assert.deepEqual(run.datasets, ['ownership/insider-transactions', 'ownership/holdings']);
    assert.deepEqual(
      replay.seen.map((s) => [s.path, s.userAgent]),
      [
        [FORM4, USER_AGENT],
        [THIRTEEN_F, USER_AGENT],
      ],
    );

    const transactions = await rowsOf(server, key, 'ownership/insider-transactions');
    assert.deepEqual(transactions, [
      {
        accession_number: '0001127602-25-001055',
        document_type: '4',
        transaction_date: '2025-01-10',
        filing_date: '2025-01-10',
        issuer_cik: '0000001750',
        issuer_name: 'AAR CORP',
        issuer_ticker: 'AIR',
        reporting_owner_cik: '0001806647',
        reporting_owner_name: 'Garascia Jessica A.',
        is_director: false,
        is_officer: true,
        is_ten_percent_owner: false,
        officer_title: 'Senior VP, GC, CAO & Secretary',
        security_title: 'Common Stock',
        transaction_code: 'S',
        equity_swap_involved: false,
        shares: 1500,
        price_per_share: 66.903,
        acquired_disposed: 'D',
        shares_owned_following: 37565,
        direct_or_indirect: 'D',
        table: 'non-derivative',
        footnotes:
          'F1: The price reported in Column 4 is a weighted average price. These shares were sold in multiple transactions at prices ranging from $66.8350 to $66.9800 inclusive. The reporting person undertakes to provide AAR CORP. any security holder of AAR CORP. or the staff of the Securities Exchange Commission upon request, full information regarding the number of shares sold at each separate price within the range set forth in this footnote.',
      },
    ]);

    const holdings = await rowsOf(server, key, 'ownership/holdings');
    assert.equal(holdings.length, 14);
    // The summary page says 14 entries worth $454,926,000 in all.
    assert.equal(
      holdings.reduce((sum, h) => sum + (h.value as number), 0),
      454_926_000,
    );
    assert.deepEqual(
      holdings.find((h) => h.cusip === '023135106'),
      {
        filer_cik: '0001894188',
        filer_name: 'LTS One Management LP',
        report_period: '2023-09-30',
        accession_number: '0001894188-23-000007',
        name_of_issuer: 'AMAZON COM INC',
        title_of_class: 'COM',
        cusip: '023135106',
        ticker: null,
        value: 17_479_000,
        shares: 137_500,
        sh_prn: 'SH',
        put_call: null,
        investment_discretion: 'SOLE',
        voting_sole: 137_500,
        voting_shared: 0,
        voting_none: 0,
      },
    );
    const visa = holdings.find((h) => h.cusip === '92826C839');
    assert.deepEqual(
      [visa?.name_of_issuer, visa?.value, visa?.shares, visa?.voting_sole],
      ['VISA INC', 20_701_000, 90_000, 90_000],
    );
    const flavors = holdings.find((h) => h.cusip === '459506101');
    assert.deepEqual([flavors?.name_of_issuer, flavors?.shares], ['INTERNATIONAL FLAVORS&FRAGRA', 2_265_000]);

    assert.deepEqual(
      JSON.parse((await server.deps.datasets.collectorState('sec-ownership'))?.cursor ?? '{}'),
      {
        fetched: '0001127602-25-001055 0001894188-23-000007',
      },
    );

    // Again: both filings are fetched, nothing is asked.
    replay.seen.length = 0;
    const again = await server.deps.collections.run('sec-ownership');
    assert.deepEqual([again.outcome, again.rowsNew, again.rowsChanged, again.requests], ['ok', 0, 0, 0]);
    assert.deepEqual(replay.seen, []);

    // A backfill asks for both again: the same rows, nothing new or changed.
    const backfill = await server.deps.collections.run('sec-ownership', { backfill: true });
    assert.deepEqual(
      [backfill.outcome, backfill.rowsNew, backfill.rowsChanged, backfill.requests],
      ['ok', 0, 0, 2],
    );
    assert.equal((await rowsOf(server, key, 'ownership/holdings')).length, 14);
  } finally {
    await server.close();
  }
});

test('EDGAR ownership: a submission EDGAR does not have fails the run, and nothing is written', async () => {
  const server = await serve(['1750/0001127602-25-009999', '1750/0001127602-25-001055']);
  try {
    const run = await server.deps.collections.run('sec-ownership');
    assert.equal(run.outcome, 'failed');
    assert.equal(
      run.error,
      `0001127602-25-009999: EDGAR has no submission at ${replay.base}/Archives/edgar/data/1750/000112760225009999/0001127602-25-009999.txt (HTTP 404); check the CIK and the accession number`,
    );
    assert.deepEqual([run.rowsNew, run.rowsChanged, run.requests, run.datasets], [0, 0, 1, []]);
    assert.equal(await server.deps.datasets.datasetSource('ownership/insider-transactions'), null);
    assert.equal(
      (await server.deps.datasets.listImportRuns({ dataset: 'ownership/insider-transactions' }, 5)).length,
      0,
    );
    const state = await server.deps.datasets.collectorState('sec-ownership');
    assert.deepEqual([state?.cursor, state?.failures, state?.lastSuccessAt], ['{}', 1, null]);
  } finally {
    await server.close();
  }
});

test('EDGAR ownership: a filing that is not Forms 3, 4, 5 or 13F-HR, or not the one asked, is refused', async () => {
  const server = await serve([]);
  try {
    const collections = withFilings(server, ['1894188/0001127602-25-001055']);
    replay.seen.length = 0;
    // EDGAR files a submission under each party's CIK: the replay has it under the issuer's only.
    const missing = await collections.run('sec-ownership');
    assert.match(missing.error ?? '', /0001127602-25-001055: EDGAR has no submission at .*\(HTTP 404\)/);

    const form = recorded('sec/form4_full_submission_0001127602-25-001055.txt');
    const other = await startReplay((url) =>
      url.pathname === FORM4
        ? [200, form.replace('CONFORMED SUBMISSION TYPE:\t4', 'CONFORMED SUBMISSION TYPE:\t8-K')]
        : url.pathname === THIRTEEN_F
          ? [200, form]
          : null,
    );
    try {
      const refused = await withFilings(server, ['1750/0001127602-25-001055'], other.base).run(
        'sec-ownership',
      );
      assert.equal(
        refused.error,
        '0001127602-25-001055 is a 8-K filing: sec-ownership reads Forms 3, 4 and 5 and 13F-HR',
      );
      const mixedUp = await withFilings(server, ['0001894188-23-000007'], other.base).run('sec-ownership');
      assert.match(mixedUp.error ?? '', /the submission is 0001127602-25-001055, not 0001894188-23-000007$/);
    } finally {
      await other.close();
    }
  } finally {
    await server.close();
  }
});

test('EDGAR ownership: option "filings" is CIK/ACCESSION, or an accession filed by its own filer', () => {
  assert.deepEqual(filingsOf(['1750/0001127602-25-001055', '0001894188-23-000007', '0001894188-23-000007']), [
    { cik: '1750', accession: '0001127602-25-001055' },
    { cik: '1894188', accession: '0001894188-23-000007' },
  ]);
  assert.deepEqual(filingsOf(undefined), []);
  assert.throws(() => filingsOf('0001894188-23-000007'), /is a list of "CIK\/ACCESSION"/);
  assert.throws(() => filingsOf(['000189418823000007']), /"000189418823000007" is not "CIK\/ACCESSION"/);
});

/** The server's collectors with another filing list (and base URL). */
function withFilings(server: TestServer, filings: string[], base = replay.base): Collections {
  const config = structuredClone(server.deps.config.collectors);
  const settings = config.sources['sec-ownership'];
  assert.ok(settings);
  settings.options = { filings };
  settings.base_url = base;
  return new Collections({
    datasets: server.deps.datasets,
    catalog: server.deps.catalog,
    config,
    http: (options) => new PoliteHttp(options),
    credentials: {},
    now: server.deps.now,
  });
}
