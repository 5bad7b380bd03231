/**
 * SEC XBRL frames (`data.sec.gov/api/xbrl/frames/{taxonomy}/{tag}/{unit}/{period}.json`): each
 * configured frame's facts (one per filer) into `system/xbrl-frames`. A frame is asked again with the
 * validators of its last answer (If-None-Match, If-Modified-Since): an unchanged frame is a 304 and
 * writes nothing. EDGAR's fair-access rule: at most 10 requests a second, a User-Agent naming the
 * operator.
 */
import type { SourceRecord } from '../importers/importer.ts';
import { type Chunk, json, type RunContext, type Source, SourceError } from './source.ts';

interface Frame {
  taxonomy: string;
  tag: string;
  uom: string;
  data?: { accn: string; cik: number; entityName: string; loc: string | null; end: string; val: number }[];
}

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const frames = (context.options.frames as readonly string[] | undefined) ?? [];
  if (frames.length === 0)
    throw new SourceError(
      'sec-frames needs option "frames": taxonomy/tag/unit/period, e.g. us-gaap/Revenues/USD/CY2024Q2',
    );
  let cursor = { ...context.cursor };
  for (const frame of frames) {
    if (!/^[\w-]+\/[\w-]+\/[\w-]+\/CY\d{4}(Q[1-4]I?)?$/.test(frame))
      throw new SourceError(`frame "${frame}": taxonomy/tag/unit/period, e.g. us-gaap/Revenues/USD/CY2024Q2`);
    const url = `${context.baseUrl}/api/xbrl/frames/${frame}.json`;
    const seen =
      typeof cursor[frame] === 'string'
        ? (JSON.parse(cursor[frame] as string) as { etag?: string; modified?: string })
        : {};
    const response = await context.http.get(url, {
      etag: seen.etag ?? null,
      lastModified: seen.modified ?? null,
    });
    if (response.status === 304) continue;
    const body = json<Frame>(response);
    if (!Array.isArray(body.data)) throw new SourceError(`${url}: no data in the frame`);
    const records: SourceRecord[] = body.data.map((fact, index) => ({
      where: `${url} data[${index}]`,
      values: {
        taxonomy: body.taxonomy,
        tag: body.tag,
        unit: body.uom,
        cik: String(fact.cik),
        entity_name: fact.entityName,
        loc: fact.loc,
        end: fact.end,
        accession_number: fact.accn,
        val: fact.val,
      },
    }));
    cursor = {
      ...cursor,
      [frame]: JSON.stringify({
        ...(response.etag ? { etag: response.etag } : {}),
        ...(response.lastModified ? { modified: response.lastModified } : {}),
      }),
    };
    yield {
      dataset: 'system/xbrl-frames',
      naturalKey: ['taxonomy', 'tag', 'unit', 'cik', 'end', 'accession_number'],
      url,
      cursor,
      records,
    };
  }
}

export const secFrames: Source = {
  id: 'sec-frames',
  title: 'SEC XBRL frames: one concept, one period, every filer',
  publisher: 'U.S. Securities and Exchange Commission',
  licence: 'Public domain (U.S. government work)',
  datasets: ['system/xbrl-frames'],
  baseUrl: 'https://data.sec.gov',
  perSecond: 10,
  schedule: '0 6 * * *',
  run,
};
