/**
 * FRED (api.stlouisfed.org): observations of the H.15 series the configuration lists (option `series`,
 * by default every id config/import-maps/fred-series.json knows; no other series fits the dataset's
 * percentages) into `macro/fed-h15-series`, from 60 days before the last stored observation (FRED
 * revises recent values), with the operator's API key (FRED_API_KEY). A missing value (".") is null.
 */
import fredMap from '../../../config/import-maps/fred-series.json' with { type: 'json' };
import { addDays, type Chunk, json, type RunContext, type Source, SourceError } from './source.ts';

const known: Readonly<Record<string, { h15_series: string; title: string }>> = fredMap.series;
const REVISION_DAYS = 60;

interface Observations {
  observations?: { date: string; value: string }[];
  error_message?: string;
}

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const key = context.credentials.FRED_API_KEY;
  if (!key) throw new SourceError('FRED needs an API key: set FRED_API_KEY (free at fred.stlouisfed.org).');
  const series = (context.options.series as readonly string[] | undefined) ?? Object.keys(known);
  let cursor = { ...context.cursor };
  const unknown = series.filter((id) => !known[id]);
  if (unknown.length > 0)
    throw new SourceError(
      `FRED series ${unknown.join(', ')}: not an H.15 series of macro/fed-h15-series (config/import-maps/fred-series.json lists them)`,
    );
  for (const id of series) {
    const info = known[id] as { h15_series: string; title: string };
    const last = cursor[id];
    const start =
      context.since ??
      (typeof last === 'string'
        ? addDays(last, -REVISION_DAYS)
        : context.backfill
          ? '1776-07-04'
          : addDays(context.today, -REVISION_DAYS));
    const url = `${context.baseUrl}/fred/series/observations?series_id=${encodeURIComponent(id)}&file_type=json&observation_start=${start}&api_key=${key}`;
    const body = json<Observations>(await context.http.get(url));
    if (!Array.isArray(body.observations))
      throw new SourceError(`FRED ${id}: ${body.error_message ?? 'no observations'}`);
    const newest = body.observations.at(-1)?.date;
    if (newest !== undefined && (typeof last !== 'string' || newest > last))
      cursor = { ...cursor, [id]: newest };
    const shown = url.replace(key, '…');
    yield {
      dataset: 'macro/fed-h15-series',
      naturalKey: ['series_id', 'date'],
      url: shown,
      cursor,
      records: body.observations.map((o, index) => ({
        where: `${shown} observations[${index}]`,
        values: {
          series_id: id,
          h15_series: info.h15_series,
          title: info.title,
          date: o.date,
          value: o.value === '.' ? null : o.value,
        },
      })),
    };
  }
}

export const fred: Source = {
  id: 'fred',
  title: 'FRED (Federal Reserve Bank of St. Louis): H.15 series',
  publisher:
    'Board of Governors of the Federal Reserve System, H.15, via FRED (Federal Reserve Bank of St. Louis)',
  licence: 'Public domain (H.15 data of the Federal Reserve Board); FRED API Terms of Use',
  datasets: ['macro/fed-h15-series'],
  baseUrl: 'https://api.stlouisfed.org',
  // FRED allows 120 requests a minute per key.
  perSecond: 1,
  schedule: '0 22 * * 1-5',
  credential: 'FRED_API_KEY',
  run,
};
