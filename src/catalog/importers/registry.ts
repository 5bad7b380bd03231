/** Every named importer, found by `--format` name or recognised from a file's first bytes. */
import { ImportError } from '../import-file.ts';
import { cftcLegacyFutures } from './cftc-legacy-futures.ts';
import { edgar13f } from './edgar-13f.ts';
import { edgarCompanyfacts } from './edgar-companyfacts.ts';
import { edgarForm4 } from './edgar-form4.ts';
import { edgarSubmissions } from './edgar-submissions.ts';
import { fedMeetingDates } from './fed-meeting-dates.ts';
import { fredSeries } from './fred-series.ts';
import type { Importer } from './importer.ts';
import { openflightsAirports } from './openflights-airports.ts';

export const importers: readonly Importer[] = [
  cftcLegacyFutures,
  fredSeries,
  fedMeetingDates,
  openflightsAirports,
  edgarSubmissions,
  edgarForm4,
  edgarCompanyfacts,
  edgar13f,
];

/** How much of a file detection looks at. */
export const DETECT_BYTES = 64 * 1024;

export function importerNamed(name: string): Importer | undefined {
  return importers.find((importer) => importer.name === name);
}

/** The one importer whose format the file shows; none or several is a refusal that says which. */
export function detectImporter(head: string, fileName: string): Importer {
  const found = importers.filter((importer) => importer.detect(head, fileName));
  if (found.length === 1) return found[0] as Importer;
  const names = importers.map((i) => i.name).join(', ');
  if (found.length === 0)
    throw new ImportError(`Cannot tell the format of ${fileName}: pass --format <name> (${names}).`, []);
  throw new ImportError(
    `${fileName} looks like more than one format (${found.map((i) => i.name).join(', ')}): pass --format <name>.`,
    [],
  );
}
