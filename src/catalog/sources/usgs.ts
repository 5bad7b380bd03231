/**
 * USGS earthquakes (GeoJSON) into `geospatial/usgs-earthquakes`, one row per event id, its latest
 * version. Since the last answer's generation time it asks the smallest real-time summary feed that
 * covers the gap (past hour, day, week or 30 days: USGS asks real-time clients to use them), and for a
 * longer gap the FDSN event service from that time (`starttime`), 20,000 events a page. Option
 * `magnitude` (`all`, `1.0`, `2.5` or `4.5`) narrows both. Times are stored to the second.
 */
import type { SourceRecord } from '../importers/importer.ts';
import { type Chunk, json, type RunContext, type Source, SourceError } from './source.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const FEEDS = [
  ['hour', HOUR_MS],
  ['day', DAY_MS],
  ['week', 7 * DAY_MS],
  ['month', 30 * DAY_MS],
] as const;
/** A feed is regenerated every minute and cached: it must reach a little further back than the gap. */
const MARGIN_MS = 10 * 60_000;
const FDSN_PAGE = 20_000;
const MAGNITUDES = ['all', '1.0', '2.5', '4.5'] as const;

interface Answer {
  metadata?: { generated?: number };
  features?: {
    id: string;
    properties: {
      mag: number | null;
      place: string | null;
      time: number;
      updated: number;
      url: string | null;
      felt: number | null;
      alert: string | null;
      status: string | null;
      tsunami: number | null;
      sig: number | null;
      net: string | null;
      magType: string | null;
      type: string | null;
    };
    geometry: { coordinates: [number, number, number] } | null;
  }[];
}

/** Epoch ms → ISO 8601 to the second, as stored times are. */
const toSecond = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

function records(answer: Answer, url: string): SourceRecord[] {
  return (answer.features ?? []).map((feature, index) => {
    const p = feature.properties;
    const [longitude, latitude, depth] = feature.geometry?.coordinates ?? [];
    return {
      where: `${url} features[${index}]`,
      values: {
        event_id: feature.id,
        time: typeof p.time === 'number' ? toSecond(p.time) : null,
        updated: typeof p.updated === 'number' ? toSecond(p.updated) : null,
        magnitude: p.mag,
        mag_type: p.magType,
        place: p.place,
        latitude: latitude ?? null,
        longitude: longitude ?? null,
        depth_km: depth ?? null,
        status: p.status,
        event_type: p.type,
        network: p.net,
        significance: p.sig,
        tsunami: p.tsunami,
        felt: p.felt,
        alert: p.alert,
        url: p.url,
      },
    };
  });
}

function chunk(answer: Answer, url: string, cursor: Chunk['cursor']): Chunk {
  return {
    dataset: 'geospatial/usgs-earthquakes',
    naturalKey: ['event_id'],
    url,
    cursor,
    records: records(answer, url),
  };
}

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const magnitude = (context.options.magnitude as string | undefined) ?? 'all';
  if (!(MAGNITUDES as readonly string[]).includes(magnitude))
    throw new SourceError(`usgs option "magnitude" is one of ${MAGNITUDES.join(', ')}, not "${magnitude}"`);
  const through = context.cursor.through;
  const fromMs =
    context.since !== null
      ? Date.parse(`${context.since}T00:00:00Z`)
      : typeof through === 'string'
        ? Date.parse(through)
        : context.now - FEEDS[3][1] + MARGIN_MS;
  const gapMs = context.now - fromMs + MARGIN_MS;
  const feed = FEEDS.find(([, windowMs]) => gapMs <= windowMs);
  if (feed) {
    const url = `${context.baseUrl}/earthquakes/feed/v1.0/summary/${magnitude}_${feed[0]}.geojson`;
    const answer = json<Answer>(await context.http.get(url));
    yield chunk(answer, url, { through: toSecond(answer.metadata?.generated ?? context.now) });
    return;
  }
  const query = [
    'format=geojson',
    `starttime=${new Date(fromMs).toISOString()}`,
    `endtime=${new Date(context.now).toISOString()}`,
    'orderby=time-asc',
    ...(magnitude === 'all' ? [] : [`minmagnitude=${magnitude}`]),
    `limit=${FDSN_PAGE}`,
  ].join('&');
  for (let offset = 1; ; offset += FDSN_PAGE) {
    const url = `${context.baseUrl}/fdsnws/event/1/query?${query}&offset=${offset}`;
    // 204: no events in the window.
    const response = await context.http.get(url, { accept: [204] });
    const answer = response.status === 204 ? {} : json<Answer>(response);
    const done = (answer.features?.length ?? 0) < FDSN_PAGE;
    // The window's end becomes the cursor with its last page: a run broken off asks the window again.
    yield chunk(answer, url, done ? { through: toSecond(context.now) } : { ...context.cursor });
    if (done) break;
  }
}

export const usgs: Source = {
  id: 'usgs',
  title: 'USGS earthquakes (real-time GeoJSON feeds and the FDSN event service)',
  publisher: 'U.S. Geological Survey, Earthquake Hazards Program',
  licence: 'Public domain (U.S. government work)',
  datasets: ['geospatial/usgs-earthquakes'],
  baseUrl: 'https://earthquake.usgs.gov',
  perSecond: 2,
  // The feeds are regenerated every minute.
  schedule: '*/10 * * * *',
  run,
};
