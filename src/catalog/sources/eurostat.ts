/**
 * Eurostat's dissemination API (SDMX 2.1, structure-specific data): the series the configuration lists
 * (option `series`, `dataset/KEY`, e.g. `nama_10_gdp/A.CP_MEUR.B1GQ.LU`; `+` joins codes at a position)
 * into `economics/eurostat-series`, from a year before the last stored observation (Eurostat revises
 * recent periods in place, keeping no history). A period is stored as its first day; "no results"
 * (404, or SDMX fault 100) is nothing new.
 */
import { readXml } from '../importers/xml.ts';
import { type Chunk, type RunContext, type Source, SourceError } from './source.ts';

/** 2015 → 2015-01-01, 2015-03 → 2015-03-01, 2015-Q2 → 2015-04-01, 2015-S2 → 2015-07-01. */
function periodStart(period: string): string {
  if (/^\d{4}$/.test(period)) return `${period}-01-01`;
  if (/^\d{4}-\d{2}$/.test(period)) return `${period}-01`;
  const quarter = /^(\d{4})-Q([1-4])$/.exec(period);
  if (quarter) return `${quarter[1]}-${String((Number(quarter[2]) - 1) * 3 + 1).padStart(2, '0')}-01`;
  const half = /^(\d{4})-S([12])$/.exec(period);
  if (half) return `${half[1]}-${half[2] === '1' ? '01' : '07'}-01`;
  return period;
}

/** The `startPeriod` of a date, years back: a year for annual series, else a month. */
function startPeriod(date: string, freq: string, yearsBack: number): string {
  const year = String(Number(date.slice(0, 4)) - yearsBack);
  return freq === 'A' ? year : `${year}-${date.slice(5, 7)}`;
}

/** The series' key in the asked key's order: a `+` position takes the code of the dimension holding one. */
function seriesKey(positions: readonly string[][], dims: Record<string, string>): string {
  const codes = new Set(Object.values(dims));
  return positions.map((options) => options.find((code) => codes.has(code)) ?? options.join('+')).join('.');
}

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const series = (context.options.series as readonly string[] | undefined) ?? [];
  if (series.length === 0)
    throw new SourceError('eurostat needs option "series": dataset/KEY, e.g. nama_10_gdp/A.CP_MEUR.B1GQ.LU');
  let cursor = { ...context.cursor };
  for (const ref of series) {
    const [code, key] = ref.split('/');
    const positions = (key ?? '').split('.').map((p) => p.split('+'));
    // An empty position (every code) would leave the order of the answer's dimensions unknown.
    if (!code || !key || positions.some((p) => p.includes('')))
      throw new SourceError(
        `Eurostat series "${ref}": write it as dataset/KEY with a code at every position, e.g. nama_10_gdp/A.CP_MEUR.B1GQ.LU`,
      );
    const freq = positions[0]?.[0] ?? '';
    const last = cursor[ref];
    const start = context.since
      ? startPeriod(context.since, freq, 0)
      : typeof last === 'string'
        ? startPeriod(last, freq, 1)
        : context.backfill
          ? null
          : startPeriod(context.today, freq, 1);
    const url = `${context.baseUrl}/eurostat/api/dissemination/sdmx/2.1/data/${code}/${key}?format=SDMX_2.1_STRUCTURED${start ? `&startPeriod=${start}` : ''}`;
    const response = await context.http.get(url, { accept: [400, 404] });
    if (response.status === 400 && !/<faultcode>\s*100\s*</.test(response.body)) {
      const fault = /<faultstring>([^<]*)</.exec(response.body)?.[1]?.trim();
      throw new SourceError(`Eurostat ${ref}: HTTP 400${fault ? `: ${fault}` : ''}`);
    }
    if (response.status !== 200) continue;
    const dataset = code.toLowerCase();
    const records: Chunk['records'] = [];
    let newest: string | null = null;
    readXml(
      response.body,
      (name) => name === 'Series',
      (element) => {
        const dims = element.attributes;
        const id = `${dataset}/${seriesKey(positions, dims)}`;
        for (const obs of element.children.filter((c) => c.name === 'Obs')) {
          const date = periodStart(obs.attributes.TIME_PERIOD ?? '');
          const value = obs.attributes.OBS_VALUE ?? null;
          if (newest === null || date > newest) newest = date;
          records.push({
            where: `${url} ${obs.path}`,
            values: {
              series_key: id,
              dataset_code: dataset,
              geo: dims.geo ?? null,
              // The data carries codes only; the series is its own title.
              title: id,
              units: dims.unit ?? null,
              date,
              value: value === 'NaN' ? null : value,
              obs_flag: obs.attributes.OBS_FLAG ?? null,
            },
          });
        }
      },
    );
    const got = newest as string | null;
    if (got !== null && (typeof last !== 'string' || got > last)) cursor = { ...cursor, [ref]: got };
    yield {
      dataset: 'economics/eurostat-series',
      naturalKey: ['series_key', 'date'],
      url,
      cursor,
      records,
    };
  }
}

export const eurostat: Source = {
  id: 'eurostat',
  title: 'Eurostat dissemination API (SDMX 2.1)',
  publisher: 'Eurostat',
  licence: 'CC BY 4.0 (Commission Decision 2011/833/EU): reuse permitted with attribution, Source: Eurostat',
  datasets: ['economics/eurostat-series'],
  baseUrl: 'https://ec.europa.eu',
  perSecond: 2,
  // Eurostat publishes at 11:00 Luxembourg time.
  schedule: '30 10 * * 1-5',
  run,
};
