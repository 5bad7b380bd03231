/** The stores the composition root opens: the ledger's, the rows', a replica, operators' tables. */
import type { DatasetDef } from '../catalog/types.ts';
import { ConfigError, type Env, type ServiceFile } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { ProcessLog } from '../services.ts';
import { withKeyCache } from '../store/key-cache.ts';
import type { Datasets, Store } from '../store/port.ts';
import type { StoreHealth } from '../store/postgres/postgres-store.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';

/** What the composition root was given: the environment, and stores a test may hand in. */
interface StoreOptions {
  env: Env;
  store?: Store;
  datasetStore?: Datasets;
  environ?: NodeJS.ProcessEnv;
}

export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//.test(url);

/**
 * PostgreSQL outages in the log (one warning when it cannot be reached, one line when it answers again)
 * and in the metrics (a gauge while it cannot be reached, a counter of every statement refused with 503,
 * which also counts a database that answers but refuses: timeouts, a full pool, a read-only standby).
 */
function storeHealth(metrics: Metrics, log: ProcessLog): StoreHealth {
  const down = metrics.gauge(
    'tmd_store_unreachable',
    '1 while the PostgreSQL database cannot be reached (no statement answered since a connection failed)',
  );
  const refused = metrics.counter(
    'tmd_store_unavailable_total',
    'Statements refused with 503 because PostgreSQL could not serve them (unreachable, timed out, no free connection, read-only)',
  );
  down(0);
  return {
    refused: () => refused(),
    unreachable(error) {
      down(1);
      log.warn('PostgreSQL unreachable: requests that need it get 503 service_unavailable', {
        err: error.message,
      });
    },
    reachable() {
      down(0);
      log.info('PostgreSQL reachable again');
    },
  };
}

/** Wraps the rows store so the datasets the operator serves from their own tables are read there. */
async function openExternal(
  inner: Datasets,
  config: ServiceFile,
  datasets: readonly DatasetDef[],
  environ: NodeJS.ProcessEnv,
  closeInner: boolean,
): Promise<Datasets> {
  const { ExternalDatasets } = await import('../store/postgres/external-rows.ts');
  const seen = new Set<string>();
  const declarations = config.external_datasets.map((d) => {
    const where = `external dataset ${d.dataset}`;
    const def = datasets.find((x) => x.key === d.dataset || x.aliases.includes(d.dataset));
    if (!def) throw new ConfigError(`${where}: not a dataset of the catalog`);
    if (seen.has(def.key)) throw new ConfigError(`${where}: declared twice`);
    seen.add(def.key);
    const url = environ[d.url_env];
    if (!url || !isPostgresUrl(url))
      throw new ConfigError(`${where}: ${d.url_env} must hold a postgres:// URL of a read-only role`);
    return {
      dataset: def.key,
      url,
      relation: d.relation,
      idColumn: d.id_column,
      columns: d.columns,
      provenance: d.provenance,
      assumeIndexed: d.assume_indexed,
      fields: def.fields.map((f) => f.name),
      timeField: def.time_field,
      entityFields: def.entity_fields,
    };
  });
  try {
    return await ExternalDatasets.open(inner, declarations, closeInner);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

/**
 * The ledger's store and the rows' store: one database, or the rows in a database of their own, their
 * page queries on a replica of it, and datasets served from the operator's own tables.
 */
export async function openStores(
  options: StoreOptions,
  config: ServiceFile,
  datasets: readonly DatasetDef[],
  metrics: Metrics,
  log: ProcessLog,
  now: () => number,
): Promise<{ store: Store; rowStore: Datasets }> {
  const { env } = options;
  // Declared whichever the store, so a dashboard finds them (at 0 on SQLite).
  const health = storeHealth(metrics, log);
  // The rows may live in a database of their own, their page queries on a replica of it. A
  // DATASETS_DATABASE_URL that names a hot standby (of DATABASE_URL's cluster) is such a replica: rows are
  // loaded into DATABASE_URL and read from the standby.
  let readUrl = env.DATASETS_READ_URL;
  let separate = env.DATASETS_DATABASE_URL !== undefined && env.DATASETS_DATABASE_URL !== env.DATABASE_URL;
  if (separate && isPostgresUrl(env.DATASETS_DATABASE_URL as string)) {
    const { isStandby } = await import('../store/postgres/postgres-store.ts');
    if (await isStandby(env.DATASETS_DATABASE_URL as string)) {
      if (readUrl !== undefined)
        throw new Error('DATASETS_DATABASE_URL names a hot standby: leave DATASETS_READ_URL unset');
      readUrl = env.DATASETS_DATABASE_URL;
      separate = false;
    }
  }
  const rowsUrl = separate ? (env.DATASETS_DATABASE_URL as string) : env.DATABASE_URL;
  if (readUrl !== undefined && !isPostgresUrl(rowsUrl))
    throw new Error(
      'DATASETS_READ_URL needs the datasets on PostgreSQL (DATASETS_DATABASE_URL or DATABASE_URL)',
    );
  const open = async (url: string, pagesUrl: string | undefined): Promise<Store> => {
    if (!isPostgresUrl(url)) return new SqliteStore(url);
    const { PostgresStore } = await import('../store/postgres/postgres-store.ts');
    const postgres = new PostgresStore(url, {
      max: env.DATABASE_POOL_MAX,
      health,
      ...(pagesUrl === undefined ? {} : { readUrl: pagesUrl }),
    });
    metrics.observePool(() => postgres.poolStats());
    return postgres;
  };
  let store = options.store ?? (await open(env.DATABASE_URL, separate ? undefined : readUrl));
  store = withKeyCache(store, env.KEY_CACHE_TTL_MS, now);
  await store.migrate();
  let rowStore: Datasets = options.datasetStore ?? (separate ? await open(rowsUrl, readUrl) : store);
  if (rowStore !== store) await rowStore.migrate();
  if (config.external_datasets.length > 0) {
    try {
      rowStore = await openExternal(
        rowStore,
        config,
        datasets,
        options.environ ?? process.env,
        rowStore !== store,
      );
    } catch (error) {
      await store.close();
      if (rowStore !== store) await rowStore.close();
      throw error;
    }
  }
  // Each dataset's entity fields become its indexed key columns; a changed catalog re-keys its rows here.
  const layouts = new Map(datasets.map((d) => [d.key, d.entity_fields] as const));
  const { rekeyed } = await rowStore.syncLayouts(layouts);
  if (rekeyed.length > 0) log.info('re-keyed datasets for their entity fields', { datasets: rekeyed });
  return { store, rowStore };
}
