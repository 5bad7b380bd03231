/**
 * EIA API v2: the series the configuration lists (option `series`, `route:series-id`, e.g.
 * `natural-gas/enr/seis:E_ERTCES_XS0_NUS_C`) into `economics/eia-series`, monthly, from the month of
 * the last stored observation, 5,000 a page, with the operator's key (EIA_API_KEY). A month is stored
 * as its first day.
 */
import type { SourceRecord } from '../importers/importer.ts';
import { type Chunk, json, type RunContext, type Source, SourceError } from './source.ts';

const PAGE = 5_000;

interface Answer {
  response?: {
    total?: string | number;
    data?: {
      period: string;
      series: string;
      'series-description'?: string;
      value: string | null;
      units?: string;
    }[];
  };
  error?: string;
}

const monthStart = (period: string) => (/^\d{4}-\d{2}$/.test(period) ? `${period}-01` : period);

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const key = context.credentials.EIA_API_KEY;
  if (!key) throw new SourceError('EIA needs an API key: set EIA_API_KEY (free at eia.gov/opendata).');
  const series = (context.options.series as readonly string[] | undefined) ?? [];
  if (series.length === 0)
    throw new SourceError(
      'eia needs option "series": route:series-id, e.g. natural-gas/enr/seis:E_ERTCES_XS0_NUS_C',
    );
  let cursor = { ...context.cursor };
  for (const ref of series) {
    const [route, id] = ref.split(':');
    if (!route || !id) throw new SourceError(`EIA series "${ref}": write it as route:series-id`);
    const last = cursor[ref];
    const start =
      context.since?.slice(0, 7) ??
      (typeof last === 'string' ? last.slice(0, 7) : context.backfill ? null : context.today.slice(0, 7));
    for (let offset = 0; ; offset += PAGE) {
      const query = [
        `frequency=monthly`,
        `data[0]=value`,
        `facets[series][]=${encodeURIComponent(id)}`,
        ...(start ? [`start=${start}`] : []),
        `sort[0][column]=period`,
        `sort[0][direction]=asc`,
        `offset=${offset}`,
        `length=${PAGE}`,
      ].join('&');
      const url = `${context.baseUrl}/v2/${route}/data/?${query}`;
      const answer = json<Answer>(await context.http.get(`${url}&api_key=${encodeURIComponent(key)}`));
      const data = answer.response?.data;
      if (!Array.isArray(data))
        throw new SourceError(`EIA ${ref}: ${answer.error ?? 'no data in the answer'}`);
      const records: SourceRecord[] = data.map((point, index) => ({
        where: `${url} data[${index}]`,
        values: {
          series_id: point.series,
          title: point['series-description'] ?? point.series,
          units: point.units ?? null,
          date: monthStart(point.period),
          value: point.value,
        },
      }));
      const newest = data.at(-1)?.period;
      if (newest && (typeof cursor[ref] !== 'string' || monthStart(newest) > (cursor[ref] as string)))
        cursor = { ...cursor, [ref]: monthStart(newest) };
      yield { dataset: 'economics/eia-series', naturalKey: ['series_id', 'date'], url, cursor, records };
      if (data.length < PAGE) break;
    }
  }
}

export const eia: Source = {
  id: 'eia',
  title: 'U.S. Energy Information Administration (API v2)',
  publisher: 'U.S. Energy Information Administration',
  licence: 'Public domain (U.S. government work); attribution requested: Source: U.S. EIA',
  datasets: ['economics/eia-series'],
  baseUrl: 'https://api.eia.gov',
  perSecond: 2,
  schedule: '0 16 * * 1-5',
  credential: 'EIA_API_KEY',
  run,
};
