/** CSV output (RFC 4180), safe against spreadsheet formula injection. */
import type { Scalar } from '../catalog/types.ts';

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
