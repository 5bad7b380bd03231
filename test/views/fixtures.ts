/** What the view tests present: one finished import of `equities/prices`, with the fields a test changes. */
import type { ImportRun } from '../../src/store/import-port.ts';

export function importRun(overrides: Partial<ImportRun> = {}): ImportRun {
  return {
    id: 4,
    dataset: 'equities/prices',
    importer: 'generic',
    sourceName: 'Example Exchange',
    fileName: 'prices.csv',
    sha256: 'ab'.repeat(32),
    licence: 'CC-BY-4.0',
    attribution: 'Example Exchange',
    importedAt: Date.parse('2026-11-21T15:00:00Z'),
    rowsRead: 11,
    rowsInserted: 9,
    rowsReplaced: 1,
    rowsRejected: 1,
    firstT: '2026-01-01',
    lastT: '2026-01-05',
    outcome: 'swapped',
    swappedAt: Date.parse('2026-11-21T15:00:00Z') + 5,
    error: null,
    ...overrides,
  };
}
