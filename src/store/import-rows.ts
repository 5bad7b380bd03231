/** Import runs as both SQL adapters read them back. */
import type { ImportOutcome, ImportRun } from './import-port.ts';
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
