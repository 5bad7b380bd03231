/**
 * CFTC Commitments of Traders, legacy futures-only report, from the CFTC's Public Reporting Environment
 * (Socrata `jun7-fc8e`): every market's weekly record after the last stored report date into
 * `cftc/legacy_futures-facts`, 50,000 records a page. Socrata's own column names (typos included) are
 * mapped to the catalog's fields.
 */
import type { SourceRecord } from '../importers/importer.ts';
import { addDays, type Chunk, json, type RunContext, type Source, SourceError } from './source.ts';

const PAGE = 50_000;
/** Catalog field → Socrata column, where they differ. */
const RENAMED: Readonly<Record<string, string>> = {
  noncomm_positions_spread_all: 'noncomm_postions_spread_all',
  tot_rept_positions_short_all: 'tot_rept_positions_short',
  conc_gross_le_4_tdr_long_all: 'conc_gross_le_4_tdr_long',
  conc_gross_le_4_tdr_short_all: 'conc_gross_le_4_tdr_short',
};

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const last = context.cursor.report_date;
  const after =
    context.since !== null
      ? addDays(context.since, -1)
      : typeof last === 'string'
        ? last
        : context.backfill
          ? '1986-01-01'
          : addDays(context.today, -35);
  let cursor = { ...context.cursor };
  for (let offset = 0; ; offset += PAGE) {
    const where = encodeURIComponent(`report_date_as_yyyy_mm_dd > '${after}T00:00:00.000'`);
    const url = `${context.baseUrl}/resource/jun7-fc8e.json?$where=${where}&$order=report_date_as_yyyy_mm_dd,id&$limit=${PAGE}&$offset=${offset}`;
    const page = json<Record<string, string>[] | { message?: string }>(await context.http.get(url));
    if (!Array.isArray(page)) throw new SourceError(`${url}: ${page.message ?? 'not a list of records'}`);
    const records: SourceRecord[] = page.map((r, index) => {
      const values: Record<string, unknown> = {
        report_date: (r.report_date_as_yyyy_mm_dd ?? '').slice(0, 10),
      };
      for (const [name, value] of Object.entries(r))
        values[name] = typeof value === 'string' ? value.trim() : value;
      for (const [field, column] of Object.entries(RENAMED)) values[field] = r[column]?.trim() ?? null;
      return { where: `${url} [${index}] (${r.id ?? ''})`, values };
    });
    const newest = page.at(-1)?.report_date_as_yyyy_mm_dd?.slice(0, 10);
    if (newest && (typeof cursor.report_date !== 'string' || newest > cursor.report_date))
      cursor = { ...cursor, report_date: newest };
    yield {
      dataset: 'cftc/legacy_futures-facts',
      naturalKey: ['report_date', 'cftc_contract_market_code', 'futonly_or_combined'],
      url,
      cursor,
      records,
    };
    if (page.length < PAGE) return;
  }
}

export const cftc: Source = {
  id: 'cftc',
  title: 'CFTC Commitments of Traders, legacy futures only (Public Reporting Environment)',
  publisher: 'U.S. Commodity Futures Trading Commission',
  licence: 'Public domain (U.S. government work)',
  datasets: ['cftc/legacy_futures-facts'],
  baseUrl: 'https://publicreporting.cftc.gov',
  perSecond: 2,
  // Released Fridays at 15:30 New York time.
  schedule: '0 21 * * 5',
  run,
};
