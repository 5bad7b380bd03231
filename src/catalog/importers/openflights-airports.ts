/**
 * OpenFlights airports.dat: CSV without a header, `\N` for null, one airport a line. The column order
 * is in config/import-maps/openflights-airports.json; older files stop after the time zone.
 */
import airportMap from '../../../config/import-maps/openflights-airports.json' with { type: 'json' };
import { csvRecords } from '../import-file.ts';
import type { ImportContext, Importer, SourceRecord } from './importer.ts';

const columns: readonly string[] = airportMap.columns;
/** The files before the 2017 release have no type and source columns. */
const OLDEST_COLUMNS = 12;

function* records(text: string, context: ImportContext): Generator<SourceRecord> {
  // Airports are a snapshot: unless the operator names the release, it is the day of the import.
  const releaseDate = new Date(context.now).toISOString().slice(0, 10);
  for (const { line, cells } of csvRecords(text)) {
    const where = `line ${line}`;
    if (cells.length < OLDEST_COLUMNS || cells.length > columns.length) {
      yield {
        where,
        values: {},
        problem: `${cells.length} cells, but an airports.dat line has ${OLDEST_COLUMNS} to ${columns.length}`,
      };
      continue;
    }
    const values: Record<string, unknown> = { release_date: context.set.release_date ?? releaseDate };
    columns.forEach((field, i) => {
      const cell = cells[i];
      values[field] = cell === undefined || cell.trim() === airportMap.null ? null : cell;
    });
    yield { where, values };
  }
}

export const openflightsAirports: Importer = {
  name: 'openflights-airports',
  title: 'OpenFlights airports.dat (no header, \\N for null)',
  source: 'OpenFlights airport database (sourced from OurAirports)',
  licence: 'Open Database License (ODbL) 1.0',
  attribution:
    'Airport data © OpenFlights.org contributors, available under the Open Database License (ODbL)',
  targets: [{ dataset: 'open-data/openflights-airports', naturalKey: ['airport_id'] }],
  detect: (head, fileName) =>
    /airports.*\.dat$/i.test(fileName) ||
    /^\d+,"[^"]*","[^"]*","[^"]*","[A-Z0-9]{3}"|^\d+,"[^"]*","[^"]*","[^"]*",\\N,/.test(head),
  records,
};
