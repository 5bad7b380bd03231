/** The options and the result of parsing a whole import file (see import-file.ts). */
import type { Row } from '../types.ts';

export const importFormats = ['csv', 'ndjson', 'json'] as const;
export type ImportFormat = (typeof importFormats)[number];

export interface ImportOptions {
  format: ImportFormat;
  /** Field name -> source column (CSV header or JSON key). */
  map?: Readonly<Record<string, string>>;
  /** Field name -> a constant for every row, written as a cell would be. */
  set?: Readonly<Record<string, string>>;
  /** Cell texts that mean "no value", besides the empty cell (FRED writes "."). */
  nullTokens?: readonly string[];
}

export interface ParsedImport {
  rows: Row[];
  /** Where each field came from: `column "X"`, `set "v"`, or null when it is empty in every row. */
  sources: Record<string, string | null>;
  /** Columns of the file that no field took. */
  ignoredColumns: string[];
}
