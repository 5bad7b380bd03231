/** An operator's import of rows into a dataset: upsert, merge and replace, over an in-memory SQLite store. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Row } from '../../src/catalog/types.ts';
import { importRows } from '../../src/domain/operator-imports.ts';
import { catalog, operatorOverSqlite } from '../helpers/operator-store.ts';

const row = (date: string, series: string, value: number): Row => ({
  date,
  series,
  value,
  open_interest_all: null,
});

async function stored(datasets: Awaited<ReturnType<typeof operatorOverSqlite>>['store']) {
  const { rows } = await datasets.queryRows({
    dataset: 'macro/rates',
    filters: {},
    descending: false,
    limit: 100,
  });
  return rows.map((r) => JSON.parse(r.json) as Row);
}

async function* batches(...list: Row[][]): AsyncGenerator<readonly Row[]> {
  for (const batch of list) yield batch;
}

test('upsert replaces a row with the same entity and time, adds the others, and records the import', async () => {
  const clock = { now: Date.parse('2026-11-28T12:00:00Z') };
  const { store } = await operatorOverSqlite(clock);
  const deps = { datasets: store, catalog, now: () => clock.now };
  const first = await importRows(deps, 'macro/rates', [row('2024-01-02', 'A', 1), row('2024-01-02', 'B', 2)]);
  assert.deepEqual(
    { ...first, importId: typeof first.importId },
    {
      dataset: 'macro/rates',
      rows: 2,
      kept: 0,
      read: 2,
      inserted: 2,
      replaced: 0,
      importId: 'number',
    },
  );
  const file = { name: 'rates.csv', sha256: 'ab', format: 'csv' };
  const second = await importRows(
    deps,
    'macro/rates',
    batches([row('2024-01-02', 'A', 9)], [row('2024-01-03', 'A', 3)]),
    {
      file,
    },
  );
  assert.equal(second.read, 2);
  assert.equal(second.inserted, 1);
  assert.equal(second.replaced, 1);
  assert.equal(second.rows, 3);
  assert.notEqual(second.importId, first.importId);
  assert.deepEqual((await stored(store)).map((r) => [r.date, r.series, r.value]).sort(), [
    ['2024-01-02', 'A', 9],
    ['2024-01-02', 'B', 2],
    ['2024-01-03', 'A', 3],
  ]);
  await store.close();
});

test('merge keeps the stored series the new rows do not cover; replace makes the rows the whole dataset', async () => {
  const clock = { now: Date.parse('2026-11-28T12:00:00Z') };
  const { store } = await operatorOverSqlite(clock);
  const deps = { datasets: store, catalog, now: () => clock.now };
  await importRows(deps, 'macro/rates', [row('2024-01-02', 'A', 1), row('2024-01-02', 'B', 2)], {
    mode: 'replace',
  });
  const merged = await importRows(deps, 'macro/rates', batches([row('2024-01-05', 'A', 5)]), { merge: true });
  assert.deepEqual(merged, { dataset: 'macro/rates', rows: 2, kept: 1 });
  assert.deepEqual((await stored(store)).map((r) => [r.date, r.series, r.value]).sort(), [
    ['2024-01-02', 'B', 2],
    ['2024-01-05', 'A', 5],
  ]);
  const replaced = await importRows(deps, 'macro/rates', batches([row('2024-02-01', 'C', 7)], []), {
    mode: 'replace',
  });
  assert.deepEqual(replaced, { dataset: 'macro/rates', rows: 1, kept: 0 });
  assert.deepEqual(
    (await stored(store)).map((r) => r.series),
    ['C'],
  );
  await store.close();
});

test('an unknown dataset is refused with suggestions, before anything is read', async () => {
  const { store } = await operatorOverSqlite({ now: 0 });
  let read = false;
  async function* never(): AsyncGenerator<readonly Row[]> {
    read = true;
    yield [];
  }
  await assert.rejects(importRows({ datasets: store, catalog, now: () => 0 }, 'macro/ratez', never()), {
    code: 'dataset_not_found',
    message: 'No dataset "macro/ratez".',
    extras: { suggestions: ['macro/rates'] },
  });
  assert.equal(read, false);
  await store.close();
});
