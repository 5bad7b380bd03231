/**
 * A file's records before they are typed: CSV lines under a header, NDJSON lines, or a JSON array's
 * objects, each with the line (or record number) it came from.
 */
import { csvRecords } from './csv-reader.ts';
import type { ImportFormat } from './options.ts';
import { ImportError, MAX_PROBLEMS } from './problems.ts';

export interface SourceRecord {
  /** "line 17" for CSV and NDJSON, "record 3" for a JSON array. */
  where: string;
  values: Map<string, unknown>;
}

export function normalizeColumnName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** A CSV header's empty and repeated column names. */
export function headerProblems(columns: readonly string[], line: number): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const column of columns) {
    if (column === '') problems.push(`line ${line}: the header has an empty column name`);
    else if (seen.has(column)) problems.push(`line ${line}: the header names "${column}" twice`);
    seen.add(column);
  }
  return problems;
}

function readCsv(text: string): { columns: string[]; records: SourceRecord[] } {
  const records: SourceRecord[] = [];
  let columns: string[] | null = null;
  const problems: string[] = [];
  for (const { line, cells } of csvRecords(text)) {
    if (columns === null) {
      columns = cells.map((c) => c.trim());
      problems.push(...headerProblems(columns, line));
      continue;
    }
    if (cells.length !== columns.length) {
      if (problems.length < MAX_PROBLEMS)
        problems.push(`line ${line}: ${cells.length} cells, but the header has ${columns.length} columns`);
      continue;
    }
    const values = new Map<string, unknown>();
    columns.forEach((column, index) => {
      values.set(column, cells[index]);
    });
    records.push({ where: `line ${line}`, values });
  }
  if (problems.length > 0) throw new ImportError('The CSV file is malformed.', problems);
  if (columns === null) throw new ImportError('The file is empty: no header row.', []);
  return { columns, records };
}

function recordOf(value: unknown, where: string, problems: string[]): SourceRecord | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    problems.push(`${where}: not a JSON object`);
    return null;
  }
  return { where, values: new Map(Object.entries(value)) };
}

function readNdjson(text: string): SourceRecord[] {
  const records: SourceRecord[] = [];
  const problems: string[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || problems.length >= MAX_PROBLEMS) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      problems.push(`line ${index + 1}: not valid JSON`);
      return;
    }
    const record = recordOf(value, `line ${index + 1}`, problems);
    if (record) records.push(record);
  });
  if (problems.length > 0) throw new ImportError('The NDJSON file is malformed.', problems);
  return records;
}

function readJson(text: string): SourceRecord[] {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ImportError('The JSON file is malformed.', [(error as Error).message]);
  }
  // Accepts a bare array, or the service's own read envelope {"data": [...]}.
  const list = Array.isArray(value) ? value : (value as { data?: unknown } | null)?.data;
  if (!Array.isArray(list)) {
    throw new ImportError('The JSON file must hold an array of objects, or {"data": [...]}.', []);
  }
  const problems: string[] = [];
  const records: SourceRecord[] = [];
  list.forEach((item, index) => {
    if (problems.length >= MAX_PROBLEMS) return;
    const record = recordOf(item, `record ${index + 1}`, problems);
    if (record) records.push(record);
  });
  if (problems.length > 0) throw new ImportError('The JSON file is malformed.', problems);
  return records;
}

export function readRecords(
  text: string,
  format: ImportFormat,
): { columns: string[]; records: SourceRecord[] } {
  if (format === 'csv') return readCsv(text);
  const records = format === 'ndjson' ? readNdjson(text) : readJson(text);
  const columns = new Set<string>();
  for (const record of records) for (const key of record.values.keys()) columns.add(key);
  return { columns: [...columns], records };
}
