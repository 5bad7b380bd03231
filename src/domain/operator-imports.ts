/**
 * An operator's generic import of real rows into a dataset (`Operator.importRows`): upsert, merge or
 * replace, given whole or in batches as a file is parsed.
 */
import type { Catalog, CatalogEntry } from '../catalog/catalog.ts';
import type { Row } from '../catalog/types.ts';
import { AppError } from '../errors.ts';
import { generatedKey, type KeyedRow, type NewImportRun } from '../store/import-port.ts';
import type { Datasets } from '../store/port.ts';

/** How a generic import meets the rows already there (`Operator.importRows`). */
export type ImportMode = 'upsert' | 'merge' | 'replace';

/** The file a generic import read, for its provenance record. */
export interface ImportedFile {
  name: string;
  sha256: string;
  /** csv, ndjson or json. */
  format: string;
}

export interface ImportedRows {
  dataset: string;
  /** Rows the dataset holds now. */
  rows: number;
  /** With merge: stored rows kept beside the new ones. */
  kept: number;
  /** With upsert: rows read, rows added, stored rows replaced, and the import's record. */
  read?: number;
  inserted?: number;
  replaced?: number;
  importId?: number;
}

/** What an import needs: the catalog to find the dataset, the rows' store, the clock. */
export interface ImportDeps {
  datasets: Datasets;
  catalog: Catalog;
  now: () => number;
}

/**
 * Loads real rows into a dataset, given whole or in batches as a file is parsed (loaded as they come,
 * in one transaction: a batch that throws leaves the dataset as it was). Sample rows are never kept
 * next to real ones. `mode`:
 * - `upsert` (the default): a row replaces the stored row with the same entity values and time, the
 *   others are added; a daily file appends, and nothing else is touched. The import is recorded (its
 *   file, SHA-256, counts) as the named importers' are.
 * - `merge`: rows already imported for entities the new rows do not cover are kept, the entities the
 *   new rows cover are replaced whole (one FRED series at a time into a multi-series dataset).
 * - `replace`: the new rows are the whole dataset.
 */
export async function importRows(
  deps: ImportDeps,
  datasetKey: string,
  given: readonly Row[] | AsyncIterable<readonly Row[]>,
  options: { mode?: ImportMode; merge?: boolean; file?: ImportedFile } = {},
): Promise<ImportedRows> {
  const { catalog } = deps;
  const entry = catalog.resolve(datasetKey);
  if (!entry)
    throw new AppError('dataset_not_found', `No dataset "${datasetKey}".`, {
      suggestions: catalog.suggest(datasetKey),
    });
  const mode = options.mode ?? (options.merge ? 'merge' : 'upsert');
  if (mode === 'upsert') return upsert(deps, entry, given, options.file);
  let rows: readonly Row[];
  if (Symbol.asyncIterator in given) {
    if (mode === 'replace') return importStream(deps, entry, given, options.file);
    // A merge keeps the stored rows of the entities the file does not cover, so it must see the
    // whole file first: it holds the file's rows (one series at a time, small).
    const all: Row[] = [];
    for await (const batch of given) for (const row of batch) all.push(row);
    rows = all;
  } else {
    rows = given;
  }
  // A merge keeps the stored rows of the other series: read, then load only if no other load came
  // in between (two merges at once would otherwise lose one's series). Tried again a few times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await importOnce(deps, entry, rows, { merge: mode === 'merge' });
    } catch (error) {
      if (!(mode === 'merge' && error instanceof AppError && error.code === 'conflict') || attempt >= 5)
        throw error;
    }
  }
}

async function upsert(
  deps: ImportDeps,
  entry: CatalogEntry,
  given: readonly Row[] | AsyncIterable<readonly Row[]>,
  file: ImportedFile | undefined,
): Promise<ImportedRows> {
  const { dataset } = entry;
  const naturalKey = [...dataset.entity_fields, dataset.time_field];
  let read = 0;
  async function* keyed(): AsyncGenerator<readonly KeyedRow[]> {
    const batches = Symbol.asyncIterator in given ? given : [given];
    for await (const batch of batches) {
      read += batch.length;
      yield batch.map((row) => ({ key: generatedKey(row, naturalKey), row }));
    }
  }
  const run = await deps.datasets.upsertRowsStream(
    dataset.key,
    dataset.time_field,
    keyed(),
    importRun(deps, entry, file),
    entry.columns,
    { naturalKey },
  );
  const span = await deps.datasets.datasetSource(dataset.key);
  return {
    dataset: dataset.key,
    rows: span?.rows ?? 0,
    kept: 0,
    read,
    inserted: run.rowsInserted,
    replaced: run.rowsReplaced,
    importId: run.id,
  };
}

/** The provenance record of a generic import: the file as given, the dataset's publisher. */
function importRun(deps: ImportDeps, entry: CatalogEntry, file: ImportedFile | undefined): NewImportRun {
  return {
    importer: file?.format ?? 'rows',
    sourceName: entry.dataset.source,
    fileName: file?.name ?? '',
    sha256: file?.sha256 ?? '',
    licence: 'As published by the source (generic import)',
    attribution: null,
    importedAt: deps.now(),
    rowsRead: 0,
    rowsRejected: 0,
  };
}

async function importStream(
  deps: ImportDeps,
  entry: CatalogEntry,
  batches: AsyncIterable<readonly Row[]>,
  file: ImportedFile | undefined,
): Promise<ImportedRows> {
  let count = 0;
  async function* counted() {
    for await (const batch of batches) {
      count += batch.length;
      yield batch;
    }
  }
  const { dataset } = entry;
  await deps.datasets.loadRowsStream(dataset.key, dataset.time_field, counted(), 'import', entry.columns, {
    run: importRun(deps, entry, file),
  });
  return { dataset: dataset.key, rows: count, kept: 0 };
}

async function importOnce(
  deps: ImportDeps,
  entry: CatalogEntry,
  rows: readonly Row[],
  options: { merge?: boolean },
): Promise<ImportedRows> {
  const { datasets: store } = deps;
  const dataset = entry.dataset;
  const kept: Row[] = [];
  const before = options.merge ? await store.datasetSource(dataset.key) : null;
  if (before?.source === 'import') {
    const tuple = (row: Row) => JSON.stringify(dataset.entity_fields.map((f) => row[f] ?? null));
    const incoming = new Set(rows.map(tuple));
    let after: { t: string; id: number } | undefined;
    for (;;) {
      const { rows: page } = await store.queryRows({
        dataset: dataset.key,
        filters: {},
        descending: false,
        limit: 1000,
        ...(after ? { after } : {}),
      });
      for (const stored of page) {
        const row = JSON.parse(stored.json) as Row;
        if (!incoming.has(tuple(row))) kept.push(row);
      }
      const last = page.at(-1);
      if (!last || page.length < 1000) break;
      after = { t: last.t, id: last.id };
    }
  }
  const all = kept.length > 0 ? [...kept, ...rows] : rows;
  await store.loadRows(
    dataset.key,
    dataset.time_field,
    all,
    'import',
    entry.columns,
    before ? { ifLoadedAt: before.loadedAt } : {},
  );
  return { dataset: dataset.key, rows: all.length, kept: kept.length };
}
