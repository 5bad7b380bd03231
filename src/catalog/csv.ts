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
 * The key under which a dataset's stored CSV lines were rendered: a read that wants other columns (a
 * projection, or a catalog that has changed since the load) gets no stored line and renders its own.
 */
export function csvColumnsKey(columns: readonly string[]): string {
  return JSON.stringify(columns);
}
