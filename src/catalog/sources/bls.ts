/**
 * BLS Public Data API v2 (`POST /publicAPI/v2/timeseries/data/`): the series the configuration lists
 * (option `series`) into `economics/bls-series`, from the year of the last stored observation (BLS
 * revises recent months), with the catalog's titles (`catalog: true`) and the operator's key
 * (BLS_API_KEY; without one BLS allows 25 queries a day and no titles). An answer that says
 * REQUEST_NOT_PROCESSED is the run's error, whatever its HTTP status.
 */
import type { SourceRecord } from '../importers/importer.ts';
import { type Chunk, json, type RunContext, type Source, SourceError } from './source.ts';

interface Answer {
  status?: string;
  message?: string[];
  Results?: {
    series?: {
      seriesID: string;
      catalog?: { series_title?: string; survey_abbreviation?: string; measure_data_type?: string };
      data?: { year: string; period: string; value: string; footnotes?: { code?: string }[] }[];
    }[];
  };
}

/** M01…M12 → the month's first day; Q01…Q04 → the quarter's; A01 (annual) → the year's. */
function periodDate(year: string, period: string): string | null {
  if (/^M(0[1-9]|1[0-2])$/.test(period)) return `${year}-${period.slice(1)}-01`;
  if (/^Q0[1-4]$/.test(period))
    return `${year}-${String((Number(period[2]) - 1) * 3 + 1).padStart(2, '0')}-01`;
  if (period === 'A01') return `${year}-01-01`;
  return null; // M13: the annual average of a monthly series
}

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const series = (context.options.series as readonly string[] | undefined) ?? [];
  if (series.length === 0)
    throw new SourceError('bls needs option "series": BLS series ids, e.g. CUUR0000SA0');
  const thisYear = Number(context.today.slice(0, 4));
  const last = context.cursor.date;
  const start =
    context.since !== null
      ? Number(context.since.slice(0, 4))
      : typeof last === 'string'
        ? Number(last.slice(0, 4))
        : context.backfill
          ? thisYear - 19
          : thisYear - 1;
  const key = context.credentials.BLS_API_KEY;
  const url = `${context.baseUrl}/publicAPI/v2/timeseries/data/`;
  const answer = json<Answer>(
    await context.http.postJson(url, {
      seriesid: series,
      startyear: String(start),
      endyear: String(Math.max(start, thisYear)),
      catalog: key !== undefined,
      ...(key ? { registrationkey: key } : {}),
    }),
  );
  if (answer.status !== 'REQUEST_SUCCEEDED')
    throw new SourceError(`BLS: ${answer.status ?? 'no status'}: ${(answer.message ?? []).join(' ')}`);
  const records: SourceRecord[] = [];
  let newest: string | null = typeof last === 'string' ? last : null;
  for (const one of answer.Results?.series ?? []) {
    for (const [index, point] of (one.data ?? []).entries()) {
      const date = periodDate(point.year, point.period);
      if (date === null) continue;
      if (newest === null || date > newest) newest = date;
      records.push({
        where: `${url} ${one.seriesID} data[${index}]`,
        values: {
          series_id: one.seriesID,
          survey: one.catalog?.survey_abbreviation ?? one.seriesID.slice(0, 2),
          title: one.catalog?.series_title ?? one.seriesID,
          units: one.catalog?.measure_data_type ?? null,
          date,
          value: point.value === '-' ? null : point.value,
          footnote_codes:
            (point.footnotes ?? [])
              .map((f) => f.code)
              .filter(Boolean)
              .join(',') || null,
        },
      });
    }
  }
  yield {
    dataset: 'economics/bls-series',
    naturalKey: ['series_id', 'date'],
    url,
    cursor: { ...context.cursor, date: newest },
    records,
  };
}

export const bls: Source = {
  id: 'bls',
  title: 'U.S. Bureau of Labor Statistics (Public Data API v2)',
  publisher: 'U.S. Bureau of Labor Statistics',
  licence: 'Public domain (U.S. government work)',
  datasets: ['economics/bls-series'],
  baseUrl: 'https://api.bls.gov',
  perSecond: 1,
  // Most releases are at 8:30 New York time.
  schedule: '0 14 * * 1-5',
  run,
};
