/**
 * The system/* datasets made from the service's records are paged like stored rows: each row's id comes
 * from its natural key, so a next page follows the rows of the page before it even when the list is
 * made again, in another order, with rows added, for that next read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Row } from '../../src/catalog/types.ts';
import { DataImports } from '../../src/domain/imports.ts';
import { pageOfRecords, recordDatasets, recordRows } from '../../src/domain/system-datasets.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { account, caller, memoryStore, serviceCatalog, T0, usage as usageEvent } from './support.ts';

const usage = (endpoint: string, requests: number): Row => ({
  hour: '2026-11-21T15:00:00Z',
  endpoint,
  method: 'GET',
  requests,
});

test('a next page neither repeats nor skips rows when the list is made again in another order', () => {
  const first = [usage('a/one', 1), usage('b/two', 1), usage('c/three', 1), usage('d/four', 1)];
  const query = { dataset: 'system/api-usage', filters: {}, descending: false, limit: 2 };
  const page1 = pageOfRecords(first, 'hour', query);
  const last = page1.at(-1);
  assert.ok(last);
  // The next read makes the list again: another group first, counts changed, the order changed.
  const again = [usage('e/new', 1), ...first.map((r) => ({ ...r, requests: 2 })).reverse()];
  const page2 = pageOfRecords(again, 'hour', { ...query, limit: 10, after: { t: last.t, id: last.id } });
  const seen = [...page1, ...page2].map((r) => (JSON.parse(r.json) as Row).endpoint);
  assert.equal(new Set(seen).size, seen.length, `no row twice: ${seen.join(', ')}`);
  for (const endpoint of ['a/one', 'b/two', 'c/three', 'd/four'])
    assert.ok(seen.includes(endpoint), endpoint);
});

test("a row's id is the same whatever its figures and its place in the list", () => {
  const [one] = pageOfRecords([usage('a/one', 1), usage('b/two', 1)], 'hour', {
    dataset: 'system/api-usage',
    filters: { endpoint: ['a/one'] },
    descending: false,
    limit: 1,
  });
  const [same] = pageOfRecords([usage('z/other', 9), usage('a/one', 7)], 'hour', {
    dataset: 'system/api-usage',
    filters: { endpoint: ['a/one'] },
    descending: false,
    limit: 1,
  });
  assert.equal(one?.id, same?.id);
  assert.ok(Number.isSafeInteger(one?.id) && (one?.id ?? 0) > 0);
});

describe('rows made from the service records', () => {
  let store: SqliteStore;
  const stores = () => ({ ledger: store, datasets: store });
  const me = caller('live', { account: account({ id: 'acc_r', walletId: 'wal_r' }) });

  before(async () => {
    store = await memoryStore();
    for (const id of ['acc_r', 'acc_other']) {
      await store.createAccount(
        {
          id,
          email: `${id}@example.com`,
          passwordHash: null,
          walletId: `wal_${id}`,
          createdAt: T0,
          publicTestStartedAt: null,
        },
        '2026-11',
      );
      await store.credit({ walletId: `wal_${id}`, kind: 'topup', amountMicros: 100_000_000n, at: T0 });
    }
    const read = (accountId: string, at: number, channel: 'rest' | 'mcp', micros: bigint) =>
      store.debit({
        walletId: `wal_${accountId}`,
        amountMicros: micros,
        month: '2026-11',
        usage: usageEvent({
          walletId: `wal_${accountId}`,
          accountId,
          at,
          channel,
          costMicros: micros,
          burnedMicros: micros,
        }),
      });
    await read('acc_r', T0 + 60_000, 'rest', 2_000_000n);
    await read('acc_r', T0 + 120_000, 'rest', 2_700_000n);
    await read('acc_r', T0 + 180_000, 'mcp', 2_000_000n);
    await read('acc_other', T0 + 60_000, 'rest', 5_000_000n);
  });
  after(() => store.close());

  test('system/api-usage is the caller’s own usage by hour, dataset and face', async () => {
    assert.ok(recordDatasets.has('system/api-usage'));
    const rows = await recordRows('system/api-usage', stores(), me, T0);
    const common = {
      hour: '2026-11-21T15:00:00Z',
      endpoint: 'equities/stock-prices',
      errors_4xx: null,
      errors_5xx: null,
      p50_latency_ms: null,
      p95_latency_ms: null,
    };
    assert.deepEqual(
      rows.sort((a, b) => String(a.method).localeCompare(String(b.method))),
      [
        { ...common, method: 'GET', requests: 2, tokens_burned: 4.7 },
        { ...common, method: 'MCP tools/call', requests: 1, tokens_burned: 2 },
      ],
    );
    assert.deepEqual(await recordRows('system/api-usage', stores(), undefined, T0), []);
  });

  test('the import log and dataset facts are empty before any import, then list it', async () => {
    assert.deepEqual(await recordRows('system/data-collection-log', stores(), me, T0), []);
    assert.deepEqual(await recordRows('system/collection-metadata', stores(), me, T0), []);
    const imports = new DataImports({ datasets: store, catalog: serviceCatalog(), now: () => T0 });
    const file = new TextEncoder().encode('observation_date,DGS10\n2026-01-02,4.18\n2026-01-06,4.17\n');
    const { sha256 } = await imports.importFile({ bytes: file, fileName: 'DGS10.csv' });
    const [log] = await recordRows('system/data-collection-log', stores(), me, T0 + 1000);
    // The swap is stamped by the store's own clock: its time is checked by shape.
    const { duration_ms: duration, message, ...fixed } = log ?? {};
    assert.deepEqual(fixed, {
      run_at: '2026-11-21T15:00:00Z',
      collector: 'fred-series',
      status: 'ok',
      rows_fetched: 2,
      http_status: null,
    });
    assert.equal(typeof duration, 'number');
    assert.match(
      String(message),
      new RegExp(
        `^DGS10\\.csv into macro/fed-h15-series: 2 new, 0 replaced, 0 rejected \\(sha256 ${sha256}\\); swapped in at \\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{3})?Z$`,
      ),
    );
    assert.deepEqual(await recordRows('system/backfill-state', stores(), me, T0 + 1000), [
      {
        dataset_key: 'macro/fed-h15-series',
        as_of: '2026-11-21',
        earliest_loaded: '2026-01-02',
        latest_loaded: '2026-01-06',
        rows_loaded: 2,
        state: 'complete',
        last_error: null,
      },
    ]);
    const [sync] = await recordRows('system/sync-metadata', stores(), me, T0 + 61_000);
    assert.deepEqual(
      [sync?.source_id, sync?.records_upserted, sync?.lag_seconds, sync?.state],
      ['macro/fed-h15-series', 2, 61, 'idle'],
    );
  });
});
