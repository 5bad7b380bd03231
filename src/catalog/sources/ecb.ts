/**
 * ECB data (SDMX 2.1 GenericData): the series the configuration lists (option `series`, `FLOW/KEY`,
 * by default the euro reference rate of the US dollar, pound, yen and franc) into `ecb/observations`,
 * from the last stored period on (`startPeriod`; the ECB revises recent observations). A monthly or
 * yearly period is stored as its first day.
 */
import { children, readXml, type XmlElement } from '../importers/xml.ts';
import { type Chunk, type RunContext, type Source, SourceError } from './source.ts';

const DEFAULT_SERIES = [
  'EXR/D.USD.EUR.SP00.A',
  'EXR/D.GBP.EUR.SP00.A',
  'EXR/D.JPY.EUR.SP00.A',
  'EXR/D.CHF.EUR.SP00.A',
];

/** 1999-01 → 1999-01-01, 1999 → 1999-01-01; a day stays as it is. */
function periodStart(period: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(period)) return period;
  if (/^\d{4}-\d{2}$/.test(period)) return `${period}-01`;
  if (/^\d{4}$/.test(period)) return `${period}-01-01`;
  return period;
}

const valuesOf = (element: XmlElement | undefined): Record<string, string> =>
  Object.fromEntries(
    children(element, 'Value').map((v) => [v.attributes.id ?? '', v.attributes.value ?? '']),
  );

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const series = (context.options.series as readonly string[] | undefined) ?? DEFAULT_SERIES;
  let cursor = { ...context.cursor };
  for (const ref of series) {
    const [flow, key] = ref.split('/');
    if (!flow || !key)
      throw new SourceError(`ECB series "${ref}": write it as FLOW/KEY, e.g. EXR/D.USD.EUR.SP00.A`);
    const last = cursor[ref];
    const start =
      context.since ??
      (typeof last === 'string' ? last.slice(0, 7) : context.backfill ? null : context.today.slice(0, 7));
    const url = `${context.baseUrl}/service/data/${flow}/${key}?format=genericdata${start ? `&startPeriod=${start}` : ''}`;
    const response = await context.http.get(url, { accept: [404] });
    // No observations in the window: the ECB answers 404 "No results found".
    if (response.status === 404) continue;
    const records: Chunk['records'] = [];
    const seen = { newest: null as string | null };
    readXml(
      response.body,
      (name) => name === 'Series',
      (element) => {
        const dims = valuesOf(element.children.find((c) => c.name === 'SeriesKey'));
        const seriesKey = `${flow}.${Object.values(dims).join('.')}`;
        for (const obs of children(element, 'Obs')) {
          const period = obs.children.find((c) => c.name === 'ObsDimension')?.attributes.value ?? '';
          const value = obs.children.find((c) => c.name === 'ObsValue')?.attributes.value ?? null;
          const attributes = valuesOf(obs.children.find((c) => c.name === 'Attributes'));
          const day = periodStart(period);
          if (seen.newest === null || day > seen.newest) seen.newest = day;
          records.push({
            where: `${url} ${obs.path}`,
            values: {
              series_key: seriesKey,
              flow_ref: flow,
              freq: dims.FREQ ?? null,
              currency: dims.CURRENCY ?? null,
              currency_denom: dims.CURRENCY_DENOM ?? null,
              series_variation: dims.EXR_TYPE ?? Object.values(dims).at(-1) ?? null,
              time_period: day,
              obs_value: value === 'NaN' ? null : value,
              obs_status: attributes.OBS_STATUS ?? null,
              obs_conf: attributes.OBS_CONF ?? null,
              obs_com: attributes.OBS_COM ?? null,
            },
          });
        }
      },
    );
    const { newest } = seen;
    if (newest !== null && (typeof last !== 'string' || newest > last)) cursor = { ...cursor, [ref]: newest };
    yield {
      dataset: 'ecb/observations',
      naturalKey: ['series_key', 'time_period'],
      url,
      cursor,
      records,
    };
  }
}

export const ecb: Source = {
  id: 'ecb',
  title: 'European Central Bank data (SDMX): euro reference rates and other series',
  publisher: 'European Central Bank',
  licence: 'Reuse permitted with attribution: Source: ECB',
  datasets: ['ecb/observations'],
  baseUrl: 'https://data-api.ecb.europa.eu',
  perSecond: 2,
  // The reference rates are published around 16:00 CET on TARGET days.
  schedule: '30 15 * * 1-5',
  run,
};
