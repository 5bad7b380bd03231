/**
 * The Eurostat collector against its recorded SDMX 2.1 answer (structure-specific data of NAMA_10_GDP,
 * Luxembourg's GDP at current prices, 2012–2015), replayed locally: rows checked by hand against the
 * file, a second run that changes nothing, and a later window that finds no results.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { collectorServer, type Replay, recorded, rowsOf, startReplay, USER_AGENT } from './helpers/replay.ts';
import { walletAccount } from './helpers/server.ts';

const SERIES = 'nama_10_gdp/A.CP_MEUR.B1GQ.LU';
let replay: Replay;

before(async () => {
  replay = await startReplay((url) => {
    if (url.pathname !== '/eurostat/api/dissemination/sdmx/2.1/data/nama_10_gdp/A.CP_MEUR.B1GQ.LU')
      return null;
    if (url.searchParams.get('format') !== 'SDMX_2.1_STRUCTURED') return [406, 'Not Acceptable'];
    // The recording runs to 2015: a later startPeriod has no results.
    if ((url.searchParams.get('startPeriod') ?? '') > '2015') return [404, 'No Results Found'];
    return [
      200,
      recorded('eurostat/sdmx21_data_NAMA_10_GDP_A.CP_MEUR.B1GQ.LU_structurespecific.xml'),
      { 'content-type': 'application/vnd.sdmx.structurespecificdata+xml;version=2.1' },
    ];
  });
});
after(() => replay.close());

const serve = (at: string) =>
  collectorServer(at, {
    eurostat: { enabled: false, base_url: replay.base, per_second: 10, options: { series: [SERIES] } },
  });

test('Eurostat: each year of a series as published, as its first day; again, nothing changes', async () => {
  const server = await serve('2022-11-11T13:00:00Z');
  try {
    const { key } = await walletAccount(server, 1000);
    replay.seen.length = 0;
    const run = await server.deps.collections.run('eurostat', { since: '2012-01-01' });
    assert.deepEqual([run.outcome, run.rowsNew, run.rowsChanged, run.error], ['ok', 4, 0, null]);
    assert.deepEqual(
      replay.seen.map((s) => [s.path, s.userAgent]),
      [
        [
          '/eurostat/api/dissemination/sdmx/2.1/data/nama_10_gdp/A.CP_MEUR.B1GQ.LU?format=SDMX_2.1_STRUCTURED&startPeriod=2012',
          USER_AGENT,
        ],
      ],
    );
    const rows = await rowsOf(server, key, 'economics/eurostat-series', 'limit=10&sort=asc');
    assert.deepEqual(rows[0], {
      series_key: 'nama_10_gdp/A.CP_MEUR.B1GQ.LU',
      dataset_code: 'nama_10_gdp',
      geo: 'LU',
      title: 'nama_10_gdp/A.CP_MEUR.B1GQ.LU',
      units: 'CP_MEUR',
      date: '2012-01-01',
      value: 46526.2,
      obs_flag: null,
    });
    assert.deepEqual(
      rows.map((r) => [r.date, r.value]),
      [
        ['2012-01-01', 46526.2],
        ['2013-01-01', 49094.5],
        ['2014-01-01', 51791.3],
        ['2015-01-01', 54142.3],
      ],
    );
    assert.deepEqual(JSON.parse((await server.deps.datasets.collectorState('eurostat'))?.cursor ?? '{}'), {
      [SERIES]: '2015-01-01',
    });

    // Again, from a year before the last stored one (Eurostat revises in place): nothing new or changed.
    replay.seen.length = 0;
    const again = await server.deps.collections.run('eurostat');
    assert.deepEqual([again.outcome, again.rowsNew, again.rowsChanged], ['ok', 0, 0]);
    assert.match(replay.seen[0]?.path ?? '', /&startPeriod=2014$/);

    // A window past the recording: Eurostat's "no results" is nothing new, not a failure.
    const later = await server.deps.collections.run('eurostat', { since: '2016-01-01' });
    assert.deepEqual([later.outcome, later.rowsNew, later.requests], ['ok', 0, 1]);
  } finally {
    await server.close();
  }
});

test('Eurostat: a key with an empty (every code) position is refused before any request', async () => {
  const server = await collectorServer('2022-11-11T13:00:00Z', {
    eurostat: { enabled: false, base_url: replay.base, options: { series: ['nama_10_gdp/A..B1GQ.LU'] } },
  });
  try {
    const run = await server.deps.collections.run('eurostat');
    assert.equal(run.outcome, 'failed');
    assert.match(run.error ?? '', /a code at every position/);
    assert.equal(run.requests, 0);
  } finally {
    await server.close();
  }
});
