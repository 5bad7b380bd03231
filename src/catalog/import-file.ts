/**
 * Real rows for a dataset from an operator's file (CSV, NDJSON or JSON), checked against the dataset's
 * declared fields and types. Nothing is loaded unless every row is valid; each problem names its line.
 *
 * Columns reach fields in this order: `--set field=value` (a constant), `--map field=Column`, then the
 * column-name convention: a column whose header, lower-cased with every run of other characters turned
 * into `_`, equals the field name ("Open Interest (All)" -> open_interest_all, "DATE" -> date).
 */

import { describeSources, resolveSources, rowOf } from './import/fields.ts';
import type { ImportOptions, ParsedImport } from './import/options.ts';
import { ImportError, Problems } from './import/problems.ts';
import { readRecords } from './import/records.ts';
import type { DatasetDef, Row } from './types.ts';

export { convertCell } from './import/cells.ts';
export { csvRecords } from './import/csv-reader.ts';
export {
  CsvRowStream,
  type CsvStreamOptions,
  IMPORT_BATCH_ROWS,
  type ImportProgress,
} from './import/csv-stream.ts';
export { type ImportFormat, type ImportOptions, importFormats, type ParsedImport } from './import/options.ts';
export { ImportError } from './import/problems.ts';
export { normalizeColumnName } from './import/records.ts';

export function parseImport(dataset: DatasetDef, text: string, options: ImportOptions): ParsedImport {
  const nullTokens = new Set(options.nullTokens ?? []);
  const { columns, records } = readRecords(text, options.format);
  const sources = resolveSources(dataset, columns, options, nullTokens);
  if (records.length === 0) throw new ImportError('The file holds no rows.', []);

  const problems = new Problems();
  const rows: Row[] = [];
  for (const record of records) {
    rows.push(
      rowOf(
        dataset,
        sources,
        nullTokens,
        () => record.where,
        (source) => record.values.get(source.column),
        problems,
      ),
    );
  }
  problems.throwIfAny();
  return { rows, ...describeSources(sources, columns) };
}

/** A field -> column mapping file: a JSON object of strings. */
export function parseMapFile(text: string, path: string): Record<string, string> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ImportError(`The mapping file ${path} is not valid JSON.`, [(error as Error).message]);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ImportError(`The mapping file ${path} must be a JSON object of field -> column.`, []);
  }
  const out: Record<string, string> = {};
  const problems: string[] = [];
  for (const [field, column] of Object.entries(value)) {
    if (field.startsWith('$')) continue;
    if (typeof column !== 'string') problems.push(`"${field}": the column must be a string`);
    else out[field] = column;
  }
  if (problems.length > 0) throw new ImportError(`The mapping file ${path} is invalid.`, problems);
  return out;
}
