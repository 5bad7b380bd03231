/**
 * The USGS earthquakes collector against its recorded answer (the past-week summary feed generated
 * 2020-07-08T20:36:48Z, its first 25 events), replayed locally: rows checked by hand against the file,
 * a second run that changes nothing, and which feed (or the FDSN event service) a gap since the last
 * answer is asked of.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RunContext } from '../src/catalog/sources/source.ts';
import { usgs } from '../src/catalog/sources/usgs.ts';
import { collectorServer, type Replay, recorded, rowsOf, startReplay } from './helpers/replay.ts';
import { walletAccount } from './helpers/server.ts';

let replay: Replay;
before(async () => {
  replay = await startReplay((url) =>
    url.pathname === '/earthquakes/feed/v1.0/summary/all_week.geojson'
      ? [
          200,
          recorded('usgs/earthquake_feed_v1.0_summary_all_week.geojson_first25.json'),
          { 'content-type': 'application/geo+json' },
        ]
      : null,
  );
});
after(() => replay.close());

test('USGS: each event a row by its id, times to the second; the same feed again changes nothing', async () => {
  const server = await collectorServer('2020-07-08T20:40:00Z', {
    usgs: { enabled: false, base_url: replay.base, per_second: 10, options: {} },
  });
  try {
    const { key } = await walletAccount(server, 1000);
    replay.seen.length = 0;
    // Six days and more: the past week's feed covers them.
    const run = await server.deps.collections.run('usgs', { since: '2020-07-02' });
    assert.deepEqual([run.outcome, run.rowsNew, run.rowsChanged, run.error], ['ok', 25, 0, null]);
    assert.deepEqual(
      replay.seen.map((s) => s.path),
      ['/earthquakes/feed/v1.0/summary/all_week.geojson'],
    );
    const [falklands, japan] = await rowsOf(server, key, 'geospatial/usgs-earthquakes', 'network=us');
    assert.deepEqual(japan, {
      network: 'us',
      event_type: 'earthquake',
      time: '2020-07-08T17:50:51Z',
      event_id: 'us7000ak9g',
      updated: '2020-07-08T19:46:54Z',
      magnitude: 4.4,
      mag_type: 'mb',
      place: '55 km ENE of Namie, Japan',
      latitude: 37.717,
      longitude: 141.5508,
      depth_km: 35,
      status: 'reviewed',
      significance: 298,
      tsunami: false,
      felt: null,
      alert: null,
      url: 'https://earthquake.usgs.gov/earthquakes/eventpage/us7000ak9g',
    });
    // Newest first: the Falkland Islands event came later that afternoon.
    assert.deepEqual(
      [falklands?.event_id, falklands?.time, falklands?.magnitude, falklands?.place],
      ['us7000ak9w', '2020-07-08T18:08:19Z', 4.6, 'Falkland Islands region'],
    );
    const [explosion] = await rowsOf(server, key, 'geospatial/usgs-earthquakes', 'event_type=explosion');
    assert.deepEqual(
      [explosion?.event_id, explosion?.depth_km, explosion?.mag_type, explosion?.magnitude],
      ['uw61656411', -1.34, 'ml', 1.09],
    );
    assert.deepEqual(JSON.parse((await server.deps.datasets.collectorState('usgs'))?.cursor ?? '{}'), {
      through: '2020-07-08T20:36:48Z',
    });

    const again = await server.deps.collections.run('usgs', { since: '2020-07-02' });
    assert.deepEqual([again.outcome, again.rowsNew, again.rowsChanged], ['ok', 0, 0]);
  } finally {
    await server.close();
  }
});

test('USGS: the smallest feed that covers the gap since the last answer, else the FDSN event service', async () => {
  const now = Date.parse('2020-07-08T20:40:00Z');
  const asked = async (cursor: RunContext['cursor'], options: Record<string, unknown> = {}) => {
    const urls: string[] = [];
    const http = {
      postJson: async () => {
        throw new Error('USGS is asked with GET');
      },
      get: async (url: string) => {
        urls.push(url);
        throw new Error('not recorded');
      },
    };
    const run = usgs.run({
      http,
      baseUrl: 'https://earthquake.usgs.gov',
      cursor,
      now,
      today: '2020-07-08',
      since: null,
      backfill: false,
      credentials: {},
      options,
    });
    await assert.rejects(run[Symbol.asyncIterator]().next(), /not recorded/);
    return urls[0];
  };
  const feed = 'https://earthquake.usgs.gov/earthquakes/feed/v1.0/summary/';
  assert.equal(await asked({ through: '2020-07-08T20:30:00Z' }), `${feed}all_hour.geojson`);
  assert.equal(await asked({ through: '2020-07-08T03:00:00Z' }), `${feed}all_day.geojson`);
  assert.equal(await asked({ through: '2020-07-03T00:00:00Z' }), `${feed}all_week.geojson`);
  assert.equal(await asked({}), `${feed}all_month.geojson`, 'a first run: the past 30 days');
  assert.equal(
    await asked({ through: '2020-07-08T20:30:00Z' }, { magnitude: '2.5' }),
    `${feed}2.5_hour.geojson`,
  );
  assert.equal(
    await asked({ through: '2020-05-01T00:00:00Z' }, { magnitude: '4.5' }),
    'https://earthquake.usgs.gov/fdsnws/event/1/query?format=geojson&starttime=2020-05-01T00:00:00.000Z&endtime=2020-07-08T20:40:00.000Z&orderby=time-asc&minmagnitude=4.5&limit=20000&offset=1',
  );
});
