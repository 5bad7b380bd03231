/** Rows shaped like the Federal Reserve's H.15 series (macro/fed-h15-series), for exports and loads. */
import type { Row } from '../../src/catalog/types.ts';

export const H15 = 'macro/fed-h15-series';

/** `count` daily rows of DGS10 from `from`; every seventh value is missing (null), as in the file. */
export function h15Rows(count: number, from = Date.UTC(2015, 0, 1)): Row[] {
  return Array.from({ length: count }, (_, i) => ({
    series_id: 'DGS10',
    h15_series: 'RIFLGFCY10_N.B',
    title: 'Market yield on U.S. Treasury securities at 10-year constant maturity',
    date: new Date(from + i * 86_400_000).toISOString().slice(0, 10),
    value: i % 7 === 0 ? null : Math.round(200 + i) / 100,
  }));
}
