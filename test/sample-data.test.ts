/**
 * Sample rows on the data's own calendar: trading days for market data, ending at now, one price path
 * per symbol shared by every dataset that carries it, and the same rows for the same definition and now.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadCatalogFile } from '../src/catalog/catalog-file.ts';
import { isUsTradingDay, MS_DAY, usMarketHolidays } from '../src/catalog/sample-calendar.ts';
import { generateSampleRows } from '../src/catalog/sample-data.ts';
import type { DatasetDef, Row } from '../src/catalog/types.ts';

const root = new URL('..', import.meta.url).pathname;
const datasets: readonly DatasetDef[] = loadCatalogFile(join(root, 'config/catalog.json')).datasets;

function dataset(key: string): DatasetDef {
  const found = datasets.find((d) => d.key === key);
  assert.ok(found, `no dataset ${key}`);
  return found;
}

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / MS_DAY;
const iso = (d: number) => new Date(d * MS_DAY).toISOString().slice(0, 10);
const dateOf = (def: DatasetDef, row: Row) => String(row[def.time_field]).slice(0, 10);

/** Saturday 2026-11-21, 15:00 UTC: the test server's clock. */
const NOW = Date.parse('2026-11-21T15:00:00Z');

const DAILY_PRICES = ['equities/stock-prices', 'eodquotes/stock-prices', 'stocks/prices'];

test('US market holidays: the regular NYSE holidays, weekend ones observed on the nearest weekday', () => {
  const list = (year: number) => [...usMarketHolidays(year)].sort((a, b) => a - b).map(iso);
  assert.deepEqual(list(2026), [
    '2026-01-01',
    '2026-01-19',
    '2026-02-16',
    '2026-04-03',
    '2026-05-25',
    '2026-06-19',
    '2026-07-03',
    '2026-09-07',
    '2026-11-26',
    '2026-12-25',
  ]);
  assert.deepEqual(list(2027), [
    '2027-01-01',
    '2027-01-18',
    '2027-02-15',
    '2027-03-26',
    '2027-05-31',
    '2027-06-18',
    '2027-07-05',
    '2027-09-06',
    '2027-11-25',
    '2027-12-24',
  ]);
  // 2022: New Year's Day on a Saturday is not observed; Juneteenth and Christmas on Sundays move to Monday.
  assert.equal(list(2022).includes('2021-12-31'), false);
  assert.equal(list(2022)[0], '2022-01-17');
  assert.ok(list(2022).includes('2022-06-20') && list(2022).includes('2022-12-26'));
  assert.equal(
    list(2021).some((d) => d.endsWith('-06-18') || d.endsWith('-06-19')),
    false,
    'Juneteenth from 2022',
  );
  assert.equal(isUsTradingDay(day('2026-11-27')), true, 'the day after Thanksgiving trades');
  assert.equal(isUsTradingDay(day('2026-11-22')), false, 'a Sunday');
});

test('daily market data has rows on trading days only: no weekend, no holiday', () => {
  const market = datasets.filter((d) => d.sample.calendar === 'us-market');
  assert.ok(market.length >= 10, 'stocks, quotes, features and the daily rates are on the market calendar');
  for (const key of [
    ...DAILY_PRICES,
    'intradayquotes/stock-prices',
    'trading/symbol-quotes',
    'analytics/features',
  ])
    assert.ok(
      market.some((d) => d.key === key),
      `${key} is on the market calendar`,
    );
  // Over a span with Thanksgiving, Independence Day (observed on Friday 3 July) and Juneteenth.
  for (const now of [NOW, Date.parse('2026-07-06T12:00:00Z')]) {
    for (const d of market) {
      const days = new Set(generateSampleRows(d, now).map((r) => dateOf(d, r)));
      for (const date of days) assert.ok(isUsTradingDay(day(date)), `${d.key} has a row on ${date}`);
    }
  }
  const july = new Set(
    generateSampleRows(dataset('stocks/prices'), Date.parse('2026-07-06T12:00:00Z')).map((r) => r.date),
  );
  for (const holiday of ['2026-07-03', '2026-07-04', '2026-06-19', '2026-05-25'])
    assert.equal(july.has(holiday), false, holiday);
  assert.ok(july.has('2026-07-02') && july.has('2026-07-06'));
});

test('the last row is the last business day on or before now', () => {
  const cases: [string, string][] = [
    ['2026-11-21T15:00:00Z', '2026-11-20'], // Saturday: Friday
    ['2026-11-23T00:30:00Z', '2026-11-23'], // Monday: that day
    ['2026-11-26T18:00:00Z', '2026-11-25'], // Thanksgiving: the Wednesday before
    ['2026-11-28T09:00:00Z', '2026-11-27'], // Saturday after Thanksgiving: the Friday
    ['2027-01-01T12:00:00Z', '2026-12-31'], // New Year's Day
  ];
  for (const [now, last] of cases) {
    for (const key of DAILY_PRICES) {
      const d = dataset(key);
      const rows = generateSampleRows(d, Date.parse(now));
      assert.equal(rows.at(-1)?.date, last, `${key} at ${now}`);
      assert.equal(
        new Set(rows.map((r) => r.date)).size,
        d.sample.periods,
        `${key}: ${d.sample.periods} days`,
      );
    }
  }
  // Intraday bars stop at now: none starts later.
  const bars = generateSampleRows(dataset('intradayquotes/stock-prices'), Date.parse('2026-11-23T16:00:00Z'));
  assert.equal(bars.at(-1)?.bar_start, '2026-11-23T15:30:00Z');
});

test('monthly, quarterly, weekly and hourly samples end on their last period by now', () => {
  const last = (key: string) => {
    const d = dataset(key);
    return generateSampleRows(d, NOW).at(-1)?.[d.time_field];
  };
  // Dated on the 1st, a month stands for the whole month: October is the last one over by 21 November.
  assert.equal(last('economics/bls-series'), '2026-10-01');
  assert.equal(last('macro/treasury-tic-series'), '2026-10-31');
  assert.equal(last('holdings/stock'), '2026-09-30');
  assert.equal(last('economics/imf-series'), '2025-01-01');
  // COT positions are as of Tuesdays.
  assert.equal(last('cot/legacy-futures'), '2026-11-17');
  assert.equal(last('system/api-usage'), '2026-11-21T15:00:00Z');
});

test('scheduled calendars keep their span into the future, with no outcome for events not yet released', () => {
  const d = dataset('calendar/bls-events');
  assert.equal(d.sample.scheduled, true);
  const rows = generateSampleRows(d, NOW);
  assert.ok(String(rows.at(-1)?.[d.time_field]) >= '2027-12-31');
  const future = rows.filter((r) => String(r[d.time_field]) > '2026-11-21T15:00:00Z');
  assert.ok(future.length > 0 && future.every((r) => r.actual === null));
});

test("every dataset that carries a symbol's daily bar agrees on it for the same date", () => {
  const bySymbolDate = new Map<string, { key: string; bar: string }>();
  let compared = 0;
  for (const key of DAILY_PRICES) {
    for (const r of generateSampleRows(dataset(key), NOW)) {
      const id = `${r.symbol} ${r.date}`;
      const bar = JSON.stringify([r.open, r.high, r.low, r.close, r.volume]);
      const seen = bySymbolDate.get(id);
      if (seen) {
        assert.equal(bar, seen.bar, `${id}: ${key} and ${seen.key} disagree`);
        compared++;
      } else bySymbolDate.set(id, { key, bar });
    }
  }
  assert.ok(compared >= 30 * 30 * 2, `${compared} bars compared`);
  // The intraday bars and quotes of a day end on its close.
  const close = (symbol: string, date: string) => {
    const bar = bySymbolDate.get(`${symbol} ${date}`);
    assert.ok(bar, `${symbol} ${date}`);
    return (JSON.parse(bar.bar) as number[])[3];
  };
  const bars = generateSampleRows(dataset('intradayquotes/stock-prices'), NOW);
  const lastBar = bars
    .filter((r) => r.symbol === 'AAPL' && String(r.bar_start).startsWith('2026-11-20'))
    .at(-1);
  assert.equal(Math.round(Number(lastBar?.close) * 100) / 100, close('AAPL', '2026-11-20'));
  const quotes = generateSampleRows(dataset('trading/symbol-quotes'), NOW);
  const lastQuote = quotes
    .filter((r) => r.symbol === 'MSFT' && String(r.quoted_at).startsWith('2026-11-19'))
    .at(-1);
  assert.equal(Math.round(Number(lastQuote?.mid_price) * 100) / 100, close('MSFT', '2026-11-19'));
});

test("a symbol's price path depends on the symbol and date only, not on the span sampled", () => {
  const d = dataset('stocks/prices');
  const long = generateSampleRows(d, NOW).filter((r) => r.symbol === 'NVDA');
  const short = generateSampleRows({ ...d, sample: { ...d.sample, periods: 5 } }, NOW).filter(
    (r) => r.symbol === 'NVDA',
  );
  assert.equal(short.length, 5);
  assert.deepEqual(short, long.slice(-5));
  // A week later, the days they share keep their closes.
  const later = generateSampleRows(d, NOW + 7 * MS_DAY).filter((r) => r.symbol === 'NVDA');
  const closes = new Map(long.map((r) => [r.date, r.close]));
  for (const r of later) if (closes.has(r.date)) assert.equal(r.close, closes.get(r.date), String(r.date));
});

test('sample rows are deterministic, and a bar is sane: low <= open, close <= high, open near the last close', () => {
  for (const key of [...DAILY_PRICES, 'intradayquotes/stock-prices']) {
    const d = dataset(key);
    const rows = generateSampleRows(d, NOW);
    assert.deepEqual(generateSampleRows(d, NOW), rows, `${key} differs between runs`);
    const previous = new Map<string, number>();
    for (const r of rows) {
      const [open, high, low, close] = [r.open, r.high, r.low, r.close].map(Number) as [
        number,
        number,
        number,
        number,
      ];
      assert.ok(low <= Math.min(open, close) && high >= Math.max(open, close), `${key} ${r.symbol} bar`);
      const before = previous.get(String(r.symbol));
      if (before !== undefined) assert.ok(Math.abs(open / before - 1) < 0.03, `${key} ${r.symbol} gap`);
      previous.set(String(r.symbol), close);
      assert.ok(Number(r.volume) > 0);
    }
  }
  // Prices stay near their level: AAPL's sample close is within a third of its configured 268.
  for (const r of generateSampleRows(dataset('stocks/prices'), NOW))
    if (r.symbol === 'AAPL') assert.ok(Math.abs(Number(r.close) / 268 - 1) < 0.33, String(r.close));
});
