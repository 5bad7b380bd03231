/**
 * FRED series CSV: a date column (`DATE`, or `observation_date` in FRED's newer files) and one column
 * per series id, `.` (or an empty cell) where there is no observation. Each series cell is one row.
 * config/import-maps/fred-series.json names the H.15 code, title and tenor of the ids it knows.
 */
import fredMap from '../../../config/import-maps/fred-series.json' with { type: 'json' };
import { ImportError } from '../import-file.ts';
import { cellCountProblem, csvTable } from './csv-table.ts';
import type { ImportContext, Importer, SourceRecord } from './importer.ts';

interface SeriesInfo {
  h15_series: string;
  title: string;
  tenor?: string;
  maturity_months?: number;
}

const known: Readonly<Record<string, SeriesInfo>> = fredMap.series;
const dateColumns = new Set(['date', 'observation_date']);
const missing = (cell: string | undefined) => {
  const text = (cell ?? '').trim();
  return text === '' || text === '.' ? null : text;
};

function* records(text: string, context: ImportContext): Generator<SourceRecord> {
  const table = csvTable(text);
  const dateAt = table.header.findIndex((h) => dateColumns.has(h.toLowerCase()));
  if (dateAt < 0)
    throw new ImportError('This is not a FRED series file.', [
      `line 1: no DATE or observation_date column (header: ${table.header.join(',')})`,
    ]);
  const series = table.header.map((id, at) => ({ id, at })).filter(({ at }) => at !== dateAt);
  if (series.length === 0) throw new ImportError('The FRED file has no series column.', ['line 1']);
  const yields = context.dataset.key === 'macro/treasury-yield-series';
  if (yields) {
    const notYields = series.filter(({ id }) => known[id]?.tenor === undefined).map(({ id }) => id);
    if (notYields.length > 0)
      throw new ImportError(`${notYields.join(', ')}: not a constant-maturity Treasury yield.`, [
        `line 1: ${context.dataset.key} takes the DGS series (${Object.keys(known)
          .filter((id) => known[id]?.tenor)
          .join(', ')}); import others into macro/fed-h15-series`,
      ]);
  }
  for (const { line, cells } of table.rows) {
    const bad = cellCountProblem(line, cells, table.header.length);
    if (bad) {
      yield bad;
      continue;
    }
    const date = cells[dateAt]?.trim();
    for (const { id, at } of series) {
      const info = known[id];
      const where = `line ${line}, column ${id}`;
      const value = missing(cells[at]);
      yield yields
        ? {
            where,
            values: { tenor: info?.tenor, maturity_months: info?.maturity_months, date, par_yield: value },
          }
        : {
            where,
            values: { series_id: id, h15_series: info?.h15_series, title: info?.title, date, value },
          };
    }
  }
}

export const fredSeries: Importer = {
  name: 'fred-series',
  title: 'FRED series CSV (DATE or observation_date, one column per series)',
  source:
    'Board of Governors of the Federal Reserve System, H.15, via FRED (Federal Reserve Bank of St. Louis)',
  licence: 'Public domain (H.15 data of the Federal Reserve Board)',
  attribution:
    'Source: Board of Governors of the Federal Reserve System (US), retrieved from FRED, Federal Reserve Bank of St. Louis',
  targets: [
    { dataset: 'macro/fed-h15-series', naturalKey: ['series_id', 'date'] },
    { dataset: 'macro/treasury-yield-series', naturalKey: ['tenor', 'date'] },
  ],
  detect: (head) => /^\uFEFF?"?(DATE|observation_date)"?,"?[A-Za-z0-9_]+"?(,|\r?\n)/.test(head),
  records,
};
