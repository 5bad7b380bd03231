/** CSV output (RFC 4180), safe against spreadsheet formula injection. */
import type { Row, Scalar } from './types.ts';

const formulaStart = /^[=+\-@\t\r]/;

export function csvCell(value: Scalar | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  // A text cell that a spreadsheet would run as a formula is prefixed with a quote (OWASP CSV injection).
  const text = formulaStart.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: readonly (Scalar | undefined)[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/**
 * A row's CSV cells over `columns`, without a line end: what a CSV answer shows for the row (a column
 * the row lacks is empty). Rendered once when rows are loaded, so a CSV read joins stored lines.
 */
export function csvRecord(row: Row, columns: readonly string[]): string {
  let line = '';
  for (let i = 0; i < columns.length; i++) {
    const cell = csvCell(row[columns[i] as string]);
    line = i === 0 ? cell : `${line},${cell}`;
  }
  return line;
}

/**
 * A row's JSON (exactly as JSON.stringify writes it) and its CSV record over `columns`, in one pass that
 * writes each number once, when the row's fields are `columns` in order (every row a file import
 * makes); otherwise the two written apart. What a load stores for each row.
 */
let keysFor: readonly string[] | null = null;
let jsonKeys: string[] = [];

/** `{"a":`, `,"b":`, ...: the columns as the JSON of a row writes them (kept for the last columns). */
function jsonKeysOf(columns: readonly string[]): string[] {
  if (keysFor !== columns) {
    jsonKeys = columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c)}:`);
    keysFor = columns;
  }
  return jsonKeys;
}

export function rowTexts(row: Row, columns: readonly string[]): { json: string; csv: string } {
  const keys = jsonKeysOf(columns);
  let json = '';
  let csv = '';
  let i = 0;
  for (const key in row) {
    if (key !== columns[i]) return { json: JSON.stringify(row), csv: csvRecord(row, columns) };
    const value = row[key];
    let jsonValue: string;
    let cell: string;
    if (typeof value === 'number') {
      cell = String(value);
      jsonValue = Number.isFinite(value) ? cell : 'null';
    } else if (typeof value === 'string') {
      jsonValue = JSON.stringify(value);
      cell = csvCell(value);
    } else if (value === null) {
      jsonValue = 'null';
      cell = '';
    } else if (typeof value === 'boolean') {
      jsonValue = cell = value ? 'true' : 'false';
    } else {
      return { json: JSON.stringify(row), csv: csvRecord(row, columns) };
    }
    json = `${json}${keys[i]}${jsonValue}`;
    csv = i === 0 ? cell : `${csv},${cell}`;
    i++;
  }
  if (i !== columns.length) return { json: JSON.stringify(row), csv: csvRecord(row, columns) };
  return { json: i === 0 ? '{}' : `${json}}`, csv };
}

/**
 * The key under which a dataset's stored CSV lines were rendered: a read that wants other columns (a
 * projection, or a catalog that has changed since the load) gets no stored line and renders its own.
 */
export function csvColumnsKey(columns: readonly string[]): string {
  return JSON.stringify(columns);
}
