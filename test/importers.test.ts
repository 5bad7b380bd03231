/**
 * The named importers on the published files in shared/data/real (read there, never copied): row
 * counts, values checked by hand against the files, nulls and units; importing twice; corrupted copies
 * refused with the line or path and nothing loaded.
 */

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Row } from '../src/catalog/types.ts';
import type { ImportFileInput } from '../src/domain/imports.ts';
import { realDataDir } from './helpers/real-data.ts';
import { startServer, type TestServer } from './helpers/server.ts';

// The fixtures sit beside the repository (../shared/data/real from its root); a missing folder fails.
const REAL = realDataDir();
const fixture = (name: string): Uint8Array => {
  assert.ok(existsSync(REAL), `the fixtures folder ${REAL} is missing`);
  return readFileSync(`${REAL}${name}`);
};
const text = (name: string) => Buffer.from(fixture(name)).toString('utf8');
const bytes = (s: string) => new TextEncoder().encode(s);

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server.close();
});

const importFile = (input: Partial<ImportFileInput> & { fileName: string }) =>
  server.deps.imports.importFile({ bytes: fixture(input.fileName), ...input });

async function rows(dataset: string, filters: Record<string, string[]> = {}): Promise<Row[]> {
  const out: Row[] = [];
  let after: { t: string; id: number } | undefined;
  for (;;) {
    const page = (
      await server.deps.store.queryRows({
        dataset,
        filters,
        descending: false,
        limit: 5000,
        ...(after ? { after } : {}),
      })
    ).rows;
    out.push(...page.map((r) => JSON.parse(r.json) as Row));
    const last = page.at(-1);
    if (!last || page.length < 5000) return out;
    after = { t: last.t, id: last.id };
  }
}

/** A refusal whose message names `where`, after which the dataset holds no imported row. */
async function refused(input: ImportFileInput, dataset: string, where: RegExp): Promise<void> {
  await assert.rejects(server.deps.imports.importFile(input), (error: Error) => {
    assert.match(error.message, where);
    return true;
  });
  const span = await server.deps.store.datasetSpan(dataset);
  assert.notEqual(span?.source, 'import', 'nothing was imported');
  assert.deepEqual(await server.deps.store.listImportRuns({ dataset }, 10), []);
}

describe('corrupted copies are refused, naming the line or path, and load nothing', () => {
  test('a truncated CFTC file: its cut line has too few cells', async () => {
    const whole = text('cftc-legacy-futures-2024.csv');
    const cut = whole.slice(0, whole.indexOf('\n', 50_000) + 200);
    const line = cut.split('\n').length;
    await refused(
      { bytes: bytes(cut), fileName: 'cftc.csv', format: 'cftc-legacy-futures' },
      'cftc/legacy_futures-facts',
      new RegExp(`line ${line}: \\d+ cells, but the header has 129 columns`),
    );
  });

  test('a FRED file in Latin-1: the line with the byte that is not UTF-8', async () => {
    const latin1 = Buffer.concat([
      Buffer.from('DATE,DGS10\n2020-01-02,1.88\n2020-01-03,1.80 '),
      Buffer.from([0xe9, 0x0a]),
    ]);
    await refused(
      { bytes: latin1, fileName: 'fred-DGS10.csv' },
      'macro/fed-h15-series',
      /line 3: bytes that are not UTF-8/,
    );
  });

  test('meeting dates without the minutes column: the header line names it', async () => {
    const dropped = text('fed-meeting-dates.csv')
      .split('\n')
      .map((l) => l.split(',').slice(0, 4).join(','))
      .join('\n');
    await refused(
      { bytes: bytes(dropped), fileName: 'fed-meeting-dates.csv' },
      'calendar/fed-events',
      /line 1: the header has no column "fed_minutes_date_indicator"/,
    );
  });

  test('a Form 4 with a malformed element: the line and the element path', async () => {
    const broken = text('sec-form4-snowflake.xml').replace('</transactionShares>', '</transactionShare>');
    await refused(
      { bytes: bytes(broken), fileName: 'form4.xml', format: 'edgar-form4' },
      'ownership/insider-transactions',
      /line 49, column 35 \(in \/ownershipDocument\/nonDerivativeTable\/nonDerivativeTransaction\/transactionAmounts\): unexpected close tag/,
    );
  });

  test('a Form 4 nested deeper than 64 elements is refused at once, naming the line and path', async () => {
    // 40,000 nested elements took saxes ten seconds (namespace lookups through every open element).
    const dir = mkdtempSync(join(tmpdir(), 'tmd-deep-xml-'));
    try {
      const file = join(dir, 'deep.xml');
      writeFileSync(
        file,
        `<ownershipDocument>\n${'<a>\n'.repeat(40_000)}${'</a>'.repeat(40_000)}</ownershipDocument>\n`,
      );
      const started = performance.now();
      await refused(
        { bytes: readFileSync(file), fileName: 'deep.xml', format: 'edgar-form4' },
        'ownership/insider-transactions',
        new RegExp(
          `nests elements too deeply; nothing was imported\\.\\n  line 65, column 3 \\(in /ownershipDocument${'/a'.repeat(63)}\\): elements nested more than 64 deep`,
        ),
      );
      assert.ok(performance.now() - started < 2000, 'refused without parsing the whole depth');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a truncated 13F table and a truncated submissions file are refused', async () => {
    const table = text('sec-13f-information-table-sample.xml');
    await refused(
      {
        bytes: bytes(table.slice(0, 5000)),
        fileName: '13f.xml',
        format: 'edgar-13f',
        set: { report_period: '2023-12-31' },
      },
      'ownership/holdings',
      /line \d+, column \d+ .*unclosed tag|line \d+, column \d+/,
    );
    const submissions = text('sec-submissions-tesla.json');
    await refused(
      { bytes: bytes(submissions.slice(0, 9000)), fileName: 'sub.json', format: 'edgar-submissions' },
      'filings/submissions',
      /malformed/,
    );
  });

  test('a companyfacts value that is not a number is rejected by its path; --partial keeps the rest', async () => {
    const doc = JSON.parse(text('sec-companyfacts-lpa.json'));
    doc.facts['ifrs-full'].AccrualsClassifiedAsCurrent.units.USD[1].val = 'n/a';
    const input = { bytes: bytes(JSON.stringify(doc)), fileName: 'companyfacts.json' };
    await refused(
      input,
      'corporate/financial-statements',
      /1 of 768 record\(s\) are invalid[\s\S]*facts\.ifrs-full\.AccrualsClassifiedAsCurrent\.units\.USD\[1\]: value \(number\): "n\/a" is not a number/,
    );
    const partial = await server.deps.imports.importFile({ ...input, partial: true });
    assert.deepEqual([partial.read, partial.imported, partial.rejected], [768, 767, 1]);
    assert.equal(partial.rejections[0]?.where, 'facts.ifrs-full.AccrualsClassifiedAsCurrent.units.USD[1]');
  });

  test('a file that is no known format asks for --format; a dataset outside the targets is refused', async () => {
    await assert.rejects(
      server.deps.imports.importFile({ bytes: bytes('a,b\n1,2\n'), fileName: 'mystery.csv' }),
      /Cannot tell the format of mystery\.csv: pass --format <name> \(cftc-legacy-futures, fred-series/,
    );
    await assert.rejects(
      importFile({ fileName: 'fred-DGS10.csv', dataset: 'stocks/prices' }),
      /fred-series imports into macro\/fed-h15-series, rates\/fed-h15-series, macro\/treasury-yield-series/,
    );
  });
});

describe('each importer on its published file', () => {
  test('FRED DGS10 into H.15: a yield on a date, "." as null, the series named', async () => {
    const summary = await importFile({ fileName: 'fred-DGS10.csv' });
    assert.deepEqual(
      [summary.dataset, summary.format, summary.read, summary.imported, summary.replaced, summary.rejected],
      ['macro/fed-h15-series', 'fred-series', 15395, 15395, 0, 0],
    );
    const stored = await rows('macro/fed-h15-series', { series_id: ['DGS10'] });
    assert.equal(stored.length, 15395);
    assert.deepEqual(stored[0], {
      series_id: 'DGS10',
      h15_series: 'RIFLGFCY10_N.B',
      title: 'Market yield on U.S. Treasury securities at 10-year constant maturity',
      date: '1962-01-02',
      value: 4.06,
    });
    assert.equal(stored.find((r) => r.date === '1962-02-12')?.value, null);
    assert.equal(stored.find((r) => r.date === '2021-01-04')?.value, 0.93);
  });

  test('FRED: importing the same file twice leaves the same rows; a newer file adds and corrects', async () => {
    const again = await importFile({ fileName: 'fred-DGS10.csv' });
    // Every row is stored with the same values already: none is rewritten, none counted as replaced.
    assert.deepEqual([again.read, again.imported, again.replaced], [15395, 0, 0]);
    assert.equal((await rows('macro/fed-h15-series')).length, 15395);
    const newer = `observation_date,DGS10\n2021-01-04,0.95\n2021-01-05,0.96\n`;
    const update = await server.deps.imports.importFile({
      bytes: bytes(newer),
      fileName: 'fred-DGS10-new.csv',
    });
    assert.deepEqual([update.imported, update.replaced], [1, 1]);
    const stored = await rows('macro/fed-h15-series', { series_id: ['DGS10'] });
    assert.equal(stored.length, 15396);
    assert.equal(stored.find((r) => r.date === '2021-01-04')?.value, 0.95);
    assert.equal(stored.at(-1)?.date, '2021-01-05');
  });

  test('FRED DGS2 into the Treasury yield series by tenor', async () => {
    const summary = await importFile({ fileName: 'fred-DGS2.csv', dataset: 'rates/treasury-yield-series' });
    assert.deepEqual([summary.dataset, summary.imported], ['macro/treasury-yield-series', 11635]);
    const stored = await rows('macro/treasury-yield-series');
    assert.deepEqual(stored[0], { tenor: '2 Yr', maturity_months: 24, date: '1976-06-01', par_yield: 7.26 });
  });

  test('CFTC legacy futures: positions, percentages, traders and units of one market and week', async () => {
    const summary = await importFile({ fileName: 'cftc-legacy-futures-2024.csv' });
    assert.deepEqual(
      [summary.dataset, summary.read, summary.imported],
      ['cftc/legacy_futures-facts', 1820, 1820],
    );
    const wheat = (await rows('cftc/legacy_futures-facts', { cftc_contract_market_code: ['001602'] })).find(
      (r) => r.report_date === '2024-02-06',
    );
    assert.deepEqual(
      wheat && {
        market: wheat.market_and_exchange_names,
        contract: wheat.contract_market_name,
        market_code: wheat.cftc_market_code,
        units: wheat.contract_units,
        oi: wheat.open_interest_all,
        long: wheat.noncomm_positions_long_all,
        spread: wheat.noncomm_positions_spread_all,
        pct: wheat.pct_of_oi_noncomm_long_all,
        traders: wheat.traders_tot_all,
        conc: wheat.conc_gross_le_4_tdr_long_all,
        fut: wheat.futonly_or_combined,
        commodity: wheat.commodity_name,
      },
      {
        market: 'WHEAT-SRW - CHICAGO BOARD OF TRADE',
        contract: 'WHEAT-SRW',
        market_code: 'CBT',
        units: '(CONTRACTS OF 5,000 BUSHELS)',
        oi: 419546,
        long: 121345,
        spread: 113552,
        pct: 28.9,
        traders: 360,
        conc: 13.1,
        fut: 'FutOnly',
        commodity: null,
      },
    );
    // A market's first week has no change figures: "." in the file, null here.
    const oats = (await rows('cftc/legacy_futures-facts', { cftc_contract_market_code: ['004603'] })).find(
      (r) => r.report_date === '2024-01-16',
    );
    assert.equal(oats?.open_interest_all, 3449);
    assert.equal(oats?.change_in_open_interest_all, null);
  });

  test('meeting dates: one event per indicator, at 2 p.m. in Washington, duplicates of a day loaded once', async () => {
    const summary = await importFile({ fileName: 'fed-meeting-dates.csv' });
    assert.deepEqual([summary.read, summary.imported, summary.duplicates], [822, 807, 15]);
    const events = await rows('calendar/fed-events');
    const sept = events.find((e) => e.event_id === 'fomc-meeting-2023-09-21');
    assert.deepEqual(sept, {
      event_id: 'fomc-meeting-2023-09-21',
      datetime: '2023-09-21T18:00:00Z',
      event_type: 'FOMC meeting',
      agency: 'Federal Reserve Board',
      importance: 'high',
      is_fomc_meeting: true,
      is_minutes_release: false,
      is_non_scheduled: false,
      has_projection_materials: true,
      speaker: null,
      location: null,
      fed_funds_upper: null,
    });
    assert.equal(
      events.find((e) => e.event_id === 'fomc-meeting-1975-01-21')?.datetime,
      '1975-01-21T19:00:00Z',
    );
    assert.equal(events.find((e) => e.event_id === 'fomc-minutes-2023-10-11')?.is_minutes_release, true);
  });

  test('OpenFlights: 7,698 airports, \\N as null, degrees and hours; ODbL credit recorded', async () => {
    const summary = await importFile({
      fileName: 'openflights-airports.dat',
      set: { release_date: '2019-05-13' },
    });
    assert.deepEqual([summary.format, summary.imported], ['openflights-airports', 7698]);
    assert.match(summary.run?.attribution ?? '', /OpenFlights\.org.*Open Database License/);
    assert.equal(summary.run?.licence, 'Open Database License (ODbL) 1.0');
    const airports = await rows('open-data/openflights-airports');
    assert.deepEqual(
      airports.find((a) => a.airport_id === 1),
      {
        airport_id: 1,
        name: 'Goroka Airport',
        city: 'Goroka',
        country: 'Papua New Guinea',
        iata: 'GKA',
        icao: 'AYGA',
        latitude: -6.081689834590001,
        longitude: 145.391998291,
        altitude_ft: 5282,
        utc_offset: 10,
        dst: 'U',
        tz: 'Pacific/Port_Moresby',
        type: 'airport',
        source: 'OurAirports',
        release_date: '2019-05-13',
      },
    );
    assert.equal(airports.find((a) => a.airport_id === 22)?.iata, null);
  });

  test('EDGAR submissions: one row per filing from the column arrays, empty strings as null', async () => {
    const summary = await importFile({ fileName: 'sec-submissions-tesla.json', dataset: 'sec/filings' });
    assert.deepEqual([summary.dataset, summary.imported], ['filings/submissions', 1001]);
    const filing = (await rows('filings/submissions', { accession_number: ['0001790565-22-000015'] }))[0];
    assert.deepEqual(filing, {
      cik: '0001318605',
      company_name: 'Tesla, Inc.',
      ticker: 'TSLA',
      sic: '3711',
      file_number: null,
      accession_number: '0001790565-22-000015',
      filing_date: '2022-11-30',
      report_date: '2022-11-28',
      acceptance_datetime: '2022-11-30T16:42:36Z',
      act: null,
      form: '4',
      items: null,
      size: 8579,
      is_xbrl: false,
      is_inline_xbrl: false,
      primary_document: 'xslF345X03/edgardoc.xml',
      primary_doc_description: 'PRIMARY DOCUMENT',
    });
    const headers = await importFile({
      fileName: 'sec-submissions-tesla.json',
      dataset: 'sec/filing-headers',
    });
    assert.deepEqual([headers.dataset, headers.imported], ['filings/headers', 1001]);
  });

  test("Form 4: each transaction's shares and price, its footnotes, both tables", async () => {
    const summary = await importFile({ fileName: 'sec-form4-snowflake.xml' });
    assert.deepEqual(
      [summary.dataset, summary.read, summary.imported],
      ['ownership/insider-transactions', 7, 7],
    );
    const trades = await rows('ownership/insider-transactions');
    const sale = trades.find((t) => t.shares === 73170);
    assert.deepEqual(
      sale && {
        issuer: [sale.issuer_cik, sale.issuer_name, sale.issuer_ticker],
        owner: [sale.reporting_owner_cik, sale.reporting_owner_name, sale.officer_title, sale.is_officer],
        trade: [sale.transaction_date, sale.transaction_code, sale.price_per_share, sale.acquired_disposed],
        after: [sale.shares_owned_following, sale.direct_or_indirect, sale.table],
      },
      {
        issuer: ['0001640147', 'Snowflake Inc.', 'SNOW'],
        owner: ['0001402349', 'Scarpelli Michael', 'Chief Financial Officer', true],
        trade: ['2022-12-13', 'S', 150.841, 'D'],
        after: [227927, 'D', 'non-derivative'],
      },
    );
    assert.match(
      String(sale?.footnotes),
      /^F2: The sales reported in this Form 4 .* \| F3: The price reported in Column 4 is a weighted-average price/,
    );
    const option = trades.find((t) => t.table === 'derivative');
    assert.deepEqual(
      [option?.security_title, option?.shares, option?.price_per_share, option?.shares_owned_following],
      ['Stock Option (Right to Buy)', 200000, 0, 2219299],
    );
    const again = await importFile({ fileName: 'sec-form4-snowflake.xml' });
    assert.deepEqual([again.imported, again.replaced], [0, 0], 'the same filing again changes nothing');
    assert.equal((await rows('ownership/insider-transactions')).length, 7);
  });

  test('companyfacts: one row per fact with its period, unit and filing', async () => {
    const summary = await importFile({ fileName: 'sec-companyfacts-lpa.json' });
    // Loaded after the partial import of the corrupted copy: the file adds the one fact that copy had
    // wrong; the other 767 are stored with the same values already.
    assert.deepEqual([summary.read, summary.imported, summary.replaced], [768, 1, 0]);
    const facts = await rows('corporate/financial-statements', {
      concept: ['AccrualsClassifiedAsCurrent'],
    });
    assert.deepEqual(facts[0], {
      cik: '0001997711',
      entity_name: 'Logistic Properties of the Americas',
      taxonomy: 'ifrs-full',
      concept: 'AccrualsClassifiedAsCurrent',
      label: null,
      unit: 'USD',
      period_start: null,
      period_end: '2022-12-31',
      value: 2650535,
      accession_number: '0001493152-24-016772',
      fiscal_year: 2023,
      fiscal_period: 'FY',
      form: '20-F',
      filed_date: '2024-04-26',
      frame: 'CY2022Q4I',
    });
    const shares = await rows('corporate/financial-statements', {
      concept: ['EntityCommonStockSharesOutstanding'],
    });
    assert.deepEqual(
      shares.map((f) => [f.unit, f.period_end, f.value, f.form]),
      [
        ['shares', '2024-03-28', 31709747, '20-F'],
        ['shares', '2025-04-02', 31668601, '20-F'],
        ['shares', '2025-04-02', 31668601, '20-F/A'],
      ],
    );
  });

  test("13F: a holding's value and CUSIP, the quarter from --set", async () => {
    const summary = await importFile({
      fileName: 'sec-13f-information-table-sample.xml',
      set: { report_period: '2023-12-31', filer_name: 'Sample filer' },
    });
    assert.deepEqual([summary.dataset, summary.imported], ['ownership/holdings', 169]);
    const att = (await rows('ownership/holdings', { cusip: ['02079K107'] }))[0];
    assert.deepEqual(att, {
      filer_cik: null,
      filer_name: 'Sample filer',
      report_period: '2023-12-31',
      accession_number: null,
      name_of_issuer: 'AT&T INC',
      title_of_class: 'COM',
      cusip: '02079K107',
      ticker: null,
      value: 7454547777,
      shares: 79296,
      sh_prn: 'SH',
      put_call: null,
      investment_discretion: 'SOLE',
      voting_sole: 0,
      voting_shared: 0,
      voting_none: 79296,
    });
    await assert.rejects(
      importFile({ fileName: 'sec-13f-information-table-sample.xml' }),
      /--set report_period=YYYY-MM-DD/,
    );
  });

  test('13F: a table cut from a full submission, a line end before its XML declaration, imports', async () => {
    const cut = `\n${text('sec-13f-information-table-sample.xml')}`;
    const summary = await server.deps.imports.importFile({
      bytes: bytes(cut),
      fileName: 'index.xml',
      set: { report_period: '2023-12-31' },
    });
    assert.deepEqual([summary.dataset, summary.imported], ['ownership/holdings', 169]);
    // A malformed table still names its line, counted from the top of the file as given.
    const broken = `\n\n${text('sec-13f-information-table-sample.xml').replace('</ns1:cusip>', '</ns1:cusp>')}`;
    const runs = (await server.deps.store.listImportRuns({ dataset: 'ownership/holdings' }, 100)).length;
    const brokenLine = broken.split('\n').findIndex((l) => l.includes('cusp>')) + 1;
    await assert.rejects(
      server.deps.imports.importFile({
        bytes: bytes(broken),
        fileName: 'broken.xml',
        format: 'edgar-13f',
        set: { report_period: '2023-12-31' },
      }),
      (error: Error & { details?: string[] }) => {
        assert.match(
          error.message,
          new RegExp(`line ${brokenLine}, column \\d+ \\(in /informationTable/infoTable`),
        );
        return true;
      },
    );
    assert.equal(
      (await server.deps.store.listImportRuns({ dataset: 'ownership/holdings' }, 100)).length,
      runs,
    );
  });

  test('13F full submission (.txt): the period, filer and accession from its header, no --set', async () => {
    const file = readFileSync(
      join(REAL, '..', 'recorded', 'sec', '13F-HR_full_submission_0001894188-23-000007.txt'),
    );
    const summary = await server.deps.imports.importFile({
      bytes: file,
      fileName: '0001894188-23-000007.txt',
    });
    assert.deepEqual([summary.dataset, summary.imported], ['ownership/holdings', 14]);
    const amazon = (await rows('ownership/holdings', { cusip: ['023135106'] })).find(
      (r) => r.accession_number === '0001894188-23-000007',
    );
    assert.deepEqual(
      amazon && [
        amazon.report_period,
        amazon.filer_cik,
        amazon.filer_name,
        amazon.name_of_issuer,
        amazon.value,
      ],
      ['2023-09-30', '0001894188', 'LTS One Management LP', 'AMAZON COM INC', 17479000],
    );
    // --set still wins over the header; a submission with no information table is refused.
    const noTable = file.toString('utf8').replace('<TYPE>INFORMATION TABLE', '<TYPE>EX-99');
    await assert.rejects(
      server.deps.imports.importFile({ bytes: bytes(noTable), fileName: 'other.txt', format: 'edgar-13f' }),
      (error: Error) => {
        assert.match(
          error.message,
          /TYPE INFORMATION TABLE with an <XML> part: not found \(documents: 13F-HR, EX-99\)/,
        );
        return true;
      },
    );
    const overridden = await server.deps.imports.importFile({
      bytes: file,
      fileName: '0001894188-23-000007.txt',
      set: { filer_name: 'LTS One' },
    });
    assert.deepEqual([overridden.imported, overridden.replaced], [0, 14]);
    assert.ok(
      (await rows('ownership/holdings', { cusip: ['023135106'] })).some((r) => r.filer_name === 'LTS One'),
    );
  });

  test('Form 4 full submission (.txt): its transaction, the accession and filing date from its header', async () => {
    const file = readFileSync(
      join(REAL, '..', 'recorded', 'sec', 'form4_full_submission_0001127602-25-001055.txt'),
    );
    const summary = await server.deps.imports.importFile({ bytes: file, fileName: 'submission.txt' });
    assert.deepEqual([summary.dataset, summary.imported], ['ownership/insider-transactions', 1]);
    const [row] = (await rows('ownership/insider-transactions')).filter(
      (r) => r.accession_number === '0001127602-25-001055',
    );
    assert.deepEqual(
      row && [
        row.transaction_date,
        row.filing_date,
        row.reporting_owner_name,
        row.shares,
        row.price_per_share,
      ],
      ['2025-01-10', '2025-01-10', 'Garascia Jessica A.', 1500, 66.903],
    );
  });
});
