/**
 * The Federal Reserve Board's H.15 Treasury constant-maturity yields, from its Data Download Program
 * (the CMT package, one column per series, six metadata rows first) into `macro/fed-h15-series`, from
 * 30 days before the last stored date (the Board revises recent values). Series are named by their
 * FRED id where config/import-maps/fred-series.json knows the H.15 code; an empty cell is no
 * observation (a holiday), not a row.
 */
import fredMap from '../../../config/import-maps/fred-series.json' with { type: 'json' };
import { csvRecords } from '../import-file.ts';
import type { SourceRecord } from '../importers/importer.ts';
import { addDays, type Chunk, type RunContext, type Source, SourceError } from './source.ts';

/** The Data Download Program's package of the constant-maturity yields (1-month to 30-year). */
const CMT_PACKAGE = 'bf17364827e38702b42a58cf8eaa3f78';
const REVISION_DAYS = 30;
const byCode = new Map(
  Object.entries(fredMap.series).map(([id, info]) => [info.h15_series, { id, title: info.title }]),
);

/** YYYY-MM-DD as the download form takes it: MM/DD/YYYY. */
const usDate = (date: string) => `${date.slice(5, 7)}/${date.slice(8, 10)}/${date.slice(0, 4)}`;

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const last = context.cursor.date;
  const from =
    context.since ??
    (typeof last === 'string'
      ? addDays(last, -REVISION_DAYS)
      : context.backfill
        ? null
        : addDays(context.today, -REVISION_DAYS));
  const url = `${context.baseUrl}/datadownload/Output.aspx?rel=H15&series=${CMT_PACKAGE}&lastobs=&from=${from ? usDate(from) : ''}&to=&filetype=csv&label=include&layout=seriescolumn&type=package`;
  const text = (await context.http.get(url)).body;
  const rows = [...csvRecords(text)];
  const descriptions = rows.find((r) => r.cells[0] === 'Series Description')?.cells ?? [];
  const header = rows.find((r) => r.cells[0] === 'Time Period');
  if (!header) throw new SourceError(`${url}: no "Time Period" header row (the Board's page, not its CSV?)`);
  const records: SourceRecord[] = [];
  let newest: string | null = typeof last === 'string' ? last : null;
  for (const { line, cells } of rows.slice(rows.indexOf(header) + 1)) {
    const date = cells[0] ?? '';
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) continue;
    if (from !== null && date < from) continue;
    if (newest === null || date > newest) newest = date;
    header.cells.slice(1).forEach((code, i) => {
      const value = (cells[i + 1] ?? '').trim();
      if (value === '' || value === 'ND') return;
      const known = byCode.get(code);
      records.push({
        where: `${url} line ${line}, ${code}`,
        values: {
          series_id: known?.id ?? code,
          h15_series: code,
          title: known?.title ?? (descriptions[i + 1] ?? code).replace(/\s+/g, ' ').trim(),
          date,
          value,
        },
      });
    });
  }
  yield {
    dataset: 'macro/fed-h15-series',
    naturalKey: ['series_id', 'date'],
    url,
    cursor: { ...context.cursor, date: newest },
    records,
  };
}

export const fedH15: Source = {
  id: 'fed-h15',
  title: 'Federal Reserve Board H.15: Treasury constant-maturity yields (Data Download Program)',
  publisher: 'Board of Governors of the Federal Reserve System',
  licence: 'Public domain (U.S. government work)',
  datasets: ['macro/fed-h15-series'],
  baseUrl: 'https://www.federalreserve.gov',
  perSecond: 1,
  // H.15 daily data are posted around 16:15 New York time.
  schedule: '45 21 * * 1-5',
  run,
};
