/**
 * NY Fed reference rates (Markets Data API): SOFR, BGCR, TGCR, EFFR and OBFR, asked for by date window
 * from the day after the last stored one, less a few days, because the NY Fed revises a rate the
 * business day after (revisionIndicator). `…/search.json?startDate=…&endDate=…`, newest first.
 */
import { addDays, type Chunk, json, minDate, type RunContext, type Source } from './source.ts';

interface RefRate {
  effectiveDate: string;
  type: string;
  percentRate?: number;
  percentPercentile1?: number;
  percentPercentile25?: number;
  percentPercentile75?: number;
  percentPercentile99?: number;
  volumeInBillions?: number;
  targetRateFrom?: number;
  targetRateTo?: number;
  revisionIndicator?: string;
}

const RATES = [
  { rate: 'sofr', path: 'secured/sofr', dataset: 'macro/nyfed-sofr-series', first: '2018-04-02' },
  { rate: 'bgcr', path: 'secured/bgcr', dataset: 'macro/nyfed-bgcr-series', first: '2018-04-02' },
  { rate: 'tgcr', path: 'secured/tgcr', dataset: 'macro/nyfed-tgcr-series', first: '2018-04-02' },
  { rate: 'effr', path: 'unsecured/effr', dataset: 'macro/nyfed-effr-series', first: '2016-03-01' },
  { rate: 'obfr', path: 'unsecured/obfr', dataset: 'macro/nyfed-obfr-series', first: '2016-03-01' },
] as const;

/** Days asked again before the last stored day: a published rate may be revised. */
const OVERLAP_DAYS = 5;
/** Days per request: a year of business days is about 250 rates. */
const WINDOW_DAYS = 365;
/** A first run that is not a backfill asks for the last month only. */
const FIRST_RUN_DAYS = 30;

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const only = context.options.rates as readonly string[] | undefined;
  for (const rate of RATES) {
    if (only && !only.includes(rate.rate)) continue;
    const last = context.cursor[rate.rate];
    let from =
      context.since ??
      (typeof last === 'string'
        ? addDays(last, -OVERLAP_DAYS)
        : context.backfill
          ? rate.first
          : addDays(context.today, -FIRST_RUN_DAYS));
    while (from <= context.today) {
      const to = minDate(addDays(from, WINDOW_DAYS - 1), context.today);
      const url = `${context.baseUrl}/api/rates/${rate.path}/search.json?startDate=${from}&endDate=${to}`;
      const body = json<{ refRates?: RefRate[] }>(await context.http.get(url));
      const rates = (body.refRates ?? []).filter((r) => r.type.toLowerCase() === rate.rate);
      const newest = rates.reduce<string | null>(
        (max, r) => (max === null || r.effectiveDate > max ? r.effectiveDate : max),
        null,
      );
      const stored =
        typeof context.cursor[rate.rate] === 'string' ? (context.cursor[rate.rate] as string) : null;
      const cursor = {
        ...context.cursor,
        [rate.rate]: newest !== null && (stored === null || newest > stored) ? newest : stored,
      };
      context.cursor = cursor;
      yield {
        dataset: rate.dataset,
        naturalKey: ['rate_type', 'effective_date'],
        url,
        cursor,
        records: rates.map((r, index) => ({
          where: `${url} refRates[${index}]`,
          values: {
            rate_type: r.type,
            effective_date: r.effectiveDate,
            percent_rate: r.percentRate ?? null,
            percentile_1: r.percentPercentile1 ?? null,
            percentile_25: r.percentPercentile25 ?? null,
            percentile_75: r.percentPercentile75 ?? null,
            percentile_99: r.percentPercentile99 ?? null,
            volume_in_billions: r.volumeInBillions ?? null,
            target_rate_from: r.targetRateFrom ?? null,
            target_rate_to: r.targetRateTo ?? null,
            revision_indicator: r.revisionIndicator ? r.revisionIndicator : null,
          },
        })),
      };
      from = addDays(to, 1);
    }
  }
}

export const nyfed: Source = {
  id: 'nyfed',
  title: 'NY Fed reference rates (SOFR, BGCR, TGCR, EFFR, OBFR)',
  publisher: 'Federal Reserve Bank of New York',
  licence: 'NY Fed Terms of Use for reference rates; attribution: Source: Federal Reserve Bank of New York',
  datasets: RATES.map((r) => r.dataset),
  baseUrl: 'https://markets.newyorkfed.org',
  perSecond: 2,
  // The rates are published about 8:00 New York time on the next business day.
  schedule: '30 13 * * 1-5',
  run,
};
