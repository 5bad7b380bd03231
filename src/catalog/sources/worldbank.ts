/**
 * World Bank Indicators API v2: the indicators of option `indicators` (by default the five the catalog
 * describes) for the economies of option `countries` (ISO alpha-3 codes, by default `all`) into
 * `economics/worldbank-series`, a date window (`date=from:to`) from three years before the last stored
 * observation (each WDI release revises recent years), 1,000 a page. A year without a value is no row.
 * The API sends its errors (an unknown indicator or country) as a message with HTTP 200: that is a failed
 * request, and fails the run.
 */
import type { SourceRecord } from '../importers/importer.ts';
import { type Chunk, json, type RunContext, type Source, SourceError } from './source.ts';

const DEFAULT_INDICATORS = [
  'NY.GDP.MKTP.CD',
  'NY.GDP.MKTP.KD.ZG',
  'FP.CPI.TOTL.ZG',
  'SP.POP.TOTL',
  'SL.UEM.TOTL.ZS',
];
const PAGE = 1_000;
const REVISED_YEARS = 3;
/** A first run that is not a backfill asks for this many years. */
const FIRST_YEARS = 5;

interface Header {
  page: number;
  pages: number;
}

interface Point {
  indicator: { id: string; value: string };
  country: { id: string; value: string };
  countryiso3code: string;
  date: string;
  value: number | null;
  unit: string;
}

interface ErrorMessage {
  message: { id?: string; key?: string; value?: string }[];
}

/** 2019 → 2019-01-01, 2019Q2 → 2019-04-01, 2019M07 → 2019-07-01. */
function periodStart(date: string): string {
  if (/^\d{4}$/.test(date)) return `${date}-01-01`;
  const quarter = /^(\d{4})Q([1-4])$/.exec(date);
  if (quarter) return `${quarter[1]}-${String((Number(quarter[2]) - 1) * 3 + 1).padStart(2, '0')}-01`;
  const month = /^(\d{4})M(\d{2})$/.exec(date);
  if (month) return `${month[1]}-${month[2]}-01`;
  return date;
}

/** A page of the answer, or the API's error (sent with 200) as a SourceError. */
function page(body: unknown, what: string): { header: Header; points: Point[] } {
  if (!Array.isArray(body)) throw new SourceError(`World Bank ${what}: not a list`);
  const [first, second] = body as [unknown, unknown];
  const error = (first as Partial<ErrorMessage> | undefined)?.message;
  if (Array.isArray(error))
    throw new SourceError(
      `World Bank ${what}: ${error.map((m) => [m.id, m.key, m.value].filter(Boolean).join(' ')).join('; ')}`,
    );
  const header = first as { page?: unknown; pages?: unknown } | undefined;
  const at = Number(header?.page);
  const pages = Number(header?.pages);
  if (!Number.isInteger(at) || !Number.isInteger(pages))
    throw new SourceError(`World Bank ${what}: no page header`);
  // No observation in the window: the data part is null.
  return { header: { page: at, pages }, points: Array.isArray(second) ? (second as Point[]) : [] };
}

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const indicators = (context.options.indicators as readonly string[] | undefined) ?? DEFAULT_INDICATORS;
  const countries = ((context.options.countries as readonly string[] | undefined) ?? ['all']).join(';');
  const thisYear = Number(context.today.slice(0, 4));
  let cursor = { ...context.cursor };
  for (const indicator of indicators) {
    const last = cursor[indicator];
    const from =
      context.since !== null
        ? Number(context.since.slice(0, 4))
        : typeof last === 'string'
          ? Number(last.slice(0, 4)) - REVISED_YEARS
          : context.backfill
            ? null
            : thisYear - FIRST_YEARS;
    let newest = typeof last === 'string' ? last : null;
    for (let number = 1; ; number++) {
      const query = [
        'format=json',
        `per_page=${PAGE}`,
        `page=${number}`,
        ...(from === null ? [] : [`date=${from}:${Math.max(from, thisYear)}`]),
      ].join('&');
      const url = `${context.baseUrl}/v2/countries/${countries}/indicators/${encodeURIComponent(indicator)}?${query}`;
      const { header, points } = page(json<unknown>(await context.http.get(url)), indicator);
      const records: SourceRecord[] = [];
      for (const [index, point] of points.entries()) {
        if (point.value === null) continue;
        const date = periodStart(point.date);
        if (newest === null || date > newest) newest = date;
        const iso3 = point.countryiso3code || point.country.id;
        records.push({
          where: `${url} [1][${index}]`,
          values: {
            series_id: `${point.indicator.id}.${iso3}`,
            indicator_id: point.indicator.id,
            country_iso3: iso3,
            title: `${point.indicator.value}, ${point.country.value}`,
            units: point.unit || null,
            date,
            value: point.value,
          },
        });
      }
      const done = header.page >= header.pages;
      // The indicator's cursor moves with its last page: a run broken off between pages asks them again.
      if (done && newest !== null) cursor = { ...cursor, [indicator]: newest };
      yield {
        dataset: 'economics/worldbank-series',
        naturalKey: ['series_id', 'date'],
        url,
        cursor,
        records,
      };
      if (done) break;
    }
  }
}

export const worldbank: Source = {
  id: 'worldbank',
  title: 'World Bank World Development Indicators (Indicators API v2)',
  publisher: 'World Bank',
  licence: 'CC BY 4.0: Source: World Bank, World Development Indicators',
  datasets: ['economics/worldbank-series'],
  baseUrl: 'https://api.worldbank.org',
  perSecond: 2,
  // WDI is updated a few times a year, without a fixed calendar.
  schedule: '0 5 * * 1',
  run,
};
