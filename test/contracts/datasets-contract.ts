/**
 * The Datasets contract: every adapter of the Datasets port (SqliteStore, PostgresStore) runs this same
 * suite against a real, freshly migrated database: loads, imports, pages, indexed reads and capped scans.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { csvColumnsKey } from '../../src/catalog/csv.ts';
import type { Row } from '../../src/catalog/types.ts';
import { generatedKey } from '../../src/store/import-port.ts';
import type { Datasets, PageQuery } from '../../src/store/port.ts';
import { SCAN_CAP } from '../../src/store/row-scan.ts';
import { pageOfRows } from '../../src/store/rows.ts';

const T0 = Date.parse('2026-11-21T15:00:00Z');

export function runDatasetsContract(
  name: string,
  makeStore: () => Promise<Datasets>,
  options: { skip?: string | false } = {},
): void {
  describe(`Datasets contract: ${name}`, { skip: options.skip ?? false }, () => {
    let store: Datasets;
    before(async () => {
      store = await makeStore();
      await store.migrate();
    });
    after(async () => {
      await store?.close();
    });

    const unique = () => randomBytes(6).toString('hex');

    describe('indexed reads: entity key columns and capped scans', () => {
      // Two datasets of the same rows: `keyed` under a layout (its entity filters walk key indexes),
      // `plain` under none (every filter checked row by row). Every read must agree on both.
      const rows: Row[] = [];
      const symbols = ['AAPL', 'MSFT', 'IBM', 'TSLA', 'NVDA'];
      for (let day = 1; day <= 28; day++) {
        symbols.forEach((symbol, i) => {
          rows.push({
            date: `2026-02-${String(day).padStart(2, '0')}`,
            symbol,
            venue: (day + i) % 3 === 0 ? 'X' : 'Y',
            lot: i % 2 === 0 ? 100 : 50,
            open: day % 7 === 0,
            close: day + i / 10,
          });
        });
      }
      let keyed: string;
      let plain: string;
      before(async () => {
        keyed = `test/keyed-${unique()}`;
        plain = `test/plain-${unique()}`;
        await store.syncLayouts(new Map([[keyed, ['symbol', 'venue', 'lot', 'open']]]));
        await store.loadRows(keyed, 'date', rows, 'import');
        await store.loadRows(plain, 'date', rows, 'import');
      });

      /** Every page of a read, following its cursor: rows, and each page's count and examined. */
      async function pages(dataset: string, query: Omit<PageQuery, 'dataset'>) {
        const seen: string[] = [];
        const shape: [number, number][] = [];
        let after: { t: string; id: number } | undefined;
        for (let guard = 0; guard < 500; guard++) {
          const page = await store.queryRows({ ...query, dataset, ...(after ? { after } : {}) });
          seen.push(...page.rows.map((r) => r.json));
          shape.push([page.rows.length, page.examined]);
          if (!page.next) return { seen, shape };
          after = page.next;
        }
        throw new Error('the cursor never ended');
      }

      const reference = (filters: Record<string, (string | number | boolean)[]>, descending: boolean) =>
        rows
          .map((row, i) => ({ row, id: i + 1 }))
          .filter(({ row }) => Object.entries(filters).every(([f, vs]) => vs.includes(row[f] as never)))
          .sort((a, b) =>
            a.row.date === b.row.date
              ? (a.id - b.id) * (descending ? -1 : 1)
              : String(a.row.date) < String(b.row.date) === descending
                ? 1
                : -1,
          )
          .map(({ row }) => JSON.stringify(row));

      test('entity filters, one key or several, with or without a range: the rows of a row-by-row read', async () => {
        const cases: { filters: Record<string, string[] | number[]>; from?: string; toExclusive?: string }[] =
          [
            { filters: { symbol: ['MSFT'] } },
            { filters: { symbol: ['TSLA', 'AAPL', 'IBM'] } },
            { filters: { symbol: ['MSFT'] }, from: '2026-02-05', toExclusive: '2026-02-19' },
            { filters: { symbol: ['MSFT', 'NVDA'], venue: ['X'] } },
            { filters: { lot: [50] } },
            { filters: { open: ['true'], symbol: ['IBM', 'NOPE'] } },
            { filters: { symbol: ['NOPE'] } },
            { filters: { close: [3.2, 14.4] } },
          ];
        for (const c of cases) {
          for (const descending of [true, false]) {
            for (const limit of [1, 7, 200]) {
              const query = { ...c, descending, limit };
              const a = await pages(keyed, query);
              const b = await pages(plain, query);
              assert.deepEqual(a.seen, b.seen, JSON.stringify(query));
              const text = await store.queryPage({ ...query, dataset: keyed });
              const built = await pageOfRows({ ...query, dataset: keyed }, (q) => store.queryRows(q));
              assert.deepEqual(text, built, JSON.stringify(query));
            }
          }
        }
        assert.deepEqual(
          (await pages(keyed, { filters: { symbol: ['TSLA', 'AAPL'] }, descending: true, limit: 9 })).seen,
          reference({ symbol: ['TSLA', 'AAPL'] }, true),
        );
      });

      test('a read an index serves examines its page and the row after it', async () => {
        const one = await store.queryRows({
          dataset: keyed,
          filters: { symbol: ['IBM'] },
          descending: true,
          limit: 5,
        });
        assert.deepEqual([one.rows.length, one.examined], [5, 6]);
        const last = await store.queryRows({
          dataset: keyed,
          filters: { symbol: ['IBM'] },
          descending: true,
          limit: 5,
          from: '2026-02-26',
        });
        assert.deepEqual([last.rows.length, last.examined, last.next], [3, 3, null]);
        const page = await store.queryPage({
          dataset: keyed,
          filters: { symbol: ['IBM', 'AAPL'] },
          descending: false,
          limit: 4,
        });
        assert.deepEqual([page.count, page.examined], [4, 5]);
      });

      test('a changed layout re-keys the stored rows; an import by natural key writes its keys', async () => {
        await store.syncLayouts(new Map([[keyed, ['venue', 'symbol']]]));
        const { rekeyed } = await store.syncLayouts(new Map([[keyed, ['venue', 'symbol']]]));
        assert.deepEqual(rekeyed, [], 'a second sync finds every dataset keyed');
        const query = { filters: { symbol: ['NVDA'], venue: ['Y'] }, descending: true, limit: 6 };
        assert.deepEqual((await pages(keyed, query)).seen, (await pages(plain, query)).seen);
        assert.deepEqual(
          (await pages(keyed, query)).seen,
          reference({ symbol: ['NVDA'], venue: ['Y'] }, true),
        );

        const upserted = `test/keyed-upsert-${unique()}`;
        await store.syncLayouts(new Map([[upserted, ['symbol']]]));
        const run = {
          importer: 'test-format',
          sourceName: 'Test source',
          fileName: 'k.csv',
          sha256: 'cd'.repeat(32),
          licence: 'Public domain',
          attribution: null,
          importedAt: T0,
          rowsRead: 10,
          rowsRejected: 0,
        };
        const keyedRows = rows.slice(0, 10).map((row) => ({ key: `${row.symbol}|${row.date}`, row }));
        await store.upsertRows(upserted, 'date', keyedRows, run);
        await store.upsertRows(
          upserted,
          'date',
          [{ key: 'TSLA|2026-02-01', row: { ...rows[3], close: 1 } }],
          run,
        );
        const tsla = await store.queryRows({
          dataset: upserted,
          filters: { symbol: ['TSLA'] },
          descending: false,
          limit: 5,
        });
        assert.deepEqual(
          tsla.rows.map((r) => JSON.parse(r.json).close),
          [1, 2.3],
        );
      });

      test(`a filter no index serves examines at most ${SCAN_CAP} rows a read; its cursor goes on`, async () => {
        const big = `test/scan-${unique()}`;
        const many: Row[] = [];
        const total = SCAN_CAP * 2 + 500;
        for (let i = 0; i < total; i++) {
          many.push({ date: `2026-03-${String(1 + (i % 28)).padStart(2, '0')}`, symbol: `S${i % 40}`, n: i });
        }
        await store.syncLayouts(new Map([[big, ['symbol']]]));
        await store.loadRows(big, 'date', many, 'import');
        // The only matches sit where the first read's walk never gets.
        const wanted = [SCAN_CAP + 3, total - 1, 0].map((i) => many[i]?.n as number);
        const { seen, shape } = await pages(big, { filters: { n: wanted }, descending: false, limit: 2 });
        assert.deepEqual(
          seen.map((json) => JSON.parse(json).n).sort((a, b) => a - b),
          [...wanted].sort((a, b) => a - b),
        );
        assert.ok(
          shape.every(([, examined]) => examined <= SCAN_CAP),
          JSON.stringify(shape),
        );
        assert.equal(shape.reduce((sum, [, examined]) => sum + examined, 0) >= total - 2, true);
        const first = await store.queryPage({
          dataset: big,
          filters: { n: [27] },
          descending: true,
          limit: 5,
        });
        assert.deepEqual([first.count, first.examined], [1, SCAN_CAP]);
        assert.ok(first.next, 'a read that stopped at the cap says where to go on');
        const capped = await store.queryPage({
          dataset: big,
          filters: { n: [-1] },
          descending: true,
          limit: 5,
        });
        assert.deepEqual([capped.count, capped.examined, capped.json], [0, SCAN_CAP, '']);
        assert.ok(capped.next);
        // With an index walk underneath: only that entity's rows count towards the cap.
        const narrow = await store.queryRows({
          dataset: big,
          filters: { symbol: ['S7'], n: [-1] },
          descending: true,
          limit: 5,
        });
        assert.deepEqual(
          [narrow.rows.length, narrow.examined, narrow.next],
          [0, Math.ceil((total - 7) / 40), null],
        );
      });
    });

    describe('dataset rows', () => {
      const rows: Row[] = [];
      const symbols = ['AAPL', 'MSFT', 'IBM'];
      for (let day = 1; day <= 10; day++) {
        for (const symbol of symbols) {
          rows.push({
            date: `2026-01-${String(day).padStart(2, '0')}`,
            symbol,
            venue: day % 2 ? 'X' : 'Y',
            close: day + 0.5,
          });
        }
      }
      let dataset: string;
      before(async () => {
        dataset = `test/rows-${unique()}`;
        assert.equal(await store.loadRows(dataset, 'date', rows, 'sample'), true);
      });

      const all = async (query: Partial<Parameters<Datasets['queryRows']>[0]>) =>
        (await store.queryRows({ dataset, filters: {}, descending: true, limit: 1000, ...query })).rows;

      test('a sample load fills an empty dataset once; an import replaces it', async () => {
        const other = `test/load-${unique()}`;
        assert.equal(await store.datasetSource(other), null);
        assert.equal(await store.loadRows(other, 'date', rows.slice(0, 3), 'sample'), true);
        assert.equal(await store.loadRows(other, 'date', rows, 'sample'), false, 'already loaded');
        assert.equal(
          (await store.queryRows({ dataset: other, filters: {}, descending: false, limit: 100 })).rows.length,
          3,
        );
        const source = await store.datasetSource(other);
        assert.equal(source?.source, 'sample');
        assert.equal(source?.rows, 3);
        assert.ok(typeof source?.loadedAt === 'number');
        assert.equal(await store.loadRows(other, 'date', rows.slice(0, 5), 'import'), true);
        assert.equal((await store.datasetSource(other))?.source, 'import');
        assert.equal(
          (await store.queryRows({ dataset: other, filters: {}, descending: false, limit: 100 })).rows.length,
          5,
        );
      });

      test('a load with ifLoadedAt happens only over that load; every load moves loadedAt forward', async () => {
        const other = `test/cas-${unique()}`;
        await store.loadRows(other, 'date', rows.slice(0, 3), 'import');
        const first = (await store.datasetSource(other))?.loadedAt as number;
        await store.loadRows(other, 'date', rows.slice(0, 4), 'import', undefined, { ifLoadedAt: first });
        const second = (await store.datasetSource(other))?.loadedAt as number;
        assert.ok(second > first, 'strictly later, even within the same millisecond');
        await assert.rejects(
          store.loadRows(other, 'date', rows.slice(0, 1), 'import', undefined, { ifLoadedAt: first }),
          (error: { code?: string }) => error.code === 'conflict',
        );
        assert.equal((await store.datasetSource(other))?.rows, 4, 'the stale load changed nothing');
        assert.equal(
          (await store.queryRows({ dataset: other, filters: {}, descending: false, limit: 10 })).rows.length,
          4,
        );
      });

      /** The rows in batches of `size`, with a turn of the event loop before each, as a parser yields them. */
      async function* batchesOf(list: readonly Row[], size: number, failAfter?: number) {
        for (let start = 0; start < list.length; start += size) {
          if (failAfter !== undefined && start >= failAfter) throw new Error('line 9: not a number');
          await new Promise((resolve) => setImmediate(resolve));
          yield list.slice(start, start + size);
        }
      }
      const everything = async (name: string, csvColumns?: string) =>
        (
          await store.queryRows({
            dataset: name,
            filters: {},
            descending: false,
            limit: 1000,
            ...(csvColumns === undefined ? {} : { csvColumns }),
          })
        ).rows;

      test('a streamed load stores its batches as loadRows stores the same rows, replacing the dataset', async () => {
        const streamed = `test/stream-${unique()}`;
        const whole = `test/whole-${unique()}`;
        const columns = ['date', 'symbol', 'close'];
        await store.loadRows(streamed, 'date', rows.slice(0, 4), 'sample');
        assert.equal(
          await store.loadRowsStream(streamed, 'date', batchesOf(rows, 7), 'import', columns),
          true,
        );
        assert.equal(await store.loadRows(whole, 'date', rows, 'import', columns), true);
        const key = csvColumnsKey(columns);
        const got = await everything(streamed, key);
        assert.equal(got.length, rows.length, 'the sample rows are gone');
        assert.deepEqual(
          got.map(({ id, t, json, csv, importId }) => ({ id, t, json, csv, importId })),
          (await everything(whole, key)).map(({ id, t, json, csv, importId }) => ({
            id,
            t,
            json,
            csv,
            importId,
          })),
        );
        assert.deepEqual(
          got.map((r) => JSON.parse(r.json)),
          [...rows].sort((a, b) => String(a.date).localeCompare(String(b.date))),
        );
        const source = await store.datasetSource(streamed);
        assert.equal(source?.source, 'import');
        assert.equal(source?.rows, rows.length);
        const page = await store.queryPage({
          dataset: streamed,
          filters: {},
          descending: false,
          limit: 5,
          csvColumns: key,
          csvJoin: 'crlf',
        });
        assert.deepEqual(page, {
          ...(await store.queryPage({
            dataset: whole,
            filters: {},
            descending: false,
            limit: 5,
            csvColumns: key,
            csvJoin: 'crlf',
          })),
        });
        assert.equal(
          await store.loadRowsStream(streamed, 'date', batchesOf([], 7), 'import'),
          true,
          'an empty stream empties the dataset',
        );
        assert.deepEqual(await everything(streamed), []);
        assert.equal((await store.datasetSource(streamed))?.rows, 0);
      });

      test('a streamed load whose batches fail part-way loads nothing and leaves the dataset as it was', async () => {
        const other = `test/stream-fail-${unique()}`;
        await store.loadRows(other, 'date', rows.slice(0, 3), 'import', ['date', 'symbol']);
        const before = await store.datasetSource(other);
        const stored = await everything(other);
        await assert.rejects(
          store.loadRowsStream(other, 'date', batchesOf(rows, 5, 20), 'import', ['date']),
          /line 9: not a number/,
        );
        assert.deepEqual(await store.datasetSource(other), before, 'the same record, loadedAt included');
        assert.deepEqual(await everything(other), stored, 'none of the 20 rows yielded before the failure');
        const fresh = `test/stream-fail-${unique()}`;
        await assert.rejects(store.loadRowsStream(fresh, 'date', batchesOf(rows, 5, 5), 'import'), /line 9/);
        assert.equal(await store.datasetSource(fresh), null, 'a first load that failed leaves no record');
        assert.deepEqual(await everything(fresh), []);
        // The store goes on: the next load, streamed or not, is whole.
        assert.equal(await store.loadRowsStream(other, 'date', batchesOf(rows, 5), 'import'), true);
        assert.equal((await everything(other)).length, rows.length);
        assert.equal(await store.loadRows(other, 'date', rows.slice(0, 2), 'import'), true);
        assert.equal((await store.datasetSource(other))?.rows, 2);
      });

      test('a streamed sample load never replaces rows, and a stale ifLoadedAt streams nothing in', async () => {
        const other = `test/stream-cas-${unique()}`;
        assert.equal(await store.loadRowsStream(other, 'date', batchesOf(rows, 4), 'sample'), true);
        assert.equal(await store.loadRowsStream(other, 'date', batchesOf(rows, 4), 'sample'), false);
        const first = (await store.datasetSource(other))?.loadedAt as number;
        assert.equal((await store.datasetSource(other))?.source, 'sample');
        await store.loadRowsStream(other, 'date', batchesOf(rows.slice(0, 4), 2), 'import', undefined, {
          ifLoadedAt: first,
        });
        const second = await store.datasetSource(other);
        assert.ok((second?.loadedAt as number) > first);
        await assert.rejects(
          store.loadRowsStream(other, 'date', batchesOf(rows, 2), 'import', undefined, { ifLoadedAt: first }),
          (error: { code?: string }) => error.code === 'conflict',
        );
        assert.deepEqual(await store.datasetSource(other), second, 'the stale load changed nothing');
        assert.equal((await everything(other)).length, 4);
      });

      test('streamed loads of one dataset at once each load whole, one after the other', async () => {
        const other = `test/stream-race-${unique()}`;
        const [a, b] = await Promise.all([
          store.loadRowsStream(other, 'date', batchesOf(rows.slice(0, 10), 3), 'import'),
          store.loadRowsStream(other, 'date', batchesOf(rows.slice(10, 30), 3), 'import'),
        ]);
        assert.deepEqual([a, b], [true, true]);
        const got = (await everything(other)).map((r) => JSON.parse(r.json));
        const source = await store.datasetSource(other);
        assert.equal(source?.rows, got.length);
        assert.ok(got.length === 10 || got.length === 20, `one load whole, not a mix (${got.length})`);
        const expected = got.length === 10 ? rows.slice(0, 10) : rows.slice(10, 30);
        assert.deepEqual(
          got,
          [...expected].sort((x, y) => String(x.date).localeCompare(String(y.date))),
        );
      });

      const provenance = (fileName: string) => ({
        importer: 'csv',
        sourceName: 'Test source',
        fileName,
        sha256: 'cd'.repeat(32),
        licence: 'Public domain',
        attribution: null,
        importedAt: T0,
        rowsRead: 0,
        rowsRejected: 0,
      });

      /** An iterable that yields `first`, then waits for `release()` before it yields `second`. */
      function paused(first: readonly Row[], second: readonly Row[]) {
        let release = () => {};
        let reached = () => {};
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        const midway = new Promise<void>((resolve) => {
          reached = resolve;
        });
        async function* batches() {
          yield first;
          reached();
          await gate;
          yield second;
        }
        return { batches: batches(), midway, release };
      }

      test('a load is swapped in whole: read during it, the old rows; after it, the new, and it is told', async () => {
        const other = `test/swap-${unique()}`;
        await store.loadRows(other, 'date', rows.slice(0, 3), 'import');
        const old = await everything(other);
        const told: string[] = [];
        await store.onLoaded((dataset) => told.push(dataset));
        const load = paused(rows.slice(3, 13), rows.slice(13, 23));
        const loading = store.loadRowsStream(other, 'date', load.batches, 'import', undefined, {
          run: provenance('swap.csv'),
        });
        await load.midway;
        assert.deepEqual(await everything(other), old, 'the old rows, whole, while the new ones load');
        assert.equal((await store.datasetSource(other))?.rows, 3);
        assert.equal((await store.listImportRuns({ dataset: other }, 1))[0]?.outcome, 'loading');
        load.release();
        assert.equal(await loading, true);
        assert.deepEqual(
          (await everything(other)).map((r) => JSON.parse(r.json)),
          [...rows.slice(3, 23)].sort((x, y) => String(x.date).localeCompare(String(y.date))),
        );
        // PostgreSQL tells by NOTIFY, which arrives on its listening connection a moment after the commit.
        for (let waited = 0; waited < 5_000 && !told.includes(other); waited += 20)
          await new Promise((resolve) => setTimeout(resolve, 20));
        assert.deepEqual(
          told.filter((d) => d === other),
          [other],
        );
        const [done] = await store.listImportRuns({ dataset: other }, 1);
        assert.deepEqual(
          [done?.outcome, done?.rowsInserted, done?.fileName, done?.error],
          ['swapped', 20, 'swap.csv', null],
        );
        assert.ok((done?.swappedAt ?? 0) > 0);
      });

      test('a load that fails is recorded as failed, with why, and the dataset keeps its rows', async () => {
        const other = `test/failed-${unique()}`;
        await store.loadRows(other, 'date', rows.slice(0, 3), 'import');
        const before = await everything(other);
        await assert.rejects(
          store.loadRowsStream(other, 'date', batchesOf(rows, 5, 20), 'import', undefined, {
            run: provenance('broken.csv'),
          }),
          /line 9: not a number/,
        );
        assert.deepEqual(await everything(other), before);
        const [failed] = await store.listImportRuns({ dataset: other }, 1);
        assert.deepEqual(
          [failed?.outcome, failed?.fileName, failed?.swappedAt],
          ['failed', 'broken.csv', null],
        );
        assert.match(failed?.error ?? '', /line 9: not a number/);
      });

      test('an upsert too large for one transaction is written beside the live rows, then swapped in', async () => {
        const other = `test/big-upsert-${unique()}`;
        const fields = ['symbol', 'date'];
        const day = (n: number) => new Date(Date.UTC(2020, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
        const make = (from: number, to: number, close: number): Row[] =>
          Array.from({ length: to - from }, (_, i) => ({
            date: day(Math.floor((from + i) / 10)),
            symbol: `S${(from + i) % 10}`,
            close,
          }));
        await store.loadRows(other, 'date', make(0, 1500, 1), 'import');
        const keyedOf = (list: readonly Row[]) =>
          list.map((row) => ({ key: generatedKey(row, fields), row }));
        const load = paused(make(500, 2000, 2), make(2000, 3100, 2));
        async function* keyedBatches() {
          for await (const batch of load.batches) yield keyedOf(batch);
        }
        const upserting = store.upsertRowsStream(
          other,
          'date',
          keyedBatches(),
          provenance('big.csv'),
          undefined,
          {
            naturalKey: fields,
          },
        );
        await load.midway;
        const newest = await store.queryRows({ dataset: other, filters: {}, descending: true, limit: 1000 });
        assert.ok(
          newest.rows.every((r) => JSON.parse(r.json).close === 1),
          'only old rows while the upsert runs',
        );
        assert.equal((await store.datasetSource(other))?.rows, 1500);
        load.release();
        const run = await upserting;
        assert.deepEqual([run.outcome, run.rowsInserted, run.rowsReplaced], ['swapped', 1600, 1000]);
        assert.equal((await store.datasetSource(other))?.rows, 3100);
        let count = 0;
        let changed = 0;
        let after: { t: string; id: number } | undefined;
        for (;;) {
          const page = await store.queryRows({
            dataset: other,
            filters: {},
            descending: false,
            limit: 1000,
            ...(after ? { after } : {}),
          });
          count += page.rows.length;
          changed += page.rows.filter((r) => JSON.parse(r.json).close === 2).length;
          if (!page.next) break;
          after = page.next;
        }
        assert.deepEqual([count, changed], [3100, 2600], 'every row once; the upserted ones new');
        const s1 = await store.queryRows({
          dataset: other,
          filters: { symbol: ['S1'] },
          descending: false,
          limit: 2,
        });
        assert.deepEqual(
          s1.rows.map((r) => JSON.parse(r.json).close),
          [1, 1],
          'an entity read walks its index in the swapped rows',
        );
      });

      test('collector state and runs: saved whole, a schedule slot claimed once, runs newest first', async () => {
        const source = `test-source-${unique()}`;
        assert.equal(await store.collectorState(source), null);
        const state = {
          source,
          cursor: '{"sofr":"2024-06-06"}',
          lastRunAt: T0,
          lastSuccessAt: T0,
          lastError: null,
          failures: 0,
          pausedUntil: null,
          claimedSlot: null,
        };
        await store.saveCollectorState(state);
        assert.deepEqual(await store.collectorState(source), state);
        const claims = await Promise.all([1, 2, 3].map(() => store.claimCollectorSlot(source, T0 + 60_000)));
        assert.equal(claims.filter(Boolean).length, 1, 'one claim per slot');
        assert.equal(await store.claimCollectorSlot(source, T0), false, 'an older slot is not claimed');
        assert.equal(await store.claimCollectorSlot(source, T0 + 120_000), true, 'the next slot is');
        await store.saveCollectorState({ ...state, failures: 2, lastError: 'HTTP 503', claimedSlot: null });
        const saved = await store.collectorState(source);
        assert.deepEqual(
          [saved?.failures, saved?.lastError, saved?.claimedSlot],
          [2, 'HTTP 503', T0 + 120_000],
        );
        assert.ok((await store.listCollectorStates()).some((s) => s.source === source));
        const run = {
          source,
          startedAt: T0,
          finishedAt: T0 + 1500,
          outcome: 'ok' as const,
          datasets: ['macro/nyfed-sofr-series'],
          rowsNew: 4,
          rowsChanged: 1,
          rowsRejected: 0,
          requests: 3,
          bytes: 2048,
          notModified: 1,
          error: null,
        };
        const first = await store.recordCollectionRun(run);
        const second = await store.recordCollectionRun({ ...run, outcome: 'failed', error: 'HTTP 500' });
        assert.deepEqual({ ...first, id: 0 }, { ...run, id: 0 });
        const listed = (await store.listCollectionRuns(100)).filter((r) => r.source === source);
        assert.deepEqual(
          listed.map((r) => r.id),
          [second.id, first.id],
        );
      });

      test('rows loaded with CSV columns carry their CSV line for exactly those columns', async () => {
        const other = `test/csv-${unique()}`;
        const odd: Row[] = [
          { date: '2026-02-01', symbol: '=HYPERLINK("x")', note: 'a, "quoted" cell', close: -1.25 },
          { date: '2026-02-02', symbol: 'MSFT', note: null, close: 3 },
        ];
        const columns = ['date', 'symbol', 'note', 'close', 'absent'];
        assert.equal(await store.loadRows(other, 'date', odd, 'import', columns), true);
        const key = csvColumnsKey(columns);
        const page = (
          await store.queryRows({
            dataset: other,
            filters: {},
            descending: false,
            limit: 10,
            csvColumns: key,
          })
        ).rows;
        // Written out, not derived: formula guard, quoting and empty cells as the REST CSV writes them.
        assert.deepEqual(
          page.map((r) => r.csv),
          [`2026-02-01,"'=HYPERLINK(""x"")","a, ""quoted"" cell",-1.25,`, '2026-02-02,MSFT,,3,'],
        );
        assert.deepEqual(JSON.parse(page[0]?.json ?? ''), odd[0], 'the JSON is unchanged');
        const otherColumns = (
          await store.queryRows({
            dataset: other,
            filters: {},
            descending: false,
            limit: 10,
            csvColumns: csvColumnsKey(['date', 'symbol']),
          })
        ).rows;
        assert.deepEqual(
          otherColumns.map((r) => r.csv),
          [null, null],
          'lines rendered over other columns are not offered',
        );
        const plain = (await store.queryRows({ dataset: other, filters: {}, descending: false, limit: 10 }))
          .rows;
        assert.ok(
          plain.every((r) => r.csv === undefined),
          'no lines unless asked for',
        );
        // A load without columns (an older loader) leaves no lines behind, even under the same key.
        assert.equal(await store.loadRows(other, 'date', odd, 'import'), true);
        const reloaded = (
          await store.queryRows({
            dataset: other,
            filters: {},
            descending: false,
            limit: 10,
            csvColumns: key,
          })
        ).rows;
        assert.deepEqual(
          reloaded.map((r) => r.csv),
          [null, null],
        );
        for (const csvJoin of ['json', 'crlf'] as const) {
          const page = await store.queryPage({
            dataset: other,
            filters: {},
            descending: false,
            limit: 10,
            csvColumns: key,
            csvJoin,
          });
          assert.equal(page.count, 2);
          assert.equal(page.csv, null, `no ${csvJoin} lines on a page of a load without columns`);
        }
      });

      test('concurrent sample loads of one dataset load it once', async () => {
        const other = `test/race-${unique()}`;
        const results = await Promise.all([
          store.loadRows(other, 'date', rows, 'sample'),
          store.loadRows(other, 'date', rows, 'sample'),
        ]);
        assert.deepEqual(results.sort(), [false, true]);
        assert.equal((await all({ dataset: other })).length, rows.length);
      });

      test('rows come back as stored JSON text, newest first by default, ties broken by id', async () => {
        const result = await all({ limit: 4 });
        assert.deepEqual(
          result.map((r) => [r.t, r.id]),
          [
            ['2026-01-10', 30],
            ['2026-01-10', 29],
            ['2026-01-10', 28],
            ['2026-01-09', 27],
          ],
        );
        assert.deepEqual(JSON.parse(result[0]?.json ?? ''), rows[29]);
        const asc = await all({ descending: false, limit: 2 });
        assert.deepEqual(
          asc.map((r) => r.id),
          [1, 2],
        );
      });

      test('filters: OR within a field, AND across fields; unknown values match nothing', async () => {
        const two = await all({ filters: { symbol: ['AAPL', 'IBM'] } });
        assert.equal(two.length, 20);
        assert.ok(two.every((r) => ['AAPL', 'IBM'].includes(JSON.parse(r.json).symbol)));
        const both = await all({ filters: { symbol: ['MSFT'], venue: ['Y'] } });
        assert.equal(both.length, 5);
        assert.equal((await all({ filters: { symbol: ['NOPE'] } })).length, 0);
        assert.equal((await all({ filters: { missing_field: ['x'] } })).length, 0);
        assert.equal((await all({ filters: { symbol: ["x' OR '1'='1"] } })).length, 0);
      });

      test('filters: booleans by their JSON text, numbers by value with every digit, the same on every store', async () => {
        const flagged = `test/flags-${unique()}`;
        const flags: Row[] = [
          { date: '2026-01-01', is_meeting: true, count: 2, lat: -6.081689834590001, code: '01' },
          { date: '2026-01-02', is_meeting: false, count: 3, lat: -6.08168983459, code: '1' },
          { date: '2026-01-03', is_meeting: true, count: 3, lat: 144.29600524902344, code: '3' },
          { date: '2026-01-04', is_meeting: null, count: null, lat: null, code: null },
        ];
        assert.equal(await store.loadRows(flagged, 'date', flags, 'sample'), true);
        const days = async (filters: Record<string, string[] | number[]>) =>
          (await store.queryRows({ dataset: flagged, filters, descending: false, limit: 10 })).rows.map(
            (r) => r.t,
          );
        assert.deepEqual(await days({ is_meeting: ['true'] }), ['2026-01-01', '2026-01-03']);
        assert.deepEqual(await days({ is_meeting: ['false'] }), ['2026-01-02']);
        assert.deepEqual(await days({ is_meeting: ['1'] }), []);
        assert.deepEqual(await days({ count: [3] }), ['2026-01-02', '2026-01-03']);
        assert.deepEqual(await days({ count: [2, 3.5] }), ['2026-01-01']);
        // 15 significant digits would make these two one value.
        assert.deepEqual(await days({ lat: [-6.081689834590001] }), ['2026-01-01']);
        assert.deepEqual(await days({ lat: [-6.08168983459] }), ['2026-01-02']);
        assert.deepEqual(await days({ lat: [144.29600524902344, 1] }), ['2026-01-03']);
        // Past 2^53 a stored number is the double JavaScript printed: it matches that double.
        const huge = `test/huge-${unique()}`;
        await store.loadRows(huge, 'date', [{ date: '2026-01-01', n: 2 ** 62 + 2 ** 20 }], 'sample');
        const hugeRows = (
          await store.queryRows({
            dataset: huge,
            filters: { n: [2 ** 62 + 2 ** 20] },
            descending: false,
            limit: 5,
          })
        ).rows;
        assert.equal(hugeRows.length, 1);
        // A number filter on a text field matches no text, and a text filter matches text exactly.
        assert.deepEqual(await days({ code: [1] }), []);
        assert.deepEqual(await days({ code: ['01'] }), ['2026-01-01']);
        const page = await store.queryPage({
          dataset: flagged,
          filters: { is_meeting: ['true'], lat: [144.29600524902344] },
          descending: false,
          limit: 10,
        });
        assert.equal(page.count, 1);
      });

      test('time bounds: from is inclusive, toExclusive is exclusive', async () => {
        const window = await all({ from: '2026-01-03', toExclusive: '2026-01-05' });
        assert.deepEqual([...new Set(window.map((r) => r.t))], ['2026-01-04', '2026-01-03']);
        assert.equal(window.length, 6);
        assert.equal(
          (await all({ from: '2026-01-10T00:00:00Z' })).length,
          0,
          'string order: a later instant',
        );
      });

      test('queryPage is queryRows as one text page, with its next keyset, for every shape', async () => {
        const odd = `test/page-${unique()}`;
        const columns = ['date', 'symbol', 'note', 'close'];
        const oddRows: Row[] = rows.map((row, i) => ({
          ...row,
          note:
            i % 4 === 0
              ? `line\nbreak, "quoted" \\ tab\t é \u0001 \u2028 ${i}`
              : i % 4 === 1
                ? null
                : `n${i}`,
        }));
        assert.equal(await store.loadRows(odd, 'date', oddRows, 'import', columns), true);
        const csvColumns = csvColumnsKey(columns);
        const shapes: Partial<PageQuery>[] = [
          {},
          { descending: false },
          { limit: 1 },
          { limit: 29 },
          { limit: 30 },
          { limit: 31 },
          { filters: { symbol: ['AAPL', 'IBM'] }, limit: 7 },
          { filters: { symbol: ['NOPE'] } },
          { from: '2026-01-03', toExclusive: '2026-01-06', limit: 4, descending: false },
          { after: { t: '2026-01-05', id: 14 }, limit: 5 },
          { after: { t: '2026-01-05', id: 14 }, limit: 5, descending: false },
        ];
        for (const shape of shapes) {
          for (const csv of [undefined, 'crlf', 'json'] as const) {
            const query: PageQuery = {
              dataset: odd,
              filters: {},
              descending: true,
              limit: 1000,
              ...shape,
              ...(csv ? { csvColumns, csvJoin: csv } : {}),
            };
            const page = await store.queryPage(query);
            const reference = await pageOfRows(query, (q) => store.queryRows(q));
            assert.deepEqual(page, reference, JSON.stringify({ shape, csv }));
            assert.equal(JSON.parse(`[${page.json}]`).length, page.count);
            if (csv === 'json' && page.csv) {
              const text = JSON.parse(`"${page.csv}"`) as string;
              assert.equal(text.split('\n').length >= page.count, true);
            }
          }
        }
        // Keyset paging by `next` visits every row once.
        const seen: string[] = [];
        let after: PageQuery['after'];
        for (let i = 0; i < 10; i++) {
          const page = await store.queryPage({
            dataset: odd,
            filters: {},
            descending: true,
            limit: 7,
            ...(after ? { after } : {}),
          });
          seen.push(...(JSON.parse(`[${page.json}]`) as Row[]).map((r) => `${r.date}/${r.symbol}`));
          if (!page.next) break;
          after = page.next;
        }
        assert.equal(seen.length, 30);
        assert.equal(new Set(seen).size, 30);
        // Lines over other columns are not offered: the page says so rather than serving them.
        const other = await store.queryPage({
          dataset: odd,
          filters: {},
          descending: true,
          limit: 5,
          csvColumns: csvColumnsKey(['date']),
          csvJoin: 'json',
        });
        assert.equal(other.csv, null);
        assert.equal(other.count, 5);
        const otherCrlf = await store.queryPage({
          dataset: odd,
          filters: {},
          descending: true,
          limit: 5,
          csvColumns: csvColumnsKey(['date']),
          csvJoin: 'crlf',
        });
        assert.equal(otherCrlf.csv, null, 'nor for a CSV answer');
        // An empty page has all of its (no) lines, whatever they were rendered over.
        for (const csvJoin of ['json', 'crlf'] as const) {
          const empty = await store.queryPage({
            dataset: odd,
            filters: { symbol: ['NO-SUCH-SYMBOL'] },
            descending: true,
            limit: 5,
            csvColumns: csvColumnsKey(['date']),
            csvJoin,
          });
          assert.deepEqual([empty.count, empty.json, empty.csv, empty.next], [0, '', '', null]);
        }
        // A limit that is not a whole number of rows is refused before anything is read.
        for (const limit of [2.5, -1, Number.NaN]) {
          const query = { dataset: odd, filters: {}, descending: true, limit };
          await assert.rejects(store.queryPage(query), { name: 'RangeError', message: /not a row limit/ });
          await assert.rejects(store.queryRows(query), { name: 'RangeError', message: /not a row limit/ });
        }
      });

      test('keyset paging visits every row exactly once, in both directions', async () => {
        for (const descending of [true, false]) {
          const seen: number[] = [];
          let after: { t: string; id: number } | undefined;
          for (let page = 0; page < 10; page++) {
            const result = (
              await store.queryRows({
                dataset,
                filters: { symbol: ['AAPL', 'MSFT'] },
                descending,
                limit: 7,
                ...(after ? { after } : {}),
              })
            ).rows;
            seen.push(...result.map((r) => r.id));
            const last = result.at(-1);
            if (result.length < 7 || !last) break;
            after = { t: last.t, id: last.id };
          }
          assert.equal(seen.length, 20);
          assert.equal(new Set(seen).size, 20);
          const sorted = [...seen].sort((a, b) => a - b);
          assert.deepEqual(seen, descending ? sorted.reverse() : sorted);
        }
      });

      const run = (fileName: string, at: number) => ({
        importer: 'test-format',
        sourceName: 'Test source',
        fileName,
        sha256: 'ab'.repeat(32),
        licence: 'Public domain',
        attribution: null,
        importedAt: at,
        rowsRead: 4,
        rowsRejected: 1,
      });
      const keyed = (list: Row[]) => list.map((row) => ({ key: `${row.symbol}|${row.date}`, row }));

      test('an import by natural key drops sample rows, then replaces what it imports again', async () => {
        const other = `test/upsert-${unique()}`;
        await store.loadRows(other, 'date', rows.slice(0, 6), 'sample');
        const first = await store.upsertRows(other, 'date', keyed(rows.slice(0, 3)), run('a.csv', T0), [
          'date',
          'symbol',
        ]);
        assert.ok(typeof first.swappedAt === 'number', 'the swap is timed');
        assert.deepEqual(
          { ...first, id: 0, swappedAt: 0 },
          {
            id: 0,
            swappedAt: 0,
            outcome: 'swapped',
            error: null,
            dataset: other,
            importer: 'test-format',
            sourceName: 'Test source',
            fileName: 'a.csv',
            sha256: 'ab'.repeat(32),
            licence: 'Public domain',
            attribution: null,
            importedAt: T0,
            rowsRead: 4,
            rowsInserted: 3,
            rowsReplaced: 0,
            rowsRejected: 1,
            firstT: '2026-01-01',
            lastT: '2026-01-01',
          },
        );
        const span = await store.datasetSpan(other);
        assert.deepEqual(
          { ...span, loadedAt: 0 },
          {
            source: 'import',
            rows: 3,
            firstT: '2026-01-01',
            lastT: '2026-01-01',
            loadedAt: 0,
          },
        );

        // The same rows again, one corrected, and three new: 1 replaced, 3 added, none twice; the two
        // unchanged rows are left as they were, provenance included.
        const corrected = rows.slice(0, 6).map((row, i) => (i === 1 ? { ...row, close: 99.25 } : row));
        const second = await store.upsertRows(other, 'date', keyed(corrected), run('b.csv', T0 + 1), [
          'date',
          'symbol',
        ]);
        assert.deepEqual([second.rowsInserted, second.rowsReplaced], [3, 1]);
        assert.ok(second.id > first.id);
        const stored = (await store.queryRows({ dataset: other, filters: {}, descending: false, limit: 100 }))
          .rows;
        assert.equal(stored.length, 6);
        assert.equal(new Set(stored.map((r) => r.id)).size, 6);
        assert.deepEqual(
          stored.map((r) => JSON.parse(r.json).close),
          corrected.map((r) => r.close),
        );
        assert.deepEqual(
          stored.map((r) => (r.importId === second.id ? 'b' : 'a')),
          corrected.map((_, i) => (i === 0 || i === 2 ? 'a' : 'b')),
          'an unchanged row keeps the import that brought it',
        );
        assert.equal((await store.datasetSpan(other))?.rows, 6);
        assert.equal((await store.datasetSpan(other))?.lastT, '2026-01-02');
      });

      test('a page names the import runs behind its rows; sample rows name none', async () => {
        const other = `test/prov-${unique()}`;
        await store.loadRows(other, 'date', rows.slice(0, 3), 'sample');
        const sample = await store.queryPage({ dataset: other, filters: {}, descending: false, limit: 10 });
        assert.deepEqual(sample.imports, []);
        const a = await store.upsertRows(other, 'date', keyed(rows.slice(0, 3)), run('a.csv', T0));
        const b = await store.upsertRows(other, 'date', keyed(rows.slice(3, 6)), run('b.csv', T0 + 1));
        const columns = csvColumnsKey(['date', 'symbol']);
        for (const query of [
          { limit: 10 },
          { limit: 10, csvColumns: columns, csvJoin: 'crlf' as const },
          { limit: 2 },
          { limit: 2, descending: true },
        ]) {
          const page = await store.queryPage({ dataset: other, filters: {}, descending: false, ...query });
          const reference = await pageOfRows(
            { dataset: other, filters: {}, descending: false, ...query },
            (q) => store.queryRows(q),
          );
          assert.deepEqual(page.imports, reference.imports);
        }
        assert.deepEqual(
          (await store.queryPage({ dataset: other, filters: {}, descending: false, limit: 10 })).imports,
          [a.id, b.id],
        );
        assert.deepEqual(
          (await store.queryPage({ dataset: other, filters: {}, descending: true, limit: 2 })).imports,
          [b.id],
        );
        const listed = await store.listImportRuns({ dataset: other }, 10);
        assert.deepEqual(
          listed.map((r) => r.fileName),
          ['b.csv', 'a.csv'],
        );
        assert.deepEqual(
          (await store.listImportRuns({ ids: [a.id] }, 10)).map((r) => r.id),
          [a.id],
        );
        assert.deepEqual(await store.listImportRuns({ ids: [] }, 10), []);
      });

      test('a streamed upsert by generated key: batches, repeats, and rows a replacing load wrote', async () => {
        const daily = `test/daily-${unique()}`;
        const fields = ['symbol', 'date'];
        const base: Row[] = rows.slice(0, 6);
        // A replacing load writes rows with no natural key...
        await store.loadRows(daily, 'date', base, 'import');
        const keyedOf = (list: Row[]) => list.map((row) => ({ key: generatedKey(row, fields), row }));
        async function* batches(...parts: Row[][]) {
          for (const part of parts) yield keyedOf(part);
        }
        const corrected = { ...base[0], close: 123.25 } as Row;
        const fresh = { date: '2026-02-01', symbol: 'AAPL', venue: 'X', close: 1 };
        const run = {
          importer: 'csv',
          sourceName: 'Test source',
          fileName: 'day2.csv',
          sha256: 'ef'.repeat(32),
          licence: 'Public domain',
          attribution: null,
          importedAt: T0,
          rowsRead: 0,
          rowsRejected: 0,
        };
        // ...which an upsert by the same key replaces: the correction and a new day, the new day twice.
        const first = await store.upsertRowsStream(
          daily,
          'date',
          batches([corrected, fresh], [fresh]),
          run,
          undefined,
          {
            naturalKey: fields,
          },
        );
        assert.deepEqual(
          [first.rowsRead, first.rowsInserted, first.rowsReplaced, first.firstT, first.lastT],
          [3, 1, 1, '2026-01-01', '2026-02-01'],
        );
        const stored = (await store.queryRows({ dataset: daily, filters: {}, descending: false, limit: 100 }))
          .rows;
        assert.equal(stored.length, 7, 'one row added, none doubled');
        assert.equal(stored.filter((r) => JSON.parse(r.json).close === 123.25).length, 1);
        assert.equal((await store.datasetSource(daily))?.rows, 7);
        // The same file again changes nothing and adds nothing.
        const again = await store.upsertRowsStream(
          daily,
          'date',
          batches([corrected, fresh]),
          run,
          undefined,
          {
            naturalKey: fields,
          },
        );
        assert.deepEqual([again.rowsInserted, again.rowsReplaced], [0, 0]);
        assert.equal((await store.datasetSource(daily))?.rows, 7);
        // A batch that throws leaves the dataset as it was.
        async function* failing() {
          yield keyedOf([{ ...fresh, date: '2026-03-01' }]);
          throw new Error('line 9: broken');
        }
        await assert.rejects(store.upsertRowsStream(daily, 'date', failing(), run), /line 9/);
        assert.equal((await store.datasetSource(daily))?.rows, 7);
      });

      test('a file that names one key twice loads its last row once', async () => {
        const other = `test/dup-${unique()}`;
        const twice = [
          ...keyed(rows.slice(0, 2)),
          { key: keyed(rows.slice(0, 1))[0]?.key as string, row: { ...rows[0], close: 7 } },
        ];
        const result = await store.upsertRows(other, 'date', twice, run('dup.csv', T0));
        assert.deepEqual([result.rowsInserted, result.rowsReplaced], [2, 0]);
        const stored = (
          await store.queryRows({
            dataset: other,
            filters: { symbol: ['AAPL'] },
            descending: false,
            limit: 10,
          })
        ).rows;
        assert.deepEqual(
          stored.map((r) => JSON.parse(r.json).close),
          [7],
        );
      });
    });
  });
}
