/**
 * Treasury Fiscal Data, debt to the penny (`v2/accounting/od/debt_to_penny`): each record date's three
 * amounts as three rows of `macro/treasury-debt-series`, asked for from the day after the last stored
 * date, a page of up to 10,000 records at a time.
 */
import { addDays, type Chunk, json, type RunContext, type Source, SourceError } from './source.ts';

const MEASURES = [
  ['debt_held_public_amt', 'Debt held by the public'],
  ['intragov_hold_amt', 'Intragovernmental holdings'],
  ['tot_pub_debt_out_amt', 'Total public debt outstanding'],
] as const;

interface Page {
  data?: Record<string, string | null>[];
  meta?: { 'total-pages'?: number };
  error?: string;
  message?: string;
}

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const last = context.cursor.record_date;
  const from =
    context.since ??
    (typeof last === 'string'
      ? addDays(last, 1)
      : context.backfill
        ? '1993-04-01'
        : addDays(context.today, -30));
  let cursor = { ...context.cursor };
  for (let page = 1; ; page++) {
    const url = `${context.baseUrl}/services/api/fiscal_service/v2/accounting/od/debt_to_penny?filter=record_date:gte:${from}&page%5Bnumber%5D=${page}&page%5Bsize%5D=10000&sort=record_date`;
    const body = json<Page>(await context.http.get(url));
    if (!Array.isArray(body.data))
      throw new SourceError(`${url}: ${body.message ?? body.error ?? 'no data in the answer'}`);
    const records = body.data.flatMap((record, index) =>
      MEASURES.map(([measure, label]) => ({
        where: `${url} data[${index}].${measure}`,
        values: {
          measure,
          measure_label: label,
          record_date: record.record_date,
          amount: record[measure] ?? null,
        },
      })),
    );
    const newest = body.data.at(-1)?.record_date;
    if (typeof newest === 'string' && (typeof cursor.record_date !== 'string' || newest > cursor.record_date))
      cursor = { ...cursor, record_date: newest };
    yield {
      dataset: 'macro/treasury-debt-series',
      naturalKey: ['measure', 'record_date'],
      url,
      cursor,
      records,
    };
    if (page >= (body.meta?.['total-pages'] ?? 1)) return;
  }
}

export const treasuryDebt: Source = {
  id: 'treasury-debt',
  title: 'U.S. Treasury debt to the penny (Fiscal Data)',
  publisher: 'U.S. Department of the Treasury, Bureau of the Fiscal Service',
  licence: 'Public domain (U.S. government work)',
  datasets: ['macro/treasury-debt-series'],
  baseUrl: 'https://api.fiscaldata.treasury.gov',
  perSecond: 2,
  // Published the next business day, mid-afternoon New York time.
  schedule: '0 21 * * 1-5',
  run,
};
