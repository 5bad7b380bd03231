/** An Operator over an in-memory SQLite store, the shipped config and a one-dataset catalog. */
import type { Catalog, CatalogEntry } from '../../src/catalog/catalog.ts';
import { loadServiceFile } from '../../src/config.ts';
import type { Credentials } from '../../src/domain/credentials.ts';
import { Operator } from '../../src/domain/operator.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { rates } from './import-dataset.ts';

export const ratesEntry = {
  key: rates.key,
  domain: 'macro',
  name: 'rates',
  dataset: rates,
  listCost: 1,
  p0: false,
  columns: rates.fields.map((f) => f.name),
  csvColumns: rates.fields.map((f) => f.name).join(','),
} as CatalogEntry;

export const catalog = {
  resolve: (key: string) => (key === rates.key ? ratesEntry : null),
  suggest: (key: string) => (key.startsWith('macro/') ? [rates.key] : []),
} as unknown as Catalog;

export async function operatorOverSqlite(clock: { now: number }, credentials: Partial<Credentials> = {}) {
  const store = new SqliteStore(':memory:');
  await store.migrate();
  await store.syncLayouts(new Map([[rates.key, rates.entity_fields]]));
  const config = loadServiceFile('config/service.json');
  const operator = new Operator({
    store,
    datasets: store,
    config,
    catalog,
    credentials: credentials as Credentials,
    now: () => clock.now,
  });
  return { operator, store, config };
}
