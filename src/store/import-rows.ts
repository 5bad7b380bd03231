/** Import runs as both SQL adapters read them back. */
import type { ImportOutcome, ImportRun, NewImportRun } from './import-port.ts';
import { type DbRow, num, optNum, optStr, str } from './rows.ts';

export function importRunFrom(r: DbRow): ImportRun {
  return {
    id: num(r.id),
    dataset: str(r.dataset),
    importer: str(r.importer),
    sourceName: str(r.source_name),
    fileName: str(r.file_name),
    sha256: str(r.sha256),
    licence: str(r.licence),
    attribution: optStr(r.attribution),
    importedAt: num(r.imported_at),
    rowsRead: num(r.rows_read),
    rowsInserted: num(r.rows_inserted),
    rowsReplaced: num(r.rows_replaced),
    rowsRejected: num(r.rows_rejected),
    firstT: optStr(r.first_t),
    lastT: optStr(r.last_t),
    outcome: str(r.outcome ?? 'swapped') as ImportOutcome,
    swappedAt: optNum(r.swapped_at),
    error: optStr(r.error),
  };
}

/** The columns a new run is written with (it starts `loading`, counted at its swap), and its values in order. */
export const NEW_RUN_COLUMNS =
  'dataset, importer, source_name, file_name, sha256, licence, attribution, imported_at, rows_read, rows_rejected, outcome';

export function newRunValues(dataset: string, run: NewImportRun): (string | number | null)[] {
  return [
    dataset,
    run.importer,
    run.sourceName,
    run.fileName,
    run.sha256,
    run.licence,
    run.attribution,
    run.importedAt,
    run.rowsRead,
    run.rowsRejected,
    'loading',
  ];
}
