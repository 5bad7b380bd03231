/**
 * Imports of published files through the named importers (catalog/importers/): the file is read and
 * every record checked before anything is written, then its rows are loaded by natural key in one
 * transaction with the record of the run (source, file, SHA-256, licence, attribution).
 */
import { createHash } from 'node:crypto';
import type { Catalog } from '../catalog/catalog.ts';
import { ImportError } from '../catalog/import-file.ts';
import {
  convertRecords,
  type Importer,
  type Rejected,
  rejectionError,
} from '../catalog/importers/importer.ts';
import { DETECT_BYTES, detectImporter, importerNamed, importers } from '../catalog/importers/registry.ts';
import { AppError } from '../errors.ts';
import type { Datasets, ImportRun } from '../store/port.ts';

export interface ImportFileInput {
  bytes: Uint8Array;
  /** The file's base name: detection and EDGAR accession numbers look at it. */
  fileName: string;
  /** An importer's name; detected from the file when absent. */
  format?: string;
  /** A dataset key (or alias) among the importer's targets; its first target when absent. */
  dataset?: string;
  set?: Readonly<Record<string, string>>;
  /** Load the valid records and list the others, instead of refusing the file. */
  partial?: boolean;
  dryRun?: boolean;
}

export interface ImportSummary {
  dataset: string;
  format: string;
  fileName: string;
  sha256: string;
  read: number;
  /** Rows new to the dataset (or that would be, on a dry run: every valid row). */
  imported: number;
  replaced: number;
  rejected: number;
  /** Records whose natural key a later record of the same file repeats: the later one is loaded. */
  duplicates: number;
  /** The first rejected records, by line or XML path. */
  rejections: Rejected[];
  /** The recorded run; null on a dry run. */
  run: ImportRun | null;
}

export interface ImportDeps {
  datasets: Datasets;
  catalog: Catalog;
  now: () => number;
  /** Told of each dataset an import changed, so cached facts about it are dropped at once. */
  onImported?: (dataset: string) => void;
}

const LISTED_REJECTIONS = 20;

/** The file as UTF-8; a byte sequence that is not names its line rather than turning into U+FFFD. */
export function decodeUtf8(bytes: Uint8Array, fileName: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    let line = 1;
    let start = 0;
    for (let i = 0; i <= bytes.length; i++) {
      if (i === bytes.length || bytes[i] === 0x0a) {
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(start, i));
        } catch {
          break;
        }
        line++;
        start = i + 1;
      }
    }
    throw new ImportError(`${fileName} is not UTF-8 text; nothing was imported.`, [
      `line ${line}: bytes that are not UTF-8 (convert the file first, e.g. iconv -f latin1 -t utf-8)`,
    ]);
  }
}

export class DataImports {
  readonly #deps: ImportDeps;

  constructor(deps: ImportDeps) {
    this.#deps = deps;
  }

  /** The importers, for `tmd import --help` and the docs. */
  get formats(): readonly Importer[] {
    return importers;
  }

  #importer(input: ImportFileInput, text: string): Importer {
    if (input.format === undefined) return detectImporter(text.slice(0, DETECT_BYTES), input.fileName);
    const importer = importerNamed(input.format);
    if (!importer)
      throw new AppError(
        'invalid_request',
        `No importer "${input.format}" (formats: ${importers.map((i) => i.name).join(', ')}).`,
      );
    return importer;
  }

  async importFile(input: ImportFileInput): Promise<ImportSummary> {
    const { catalog, datasets, now } = this.#deps;
    const text = decodeUtf8(input.bytes, input.fileName);
    const importer = this.#importer(input, text);
    const targetKeys = importer.targets.map((t) => t.dataset);
    const entry = catalog.resolve(input.dataset ?? (targetKeys[0] as string));
    const target = importer.targets.find((t) => t.dataset === entry?.dataset.key);
    if (!entry || !target) {
      const aliases = targetKeys.flatMap((key) => {
        const d = catalog.resolve(key)?.dataset;
        return d ? [d.key, ...d.aliases] : [key];
      });
      throw new AppError(
        'invalid_request',
        `${importer.name} imports into ${aliases.join(', ')}; not into "${input.dataset}".`,
      );
    }
    const sha256 = createHash('sha256').update(input.bytes).digest('hex');
    const at = now();
    const context = {
      dataset: entry.dataset,
      fileName: input.fileName,
      sha256,
      set: input.set ?? {},
      now: at,
    };
    const converted = convertRecords(importer.records(text, context), target, context);
    if (converted.rejected.length > 0 && !input.partial)
      throw rejectionError(converted.rejected, converted.read);
    if (converted.rows.length === 0)
      throw new ImportError(
        `${input.fileName} holds no valid ${importer.name} records; nothing was imported.`,
        [],
      );
    const summary = {
      dataset: entry.dataset.key,
      format: importer.name,
      fileName: input.fileName,
      sha256,
      read: converted.read,
      rejected: converted.rejected.length,
      duplicates: converted.rows.length - new Set(converted.rows.map((r) => r.key)).size,
      rejections: converted.rejected.slice(0, LISTED_REJECTIONS),
    };
    if (input.dryRun)
      return { ...summary, imported: converted.rows.length - summary.duplicates, replaced: 0, run: null };
    const run = await datasets.upsertRows(
      entry.dataset.key,
      entry.dataset.time_field,
      converted.rows,
      {
        importer: importer.name,
        sourceName: importer.source,
        fileName: input.fileName,
        sha256,
        licence: importer.licence,
        attribution: importer.attribution,
        importedAt: at,
        rowsRead: converted.read,
        rowsRejected: converted.rejected.length,
      },
      entry.columns,
    );
    this.#deps.onImported?.(entry.dataset.key);
    return { ...summary, imported: run.rowsInserted, replaced: run.rowsReplaced, run };
  }

  /** Import runs, newest first: of one dataset (a key or alias), or of every dataset. */
  async runs(datasetKey: string | undefined, limit = 100): Promise<ImportRun[]> {
    const dataset =
      datasetKey === undefined ? undefined : this.#deps.catalog.resolve(datasetKey)?.dataset.key;
    if (datasetKey !== undefined && dataset === undefined)
      throw new AppError('dataset_not_found', `No dataset "${datasetKey}".`);
    return this.#deps.datasets.listImportRuns(dataset === undefined ? {} : { dataset }, limit);
  }
}
