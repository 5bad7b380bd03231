/**
 * collections.ts: one run of a source stores its chunks, keeps its cursor, and records its outcome; a
 * source that fails PAUSE_AFTER times in a row is paused for PAUSE_MS. The source's answers are a fake
 * client's, so what each run stored is known exactly.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { SourceResponse } from '../../src/catalog/sources/source.ts';
import { Collections, type CollectorHttp, PAUSE_AFTER, PAUSE_MS } from '../../src/domain/collections.ts';
import type { CollectionRun } from '../../src/store/port.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const SOFR = 'macro/nyfed-sofr-series';

/** What the fake NY Fed answers: each rate a SOFR of `percentRate` on its date; `down` fails every request. */
const answers = { rates: [] as { effectiveDate: string; percentRate: number }[], down: false };
const seen: string[] = [];

function fakeHttp(): CollectorHttp {
  let requests = 0;
  return {
    get requests() {
      return requests;
    },
    bytes: 0,
    notModified: 0,
    async get(url: string): Promise<SourceResponse> {
      requests++;
      seen.push(url);
      if (answers.down) throw new Error('markets.newyorkfed.org answered 503');
      const refRates = answers.rates.map((r) => ({ ...r, type: 'SOFR' }));
      return { status: 200, url, etag: null, lastModified: null, body: JSON.stringify({ refRates }) };
    },
    postJson: async () => assert.fail('not used'),
  };
}

describe('collections', () => {
  let server: TestServer;
  let collections: Collections;
  const finished: CollectionRun[] = [];
  before(async () => {
    server = await startServer();
    collections = new Collections({
      datasets: server.deps.datasets,
      catalog: server.deps.catalog,
      config: { user_agent: null, sources: { nyfed: { enabled: true, options: { rates: ['sofr'] } } } },
      http: fakeHttp,
      credentials: {},
      now: server.clock.now,
      onRun: (run) => finished.push(run),
    });
  });
  after(() => server.close());
  beforeEach(() => {
    answers.rates = [
      { effectiveDate: '2026-11-19', percentRate: 4.31 },
      { effectiveDate: '2026-11-20', percentRate: 4.32 },
    ];
    answers.down = false;
    seen.length = 0;
  });

  test('a first run stores the records as new rows and the newest date as its cursor', async () => {
    const run = await collections.run('nyfed');
    assert.deepEqual(
      [run.source, run.outcome, run.datasets, run.rowsNew, run.rowsChanged, run.rowsRejected, run.requests],
      ['nyfed', 'ok', [SOFR], 2, 0, 0, 1],
    );
    assert.equal(run.error, null);
    assert.deepEqual(seen, [
      'https://markets.newyorkfed.org/api/rates/secured/sofr/search.json?startDate=2026-10-22&endDate=2026-11-21',
    ]);
    const state = await server.deps.datasets.collectorState('nyfed');
    assert.deepEqual(JSON.parse(state?.cursor ?? '{}'), { sofr: '2026-11-20' });
    assert.deepEqual(
      [state?.failures, state?.lastSuccessAt, state?.pausedUntil],
      [0, server.clock.now(), null],
    );
    assert.deepEqual(finished.at(-1), run);
  });

  test('the next run asks again from before its cursor and counts a revised rate as changed', async () => {
    answers.rates = [{ effectiveDate: '2026-11-20', percentRate: 4.33 }];
    const run = await collections.run('nyfed');
    assert.deepEqual([run.outcome, run.rowsNew, run.rowsChanged], ['ok', 0, 1]);
    assert.match(seen[0] ?? '', /startDate=2026-11-15&/);
  });

  test('a run that fails is recorded failed; PAUSE_AFTER failures in a row pause the source', async () => {
    answers.down = true;
    let run: CollectionRun | null = null;
    for (let i = 0; i < PAUSE_AFTER; i++) run = await collections.run('nyfed');
    assert.deepEqual(
      [run?.outcome, run?.error, run?.rowsNew],
      ['failed', 'markets.newyorkfed.org answered 503', 0],
    );
    const state = await server.deps.datasets.collectorState('nyfed');
    assert.deepEqual([state?.failures, state?.pausedUntil], [PAUSE_AFTER, server.clock.now() + PAUSE_MS]);
    // A paused source is skipped by its schedule; a run now (`tmd collect`) runs, and a success unpauses it.
    assert.equal(await collections.runScheduled('nyfed', 1), null);
    answers.down = false;
    const now = await collections.run('nyfed');
    assert.equal(now.outcome, 'ok');
    const resumed = await server.deps.datasets.collectorState('nyfed');
    assert.deepEqual([resumed?.failures, resumed?.pausedUntil], [0, null]);
  });

  test('an SEC source without a User-Agent fails before any request, saying what to set', async () => {
    const sec = new Collections({
      datasets: server.deps.datasets,
      catalog: server.deps.catalog,
      config: { user_agent: null, sources: {} },
      http: fakeHttp,
      credentials: {},
      now: server.clock.now,
    });
    const run = await sec.run('sec-current');
    assert.equal(run.outcome, 'failed');
    assert.match(run.error ?? '', /^SEC EDGAR asks every client to name itself/);
    assert.equal(run.requests, 0);
  });

  test('an unknown source is 404 not_found, naming the sources there are', async () => {
    await assert.rejects(collections.run('nope'), (error: { code: string; message: string }) => {
      assert.equal(error.code, 'not_found');
      assert.match(error.message, /^No source "nope"\. Sources: .*nyfed/);
      return true;
    });
  });
});
