/** CSV helpers shared by the CSV importers: a header read once, columns found by normalised name. */
import { csvRecords, ImportError, normalizeColumnName } from '../import-file.ts';
import type { SourceRecord } from './importer.ts';

export interface CsvTable {
  header: string[];
  /** Column index by normalised header name ("Open Interest (All)" -> open_interest_all). */
  index: Map<string, number>;
  rows: Generator<{ line: number; cells: string[] }>;
}

export function csvTable(text: string): CsvTable {
  const rows = csvRecords(text);
  const first = rows.next();
  if (first.done) throw new ImportError('The file is empty: no header row.', []);
  const header = first.value.cells.map((c) => c.trim());
  const index = new Map<string, number>();
  header.forEach((name, i) => {
    const key = normalizeColumnName(name);
    if (!index.has(key)) index.set(key, i);
  });
  return { header, index, rows };
}

/** The column of each field, by the map's header names; a column the file lacks refuses the file. */
export function columnsOf(table: CsvTable, map: Readonly<Record<string, string>>): Map<string, number> {
  const out = new Map<string, number>();
  const missing: string[] = [];
  for (const [field, column] of Object.entries(map)) {
    const at = table.index.get(normalizeColumnName(column));
    if (at === undefined) missing.push(`line 1: the header has no column "${column}" (for ${field})`);
    else out.set(field, at);
  }
  if (missing.length > 0) throw new ImportError('The file lacks columns this format has.', missing);
  return out;
}

/** A record for a line whose cell count differs from the header's, so it is rejected, not misread. */
export function cellCountProblem(
  line: number,
  cells: readonly string[],
  expected: number,
): SourceRecord | null {
  return cells.length === expected
    ? null
    : {
        where: `line ${line}`,
        values: {},
        problem: `${cells.length} cells, but the header has ${expected} columns`,
      };
}

/** A map file's field -> column entries (keys starting with `$` are settings, not fields). */
export function fieldColumns(map: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, column] of Object.entries(map)) {
    if (!field.startsWith('$') && typeof column === 'string') out[field] = column;
  }
  return out;
}
