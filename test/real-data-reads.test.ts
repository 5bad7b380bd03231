/**
 * Imported data as readers see it: meta.source and meta.as_of on REST and MCP reads (which burn as
 * before), the catalog's data status, and the system/* datasets made from the service's own records.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { rpc, toolCall } from './helpers/mcp.ts';
import { realDataDir } from './helpers/real-data.ts';
import { bearer, startServer, type TestServer, walletAccount } from './helpers/server.ts';

const REAL = realDataDir();

describe('reads of imported data', () => {
  let server: TestServer;
  let runId: number;
  let sha256: string;
  before(async () => {
    server = await startServer();
    const summary = await server.deps.imports.importFile({
      bytes: readFileSync(`${REAL}fred-DGS10.csv`),
      fileName: 'fred-DGS10.csv',
    });
    runId = summary.run?.id as number;
    sha256 = summary.sha256;
  });
  after(async () => {
    await server.close();
  });

  const source = () => ({
    kind: 'import',
    imports: [
      {
        id: runId,
        format: 'fred-series',
        publisher:
          'Board of Governors of the Federal Reserve System, H.15, via FRED (Federal Reserve Bank of St. Louis)',
        file: 'fred-DGS10.csv',
        sha256,
        imported_at: '2026-11-21T15:00:00.000Z',
        licence: 'Public domain (H.15 data of the Federal Reserve Board)',
        attribution:
          'Source: Board of Governors of the Federal Reserve System (US), retrieved from FRED, Federal Reserve Bank of St. Louis',
      },
    ],
  });

  test('REST and MCP reads carry the import and the newest observation, and burn as before', async () => {
    const reader = await walletAccount(server, 100);
    const rest = await server.request('GET', '/api/v1/data/rates/fed-h15-series?series_id=DGS10&limit=2', {
      headers: bearer(reader.key),
    });
    assert.equal(rest.status, 200, rest.text);
    assert.deepEqual(
      rest.json.data.map((r: { date: string; value: number | null }) => [r.date, r.value]),
      [
        ['2021-01-04', 0.93],
        ['2021-01-01', null],
      ],
    );
    assert.equal(rest.json.meta.sample, false);
    assert.equal(rest.json.meta.notice, undefined);
    assert.deepEqual(rest.json.meta.source, source());
    assert.equal(rest.json.meta.as_of, '2021-01-04');
    const burned = rest.headers.get('x-request-tokens');
    assert.ok(Number(burned) > 0, 'a read of imported rows burns');

    const mcp = await rpc(
      server,
      bearer(reader.key),
      toolCall('read_dataset', {
        dataset: 'rates/fed-h15-series',
        filters: { series_id: ['DGS10'] },
        limit: 2,
      }),
    );
    assert.equal(mcp.status, 200, mcp.text);
    assert.equal(mcp.json.result.isError, undefined, mcp.text);
    assert.deepEqual(mcp.json.result.structuredContent.meta.source, source());
    assert.equal(mcp.json.result.structuredContent.meta.as_of, '2021-01-04');
    assert.equal(mcp.headers.get('x-request-tokens'), burned, 'the same burn through either face');
    const usage = await server.deps.store.listUsage({ accountId: reader.account.id }, null, 10);
    assert.deepEqual(
      usage.map((u) => [u.dataset, u.channel, u.outcome]),
      [
        ['rates/fed-h15-series', 'mcp', 'charged'],
        ['rates/fed-h15-series', 'rest', 'charged'],
      ],
    );
  });

  test('a sample dataset says so, with no imports', async () => {
    const reader = await walletAccount(server, 100);
    const res = await server.request('GET', '/api/v1/data/rates/treasury-yield-series?limit=1', {
      headers: bearer(reader.key),
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.meta.sample, true);
    assert.deepEqual(res.json.meta.source, { kind: 'sample', imports: [] });
  });

  test('the catalog shows what a dataset holds: imported rows, their span, the last import', async () => {
    const res = await server.request('GET', '/api/v1/catalog/macro/fed-h15-series');
    assert.equal(res.status, 200, res.text);
    const { last_import: last, loaded_at: loadedAt, ...status } = res.json.data_status;
    assert.deepEqual(status, { source: 'import', rows: 15395, first: '1962-01-02', last: '2021-01-04' });
    assert.match(loadedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // Imported rows keep their publisher's name as the source line.
    assert.equal(
      res.json.source,
      'Board of Governors of the Federal Reserve System, H.15 release (via FRED, Federal Reserve Bank of St. Louis)',
    );
    assert.deepEqual(
      [last.id, last.file, last.rows_read, last.rows_inserted, last.rows_replaced, last.rows_rejected],
      [runId, 'fred-DGS10.csv', 15395, 15395, 0, 0],
    );
    const sample = await server.request('GET', '/api/v1/catalog/stocks/prices');
    assert.equal(sample.json.data_status.source, 'sample');
    assert.equal(sample.json.data_status.last_import, null);
  });

  test('before any read, a sample dataset shows its coverage, units and a source line that says sample', async () => {
    const res = await server.request('GET', '/api/v1/catalog/stocks/prices');
    assert.equal(res.status, 200, res.text);
    assert.equal(
      res.json.source,
      'Sample data generated by the service (not from NYSE / Nasdaq consolidated tape (CTA/UTP SIPs))',
    );
    const { loaded_at: loadedAt, ...status } = res.json.data_status;
    // 34 symbols over the 44 trading days up to Friday 2026-11-20 (the clock stands on Saturday).
    assert.deepEqual(status, {
      source: 'sample',
      rows: 34 * 44,
      first: '2026-09-22',
      last: '2026-11-20',
      last_import: null,
    });
    assert.match(loadedAt, /^\d{4}-\d{2}-\d{2}T/);
    const units = Object.fromEntries(
      res.json.fields.map((f: { name: string; unit: string | null }) => [f.name, f.unit]),
    );
    assert.deepEqual([units.date, units.open, units.close, units.volume], [null, 'USD', 'USD', 'shares']);

    const listed = await server.request('GET', '/api/v1/catalog?domain=stocks');
    const prices = listed.json.data.find((d: { key: string }) => d.key === 'stocks/prices');
    assert.equal(prices.source, res.json.source);
    const imported = await server.request('GET', '/api/v1/catalog?domain=macro');
    const h15 = imported.json.data.find((d: { key: string }) => d.key === 'macro/fed-h15-series');
    assert.doesNotMatch(h15.source, /^Sample data/);

    const reader = await walletAccount(server, 100);
    const mcp = await rpc(
      server,
      bearer(reader.key),
      toolCall('describe_dataset', { dataset: 'stocks/prices' }),
    );
    assert.equal(mcp.status, 200, mcp.text);
    const summary: string = mcp.json.result.content[0].text;
    assert.match(summary, /Source: Sample data generated by the service \(not from NYSE/);
    assert.match(summary, /close \(number, USD\)/);
    assert.match(
      summary,
      /Data: 1496 generated sample rows, not real observations, 2026-09-22 to 2026-11-20; generated /,
    );
    assert.deepEqual(mcp.json.result.structuredContent.data_status.last, '2026-11-20');
    assert.deepEqual(await server.deps.store.listUsage({ accountId: reader.account.id }, null, 10), []);
  });

  test('the sample calendar shows no actual for events later than now', async () => {
    const reader = await walletAccount(server, 100);
    const res = await server.request(
      'GET',
      '/api/v1/data/calendar/bls-events?from=2026-11-21T15:00:01Z&limit=50&sort=asc',
      { headers: bearer(reader.key) },
    );
    assert.equal(res.status, 200, res.text);
    assert.ok(res.json.data.length > 0);
    assert.ok(res.json.data.every((e: { actual: unknown }) => e.actual === null));
  });

  test("system/api-usage is the caller's own usage, never another account's", async () => {
    const a = await walletAccount(server, 500);
    const b = await walletAccount(server, 500);
    for (const [who, path] of [
      [a, '/api/v1/data/rates/fed-h15-series?limit=1'],
      [a, '/api/v1/data/rates/fed-h15-series?limit=1'],
      [b, '/api/v1/data/stocks/prices?limit=1'],
    ] as const) {
      const res = await server.request('GET', path, { headers: bearer(who.key) });
      assert.equal(res.status, 200, res.text);
    }
    const ofA = await server.request('GET', '/api/v1/data/system/api-usage?limit=100', {
      headers: bearer(a.key),
    });
    assert.equal(ofA.status, 200, ofA.text);
    assert.deepEqual(ofA.json.data, [
      {
        hour: '2026-11-21T15:00:00Z',
        endpoint: 'rates/fed-h15-series',
        method: 'GET',
        requests: 2,
        errors_4xx: null,
        errors_5xx: null,
        tokens_burned: 2 * Number(ofA.json.data[0]?.tokens_burned / 2),
        p50_latency_ms: null,
        p95_latency_ms: null,
      },
    ]);
    assert.equal(ofA.json.meta.sample, false);
    assert.deepEqual(ofA.json.meta.source, { kind: 'records', imports: [] });
    assert.ok(Number(ofA.headers.get('x-request-tokens')) > 0, 'read through the same metered path');
    const ofB = await server.request('GET', '/api/v1/data/system/api-usage?limit=100', {
      headers: bearer(b.key),
    });
    assert.deepEqual(
      ofB.json.data.map((r: { endpoint: string; requests: number }) => [r.endpoint, r.requests]),
      [['stocks/prices', 1]],
    );
  });

  test('system/data-collection-log and sync-metadata show the import runs; the rest stay sample', async () => {
    const reader = await walletAccount(server, 500);
    const log = await server.request('GET', '/api/v1/data/system/data-collection-log?limit=10', {
      headers: bearer(reader.key),
    });
    assert.equal(log.status, 200, log.text);
    assert.equal(log.json.data.length, 1);
    const [run] = log.json.data;
    // The swap is timed by the store's clock, the run by the service's (a test clock here).
    assert.equal(typeof run.duration_ms, 'number');
    assert.match(
      run.message,
      new RegExp(
        `^fred-DGS10\\.csv into macro/fed-h15-series: 15395 new, 0 replaced, 0 rejected \\(sha256 ${sha256}\\); swapped in at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`,
      ),
    );
    assert.deepEqual(
      { ...run, message: '', duration_ms: 0 },
      {
        run_at: '2026-11-21T15:00:00Z',
        collector: 'fred-series',
        status: 'ok',
        rows_fetched: 15395,
        http_status: null,
        duration_ms: 0,
        message: '',
      },
    );
    const sync = await server.request('GET', '/api/v1/data/system/sync-metadata?limit=10', {
      headers: bearer(reader.key),
    });
    assert.deepEqual(sync.json.data, [
      {
        source_id: 'macro/fed-h15-series',
        synced_at: '2026-11-21T15:00:00Z',
        cursor: '2021-01-04',
        records_upserted: 15395,
        records_deleted: 0,
        lag_seconds: 0,
        state: 'idle',
      },
    ]);
    const backfill = await server.request('GET', '/api/v1/data/system/backfill-state?limit=10', {
      headers: bearer(reader.key),
    });
    assert.deepEqual(
      backfill.json.data.map((r: Record<string, unknown>) => [
        r.dataset_key,
        r.earliest_loaded,
        r.rows_loaded,
      ]),
      [['macro/fed-h15-series', '1962-01-02', 15395]],
    );
    const other = await server.request('GET', '/api/v1/data/system/sec-rss-feeds?limit=1', {
      headers: bearer(reader.key),
    });
    assert.equal(other.json.meta.sample, true);
  });
});
