/**
 * The `tmd` operator CLI: the same domain calls as the admin API, against the server's own database
 * file. Imports read the real files in ../shared/data/real by path; nothing is copied into the repo.
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { Operator } from '../src/domain/operator.ts';
import { runCli } from '../src/tmd.ts';
import { freshIp } from './helpers/operator.ts';
import { realDataDir } from './helpers/real-data.ts';
import { assertLedgerBalanced, bearer, sandboxKey, startServer, type TestServer } from './helpers/server.ts';

const REAL = realDataDir().slice(0, -1);
const CFTC = `${REAL}/cftc-legacy-futures-2024.csv`;
const CFTC_MAP = 'config/import-maps/cftc-legacy-futures.json';
const FRED_DGS10 = `${REAL}/fred-DGS10.csv`;
const FRED_DGS2 = `${REAL}/fred-DGS2.csv`;
const fredSet = (id: string, h15: string, title: string) => [
  '--set',
  `series_id=${id}`,
  '--set',
  `h15_series=${h15}`,
  '--set',
  `title=${title}`,
];

let server: TestServer;
before(async () => {
  server = await startServer();
});
afterEach(() => assertLedgerBalanced(server));
after(() => server.close());

function cliEnv() {
  return {
    DATABASE_URL: join(server.dir, 'tmd.sqlite'),
    DATA_DIR: server.dir,
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
    LOG_LEVEL: 'silent' as const,
  };
}

/** Runs `tmd <argv>` in this process against the test server's database. */
async function tmd(argv: string[], stdin?: string) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: cliEnv(),
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    now: server.clock.now,
    ...(stdin === undefined ? {} : { readStdin: async () => stdin }),
  });
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  // biome-ignore lint/suspicious/noExplicitAny: asserted field by field
  return { code, stdout, stderr, json: json as any };
}

async function read(path: string) {
  const key = await sandboxKey(server);
  const res = await server.request('GET', path, { headers: bearer(key) });
  assert.equal(res.status, 200, res.text);
  return res;
}

describe('tmd import', () => {
  test('loads the CFTC legacy futures CSV into cot/legacy-futures with the shipped column map: typed, real, every row', async () => {
    const run = await tmd(['import', 'cot/legacy-futures', CFTC, '--map', CFTC_MAP, '--null', '.']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.json.dataset, 'cot/legacy-futures');
    assert.equal(run.json.rows, 1820);
    assert.equal(run.json.total_rows, 1820);
    assert.equal(run.json.fields.report_date, 'column "As of Date in Form YYYY-MM-DD"');
    assert.ok(run.json.ignored_columns.includes('As of Date in Form YYMMDD'));

    const res = await read(
      '/api/v1/data/cot/legacy-futures?cftc_contract_market_code=001602&from=2024-02-06&to=2024-02-06',
    );
    assert.equal(res.headers.get('x-data-sample'), 'false');
    assert.equal(res.json.meta.sample, false);
    assert.equal(res.json.data.length, 1);
    const row = res.json.data[0];
    // Values as published on line 2 of the file, trimmed and typed.
    assert.deepEqual(
      {
        market_and_exchange_names: row.market_and_exchange_names,
        report_date: row.report_date,
        cftc_market_code: row.cftc_market_code,
        cftc_commodity_code: row.cftc_commodity_code,
        open_interest_all: row.open_interest_all,
        noncommercial_long_all: row.noncommercial_long_all,
        total_reportable_long_all: row.total_reportable_long_all,
        change_nonreportable_short_all: row.change_nonreportable_short_all,
        pct_oi_noncommercial_short_all: row.pct_oi_noncommercial_short_all,
        traders_total_all: row.traders_total_all,
        conc_gross_4_long_all: row.conc_gross_4_long_all,
        contract_units: row.contract_units,
      },
      {
        market_and_exchange_names: 'WHEAT-SRW - CHICAGO BOARD OF TRADE',
        report_date: '2024-02-06',
        cftc_market_code: 'CBT',
        cftc_commodity_code: '001',
        open_interest_all: 419546,
        noncommercial_long_all: 121345,
        total_reportable_long_all: 387444,
        change_nonreportable_short_all: -964,
        pct_oi_noncommercial_short_all: 38,
        traders_total_all: 360,
        conc_gross_4_long_all: 13.1,
        contract_units: '(CONTRACTS OF 5,000 BUSHELS)',
      },
    );
  });

  test('loads FRED DGS10 into macro/fed-h15-series with --map, --set and --null "."', async () => {
    const run = await tmd([
      'import',
      'macro/fed-h15-series',
      FRED_DGS10,
      '--map',
      'value=DGS10',
      ...fredSet(
        'DGS10',
        'RIFLGFCY10_N.B',
        'Market yield on U.S. Treasury securities at 10-year constant maturity',
      ),
      '--null',
      '.',
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.json.fields, {
      series_id: 'set "DGS10"',
      h15_series: 'set "RIFLGFCY10_N.B"',
      title: 'set "Market yield on U.S. Treasury securities at 10-year constant maturity"',
      date: 'column "DATE"',
      value: 'column "DGS10"',
    });
    assert.equal(run.json.rows, 15395);
    const res = await read(
      '/api/v1/data/rates/fed-h15-series?series_id=DGS10&from=2020-12-31&to=2021-01-04&sort=asc&fields=date,value',
    );
    assert.deepEqual(res.json.data, [
      { date: '2020-12-31', value: 0.93 },
      { date: '2021-01-01', value: null },
      { date: '2021-01-04', value: 0.93 },
    ]);
  });

  test('--merge adds a series and keeps the ones imported before; --replace makes the file the whole dataset', async () => {
    const dgs2 = await tmd([
      'import',
      'macro/fed-h15-series',
      FRED_DGS2,
      '--map',
      'value=DGS2',
      ...fredSet(
        'DGS2',
        'RIFLGFCY02_N.B',
        'Market yield on U.S. Treasury securities at 2-year constant maturity',
      ),
      '--null',
      '.',
      '--merge',
    ]);
    assert.equal(dgs2.code, 0, dgs2.stderr);
    assert.equal(dgs2.json.kept_rows, 15395, 'the DGS10 rows stay');
    assert.equal(dgs2.json.total_rows, 15395 + 11635);
    const both = await read(
      '/api/v1/data/macro/fed-h15-series?series_id=DGS2,DGS10&from=2020-12-31&to=2020-12-31&fields=series_id,value&sort=asc',
    );
    assert.deepEqual(both.json.data, [
      { series_id: 'DGS10', value: 0.93 },
      { series_id: 'DGS2', value: 0.13 },
    ]);
    const replaced = await tmd([
      'import',
      'macro/fed-h15-series',
      FRED_DGS2,
      '--map',
      'value=DGS2',
      ...fredSet(
        'DGS2',
        'RIFLGFCY02_N.B',
        'Market yield on U.S. Treasury securities at 2-year constant maturity',
      ),
      '--null',
      '.',
      '--replace',
    ]);
    assert.equal(replaced.json.total_rows, 11635, 'with --replace the file is the whole dataset');
    const only = await read('/api/v1/data/macro/fed-h15-series?series_id=DGS10&limit=1');
    assert.deepEqual(only.json.data, []);
  });

  test('by default an import adds rows by entity and time: a daily file appends, corrections replace, the run is recorded', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tmd-daily-'));
    try {
      const day = (rows: [string, string, number][]) =>
        `series_id,h15_series,title,date,value\n${rows.map(([id, date, v]) => `${id},X,${id} title,${date},${v}`).join('\n')}\n`;
      const first = join(dir, 'day1.csv');
      writeFileSync(
        first,
        day([
          ['DAILY1', '2026-01-05', 1.5],
          ['DAILY2', '2026-01-05', 2.5],
        ]),
      );
      const one = await tmd(['import', 'macro/fed-h15-series', first, '--replace']);
      assert.equal(one.code, 0, one.stderr);
      assert.equal(one.json.total_rows, 2);
      // The next day's file: one new day per series, and a correction of DAILY1's first day.
      const second = join(dir, 'day2.csv');
      writeFileSync(
        second,
        day([
          ['DAILY1', '2026-01-05', 1.75],
          ['DAILY1', '2026-01-06', 1.6],
          ['DAILY2', '2026-01-06', 2.6],
        ]),
      );
      const two = await tmd(['import', 'macro/fed-h15-series', second]);
      assert.equal(two.code, 0, two.stderr);
      assert.deepEqual(
        [two.json.mode, two.json.imported_rows, two.json.replaced_rows, two.json.total_rows],
        ['upsert', 2, 1, 4],
      );
      // The same file again changes nothing.
      const again = await tmd(['import', 'macro/fed-h15-series', second]);
      assert.deepEqual(
        [again.json.imported_rows, again.json.replaced_rows, again.json.total_rows],
        [0, 0, 4],
      );
      const res = await read(
        '/api/v1/data/macro/fed-h15-series?series_id=DAILY1,DAILY2&sort=asc&fields=series_id,date,value',
      );
      assert.deepEqual(res.json.data, [
        { series_id: 'DAILY1', date: '2026-01-05', value: 1.75 },
        { series_id: 'DAILY2', date: '2026-01-05', value: 2.5 },
        { series_id: 'DAILY1', date: '2026-01-06', value: 1.6 },
        { series_id: 'DAILY2', date: '2026-01-06', value: 2.6 },
      ]);
      const [run] = await server.deps.store.listImportRuns({ dataset: 'macro/fed-h15-series' }, 1);
      assert.equal(run?.id, again.json.import_id);
      assert.deepEqual([run?.fileName, run?.importer, run?.sha256.length], ['day2.csv', 'csv', 64]);
      const both = await tmd(['import', 'macro/fed-h15-series', second, '--merge', '--replace']);
      assert.equal(both.code, 2);
      assert.match(both.stderr, /--merge and --replace do not go together/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an invalid file is refused with each problem naming its line, and nothing is loaded', async () => {
    const before = await server.deps.store.datasetSource('cot/legacy-futures');
    const run = await tmd(['import', 'cot/legacy-futures', CFTC, '--map', CFTC_MAP]);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    const lines = run.stderr.split('\n');
    assert.equal(
      lines[0],
      'tmd: 280 invalid value(s) in the file; nothing was imported (the first 20 are listed).',
    );
    assert.equal(
      lines[1],
      '  line 26: column "Change in Open Interest (All)" -> change_open_interest_all (integer): "." is not an integer',
    );
    assert.deepEqual(await server.deps.store.datasetSource('cot/legacy-futures'), before);
  });

  test('files that do not fit the dataset are refused before any row is read, with what to do', async () => {
    const noEntity = await tmd([
      'import',
      'macro/fed-h15-series',
      FRED_DGS10,
      '--map',
      'value=DGS10',
      '--null',
      '.',
    ]);
    assert.equal(noEntity.code, 1);
    assert.equal(
      noEntity.stderr,
      [
        'tmd: The file does not fit macro/fed-h15-series.',
        '  field "series_id" (an entity field) has no column: map one with --map series_id=<column> or give a constant with --set series_id=<value>',
        '  field "h15_series" (an entity field) has no column: map one with --map h15_series=<column> or give a constant with --set h15_series=<value>',
        '  field "title" (an entity field) has no column: map one with --map title=<column> or give a constant with --set title=<value>',
        '',
      ].join('\n'),
    );
    const badMap = await tmd([
      'import',
      'macro/fed-h15-series',
      FRED_DGS10,
      '--map',
      'value=DGS11',
      '--map',
      'yield=DGS10',
    ]);
    assert.equal(badMap.code, 1);
    assert.match(badMap.stderr, /--map yield=…: macro\/fed-h15-series has no field "yield"/);
    assert.match(badMap.stderr, /--map value=DGS11: the file has no column "DGS11" \(columns: DATE, DGS10\)/);
    const unknown = await tmd(['import', 'macro/fed-h15', FRED_DGS10]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^tmd: dataset_not_found: No dataset "macro\/fed-h15"/);
    const usage = await tmd(['import', 'macro/fed-h15-series', `${REAL}/openflights-airports.dat`]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /cannot tell the format of .*openflights-airports\.dat from its extension/);
  });

  test('NDJSON and JSON: types are checked per line or record', async () => {
    const ndjson = join(server.dir, 'h15.ndjson');
    writeFileSync(
      ndjson,
      [
        '{"series_id":"DFF","h15_series":"RIFSPFF_N.B","title":"Federal funds effective rate","date":"2024-05-01","value":5.33}',
        '',
        '{"series_id":"DFF","h15_series":"RIFSPFF_N.B","title":"Federal funds effective rate","date":"2024-05-02","value":"5.33"}',
        '{"series_id":"DFF","h15_series":"RIFSPFF_N.B","title":"Federal funds effective rate","date":"2024-02-30","value":true}',
      ].join('\n'),
    );
    const bad = await tmd(['import', 'macro/fed-h15-series', ndjson, '--dry-run']);
    assert.equal(bad.code, 1);
    assert.equal(
      bad.stderr,
      [
        'tmd: 2 invalid value(s) in the file; nothing was imported.',
        '  line 4: column "date" -> date (date): "2024-02-30" is not a date (YYYY-MM-DD)',
        '  line 4: column "value" -> value (number): true is not a number',
        '',
      ].join('\n'),
    );
    const json = join(server.dir, 'h15.json');
    writeFileSync(
      json,
      JSON.stringify({
        data: [
          {
            series_id: 'DFF',
            h15_series: 'RIFSPFF_N.B',
            title: 'Federal funds effective rate',
            date: '2024-05-01',
            value: 5.33,
          },
        ],
      }),
    );
    const dry = await tmd(['import', 'macro/fed-h15-series', json, '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.json.rows, 1);
    assert.equal(dry.json.loaded, false);
  });
});

describe('tmd import: what a file may not hold', () => {
  const event = (datetime: string, title = 'FOMC') =>
    `{"event_id":"e1","datetime":"${datetime}","event_type":"${title}","agency":"Fed","importance":"high","is_fomc_meeting":true,"is_minutes_release":false}`;

  test('date-times that do not exist, or have a fraction of a second, are refused: nothing is loaded', async () => {
    const file = join(server.dir, 'events.ndjson');
    writeFileSync(
      file,
      [event('2024-02-30T10:00:00Z'), event('2024-01-01T24:00:00Z'), event('2024-01-01T10:00:00.500Z')].join(
        '\n',
      ),
    );
    const bad = await tmd(['import', 'calendar/fed-events', file]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /line 1: .*"2024-02-30T10:00:00Z" is not a date-time/);
    assert.match(bad.stderr, /line 2: .*"2024-01-01T24:00:00Z" is not a date-time/);
    assert.match(bad.stderr, /line 3: .*has a fraction of a second/);
    writeFileSync(file, event('2024-01-01T12:00:00+02:00'));
    const good = await tmd(['import', 'calendar/fed-events', file, '--dry-run']);
    assert.equal(good.code, 0, good.stderr);
  });

  test('a control character in a cell is refused with its line (PostgreSQL text cannot hold NUL)', async () => {
    const file = join(server.dir, 'nul.ndjson');
    writeFileSync(file, event('2024-01-01T10:00:00Z', 'FO\\u0000MC'));
    const bad = await tmd(['import', 'calendar/fed-events', file, '--dry-run']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /line 1: column "event_type" .*holds a control character/);
  });

  test('a lone surrogate in a JSON cell is refused with its line (PostgreSQL could not read it back)', async () => {
    const file = join(server.dir, 'surrogate.ndjson');
    writeFileSync(file, event('2024-01-01T10:00:00Z', 'FO\\ud800MC'));
    const bad = await tmd(['import', 'calendar/fed-events', file, '--dry-run']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /line 1: column "event_type" .*not valid Unicode \(a lone surrogate\)/);
    writeFileSync(file, event('2024-01-01T10:00:00Z', 'FO\\ud83d\\ude00MC'));
    const pair = await tmd(['import', 'calendar/fed-events', file, '--dry-run']);
    assert.equal(pair.code, 0, `a surrogate pair is one character: ${pair.stderr}`);
  });

  test('bytes that are not UTF-8 refuse the file instead of turning into U+FFFD', async () => {
    const file = join(server.dir, 'latin1.csv');
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from('series_id,h15_series,title,date,value\nX1,H1,Z'),
        Buffer.from([0xfc]),
        Buffer.from('rich yield,2024-01-02,4.0\n'),
      ]),
    );
    const bad = await tmd(['import', 'macro/fed-h15-series', file, '--dry-run']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /is not UTF-8 text; convert it first/);
  });

  test('a JSON file that starts with a byte-order mark is read like any other', async () => {
    const file = join(server.dir, 'bom.json');
    writeFileSync(file, `\uFEFF[${event('2024-01-01T10:00:00Z')}]`);
    const dry = await tmd(['import', 'calendar/fed-events', file, '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.json.rows, 1);
  });

  test('a path that cannot be read is a one-line message, never a stack trace', async () => {
    const dir = await tmd(['import', 'calendar/fed-events', server.dir, '--format', 'ndjson']);
    assert.equal(dir.code, 1);
    assert.match(dir.stderr, /^tmd: EISDIR/);
    assert.doesNotMatch(dir.stderr, /\n\s+at /);
  });

  test('two --merge imports at once both land: neither series is lost or cut short', async () => {
    const series = (id: string, days: number) =>
      Array.from({ length: days }, (_, i) => ({
        series_id: id,
        h15_series: `H15_${id}`,
        title: id,
        date: new Date(Date.UTC(2024, 0, 1 + i)).toISOString().slice(0, 10),
        value: i,
      }));
    const operator = new Operator(server.deps);
    await operator.importRows('macro/fed-h15-series', series('BASE', 300), { mode: 'replace' });
    await Promise.all([
      operator.importRows('macro/fed-h15-series', series('ONE', 1500), { merge: true }),
      operator.importRows('macro/fed-h15-series', series('TWO', 1500), { merge: true }),
    ]);
    const rows = (
      await server.deps.store.queryRows({
        dataset: 'macro/fed-h15-series',
        filters: {},
        descending: false,
        limit: 10_000,
      })
    ).rows;
    const counts: Record<string, number> = {};
    for (const row of rows) {
      const id = (JSON.parse(row.json) as { series_id: string }).series_id;
      counts[id] = (counts[id] ?? 0) + 1;
    }
    assert.deepEqual(counts, { BASE: 300, ONE: 1500, TWO: 1500 });
  });

  test('tmd key create --expires-at takes only an ISO time with its zone, as the admin API does', async () => {
    for (const given of ['2027-01-01T00:00:00', '12/31/2027', '2027-02-30T00:00:00Z']) {
      const res = await tmd(['key', 'create', 'acc_nobody', '--expires-at', given]);
      assert.equal(res.code, 2, `${given}: ${res.stderr}`);
      assert.match(res.stderr, /--expires-at must be an ISO 8601 time with Z or an offset/);
    }
  });
  test('tmd key create --name and tmd credit --memo follow the API: no control characters, a name of 1 to 100', async () => {
    const created = await tmd(['account', 'create', `cli-labels-${Date.now()}@example.com`]);
    assert.equal(created.code, 0, created.stderr);
    const id = JSON.parse(created.stdout).id as string;
    for (const name of ['', 'a\tb', 'x'.repeat(101)]) {
      const res = await tmd(['key', 'create', id, '--name', name]);
      assert.equal(res.code, 2, `--name ${JSON.stringify(name)}: ${res.stderr}`);
      assert.match(res.stderr, /--name/);
    }
    const memo = await tmd([
      'credit',
      id,
      '5',
      '--idempotency-key',
      'cli-memo',
      '--memo',
      'line1\nline2\u0007',
    ]);
    assert.equal(memo.code, 2, memo.stderr);
    assert.match(memo.stderr, /--memo: must not contain control characters/);
    const shown = await tmd(['account', 'show', id]);
    assert.equal(shown.json.wallet.balance, '0', 'nothing was credited');
    assert.deepEqual(shown.json.keys, [], 'no key was made');
  });
});

describe('tmd operator commands', () => {
  test('account, package, credit, key and caps: the same results as the admin API', async () => {
    const created = await tmd(
      ['account', 'create', 'cli-made@example.com', '--password-stdin'],
      'a long passphrase\n',
    );
    assert.equal(created.code, 0, created.stderr);
    const id = created.json.id as string;
    assert.equal(created.json.wallet.balance, '0');

    const assigned = await tmd(['package', 'assign', 'cli-made@example.com', 'partner']);
    assert.equal(assigned.code, 0, assigned.stderr);
    assert.equal(assigned.json.account.package, 'partner');
    assert.equal(assigned.json.monthly_credit.amount, '500000');
    assert.equal(assigned.json.monthly_credit.idempotency_key, 'monthly-credit:partner:2026-11');

    const credit = ['credit', id, '12.5', '--idempotency-key', 'cli-topup-1', '--memo', 'goodwill'];
    const first = await tmd(credit);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(
      { ...first.json, entry: { ...first.json.entry, id: undefined, created_at: undefined } },
      {
        entry: {
          id: undefined,
          kind: 'topup',
          amount: '12.5',
          balance_after: '500012.5',
          created_at: undefined,
          idempotency_key: 'cli-topup-1',
          memo: 'operator topup (cli): goodwill',
          request_id: null,
        },
        balance: '500012.5',
        replayed: false,
      },
    );
    const again = await tmd(credit);
    assert.equal(again.json.replayed, true);
    assert.equal(again.json.entry.id, first.json.entry.id);
    const noKey = await tmd(['credit', id, '5']);
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /^tmd: --idempotency-key is required/);

    const key = await tmd(['key', 'create', id, '--name', 'warehouse']);
    assert.equal(key.code, 0, key.stderr);
    assert.match(key.json.key, /^tmd_live_/);
    const caps = await tmd(['key', 'caps', key.json.id, '--daily', '100', '--monthly', '2000']);
    assert.deepEqual(caps.json.spending_caps, { daily: '100', monthly: '2000' });
    const cleared = await tmd(['key', 'caps', key.json.id, '--daily', 'none']);
    assert.deepEqual(cleared.json.spending_caps, { daily: null, monthly: '2000' });

    const login = await server.request('POST', '/api/v1/auth/login', {
      headers: { 'x-forwarded-for': freshIp() },
      body: { email: 'cli-made@example.com', password: 'a long passphrase' },
    });
    assert.equal(login.status, 200, 'the password read from stdin logs in');
    const me = await server.request('GET', '/api/v1/me', { headers: bearer(key.json.key) });
    assert.equal(me.json.wallet.balance, '500012.5');

    const shown = await tmd(['account', 'show', id]);
    assert.equal(shown.json.keys[0].name, 'warehouse');
  });

  test('early-bird set refuses an account made after the cohort cutoff (exit 1, nothing changed)', async () => {
    const created = await tmd(['account', 'create', 'late-cli@example.com']);
    const run = await tmd(['early-bird', 'set', created.json.id]);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^tmd: conflict: early_bird is for accounts created before the cohort cutoff 2026-01-01T00:00:00Z/,
    );
    assert.equal((await tmd(['account', 'show', created.json.id])).json.plan, 'standard');
  });

  test('monthly-credit is idempotent: a second run credits nothing', async () => {
    await tmd(['account', 'create', 'monthly-cli@example.com']);
    await tmd(['package', 'clear', 'monthly-cli@example.com']);
    const first = await tmd(['monthly-credit']);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(
      first.json.credited,
      [],
      'assignment already credited every packaged account this month',
    );
    await server.deps.store.updateAccount(
      (await tmd(['account', 'show', 'monthly-cli@example.com'])).json.id,
      {
        packageId: 'starter',
      },
    );
    const second = await tmd(['monthly-credit']);
    assert.equal(second.json.credited.length, 1);
    assert.equal(second.json.credited[0].tokens, '25000');
    const third = await tmd(['monthly-credit']);
    assert.deepEqual(third.json.credited, []);
  });

  test('bin/tmd.ts runs as a program: JSON on stdout, exit 0; a usage error exits 2', async () => {
    const run = promisify(execFile);
    const env = { ...process.env, ...cliEnv() };
    const ok = await run(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', 'bin/tmd.ts', 'monthly-credit'],
      { env },
    );
    assert.equal(JSON.parse(ok.stdout).month.length, 7);
    await assert.rejects(
      run(process.execPath, ['--disable-warning=ExperimentalWarning', 'bin/tmd.ts', 'frobnicate'], { env }),
      (error: { code: number; stderr: string }) =>
        error.code === 2 && error.stderr.startsWith('tmd: unknown command: frobnicate'),
    );
  });
});
