/** Rows of `equities/stock-prices` for tests that load their own: every field, one price for the day. */
import type { Row } from '../../src/catalog/types.ts';

export function stockPriceRow(symbol: string, date: string, close: number, fields: Partial<Row> = {}): Row {
  return {
    symbol,
    exchange: 'NASDAQ',
    mic: 'XNAS',
    date,
    open: close,
    high: close,
    low: close,
    close,
    adj_close: close,
    vwap: close,
    volume: 1000,
    currency: 'USD',
    ...fields,
  };
}
