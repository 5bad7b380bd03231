/**
 * SEC EDGAR's latest filings (the `getcurrent` Atom feed, 100 entries a page, newest first): paged back
 * until an entry already stored, into `system/sec-rss-entries`, and each poll into
 * `system/sec-rss-feeds`. Paging ends where EDGAR answers 503 ("File Unavailable"). EDGAR's
 * fair-access rule: at most 10 requests a second, with a User-Agent naming the operator.
 */

import type { SourceRecord } from '../importers/importer.ts';
import { child, children, readXml, textAt, type XmlElement } from '../importers/xml.ts';
import type { Chunk, RunContext, Source } from './source.ts';

const FEED_ID = 'edgar-current-all';
const PAGE = 100;
/** Pages one run reads at most: 2,000 filings, more than EDGAR lists between two runs. */
const MAX_PAGES = 20;

interface Entry {
  publishedAt: string;
  cik: string;
  formType: string;
  accession: string;
  link: string;
}

function entries(xml: string): { title: string; entries: Entry[] } {
  const found: Entry[] = [];
  let title = '';
  readXml(
    xml,
    (name, depth) => (name === 'entry' && depth === 1) || (name === 'title' && depth === 1),
    (element: XmlElement) => {
      if (element.name === 'title') {
        title = element.text;
        return;
      }
      const updated = textAt(element, 'updated');
      const entryTitle = textAt(element, 'title') ?? '';
      const id = textAt(element, 'id') ?? '';
      const link = child(element, 'link')?.attributes.href ?? '';
      const formType = children(element, 'category').find((c) => c.attributes.label === 'form type')
        ?.attributes.term;
      const cik = /\((\d{1,10})\)/.exec(entryTitle)?.[1];
      const accession = /accession-number=([\d-]+)/.exec(id)?.[1];
      if (!updated || !cik || !accession || !formType) return;
      found.push({
        publishedAt: new Date(Date.parse(updated)).toISOString().replace('.000Z', 'Z'),
        cik: String(Number(cik)),
        formType,
        accession,
        link,
      });
    },
  );
  return { title, entries: found };
}

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const seen = typeof context.cursor.newest === 'string' ? context.cursor.newest : null;
  const polledAt = new Date(context.now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  let newest: string | null = null;
  let title = 'Latest Filings';
  let entriesSeen = 0;
  let fresh = 0;
  let status = 200;
  const firstUrl = `${context.baseUrl}/cgi-bin/browse-edgar?action=getcurrent&count=${PAGE}&start=0&type=&owner=include&output=atom`;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = `${context.baseUrl}/cgi-bin/browse-edgar?action=getcurrent&count=${PAGE}&start=${page * PAGE}&type=&owner=include&output=atom`;
    const response = await context.http.get(url, page > 0 ? { accept: [503] } : undefined);
    // Past the last page EDGAR answers 503 "File Unavailable": paging ends there.
    if (response.status === 503 && page > 0) break;
    status = response.status;
    const feed = entries(response.body);
    if (page === 0) title = feed.title.replace(/ - .*$/, '') || title;
    entriesSeen += feed.entries.length;
    const kept = feed.entries.filter((e) => seen === null || e.publishedAt >= seen);
    fresh += kept.length;
    for (const e of feed.entries) if (newest === null || e.publishedAt > newest) newest = e.publishedAt;
    const records: SourceRecord[] = kept.map((e, index) => ({
      where: `${url} entry[${index + 1}]`,
      key: JSON.stringify([FEED_ID, e.accession, e.cik]),
      values: {
        feed_id: FEED_ID,
        published_at: e.publishedAt,
        cik: e.cik,
        form_type: e.formType,
        accession_number: e.accession,
        link: e.link,
      },
    }));
    const done = feed.entries.length < PAGE || kept.length < feed.entries.length || page === MAX_PAGES - 1;
    // The cursor moves to the newest entry only once every page back to the last run's is stored.
    yield {
      dataset: 'system/sec-rss-entries',
      naturalKey: ['feed_id', 'accession_number', 'cik'],
      url,
      cursor: done ? { ...context.cursor, newest: newest ?? seen } : context.cursor,
      records,
    };
    if (done) break;
  }
  yield {
    dataset: 'system/sec-rss-feeds',
    naturalKey: ['feed_id', 'polled_at'],
    url: firstUrl,
    cursor: { ...context.cursor, newest: newest ?? seen },
    records: [
      {
        where: firstUrl,
        values: {
          feed_id: FEED_ID,
          title,
          url: 'https://www.sec.gov/cgi-bin/browse-edgar?action=getcurrent&output=atom',
          polled_at: polledAt,
          http_status: status,
          entries_seen: entriesSeen,
          new_entries: fresh,
          etag: null,
        },
      },
    ],
  };
}

export const secCurrent: Source = {
  id: 'sec-current',
  title: 'SEC EDGAR latest filings (the getcurrent Atom feed)',
  publisher: 'U.S. Securities and Exchange Commission',
  licence: 'Public domain (U.S. government work)',
  datasets: ['system/sec-rss-entries', 'system/sec-rss-feeds'],
  baseUrl: 'https://www.sec.gov',
  perSecond: 10,
  schedule: '*/10 * * * *',
  run,
};
