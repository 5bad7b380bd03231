/** The shipped catalog (config/catalog.json): coverage of the price map, schema and sample rows. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadCatalogFile } from '../src/catalog/catalog-file.ts';
import { generateSampleRows } from '../src/catalog/sample-data.ts';
import type { DatasetDef, FieldType, Row, Scalar } from '../src/catalog/types.ts';
import { DOW30 } from '../src/domain/recipes.ts';

const root = new URL('..', import.meta.url).pathname;
const catalogPath = join(root, 'config/catalog.json');
const servicePath = join(root, 'config/service.json');

const datasets: readonly DatasetDef[] = loadCatalogFile(catalogPath).datasets;
const service = JSON.parse(readFileSync(servicePath, 'utf8')) as {
  pricing: { endpoint_costs: Record<string, number>; free_public_test: { free_domains: string[] } };
};
// The test server's clock: Saturday 2026-11-21, 15:00 UTC.
const NOW = Date.parse('2026-11-21T15:00:00Z');
const rowsByKey = new Map<string, Row[]>(datasets.map((d) => [d.key, generateSampleRows(d, NOW)]));

function dataset(key: string): DatasetDef {
  const found = datasets.find((d) => d.key === key || d.aliases.includes(key));
  assert.ok(found, `no dataset serves ${key}`);
  return found;
}
function rowsOf(key: string): Row[] {
  return rowsByKey.get(dataset(key).key) ?? [];
}

// Calendars must cover three full years with several events a day, so they may exceed the usual bound.
const MAX_ROWS = 2000;
const MAX_CALENDAR_ROWS = 5000;
const MIN_ROWS = 20;

test('every priced key is served by exactly one dataset, as its key or an alias', () => {
  const served = new Map<string, number>();
  for (const d of datasets) for (const k of [d.key, ...d.aliases]) served.set(k, (served.get(k) ?? 0) + 1);
  for (const key of Object.keys(service.pricing.endpoint_costs)) {
    assert.equal(served.get(key), 1, `${key} is served ${served.get(key) ?? 0} times`);
  }
  assert.ok(Object.keys(service.pricing.endpoint_costs).length > 0, 'the price map is empty');
});

test('the free domains without their own price have datasets: cot, stocks and both quote sources', () => {
  for (const domain of ['cot', 'stocks', 'eodquotes', 'intradayquotes']) {
    assert.ok(service.pricing.free_public_test.free_domains.includes(domain), `${domain} is a free domain`);
    const keys = datasets.flatMap((d) => [d.key, ...d.aliases]).filter((k) => k.startsWith(`${domain}/`));
    assert.ok(keys.length > 0, `no dataset in ${domain}/`);
  }
  for (const key of ['cot/legacy-futures', 'cot/disaggregated-futures', 'stocks/prices', 'stocks/profiles'])
    dataset(key);
  for (const key of [
    'eodquotes/stock-prices',
    'eodquotes/stocks',
    'intradayquotes/stock-prices',
    'intradayquotes/stocks',
  ])
    dataset(key);
});

test('aliases of two-domain keys point at one dataset', () => {
  assert.equal(dataset('positioning/legacy_futures-facts').key, 'cftc/legacy_futures-facts');
  assert.equal(dataset('economics/ecb-series').key, 'ecb/series');
  assert.equal(dataset('macro/bea-series').key, 'economics/bea-series');
  assert.equal(dataset('rates/nyfed-sofr-series').key, 'macro/nyfed-sofr-series');
  assert.equal(dataset('sec/filings').key, 'filings/submissions');
  assert.equal(dataset('market/stock-prices').key, 'equities/stock-prices');
  assert.equal(dataset('econ/calendar').key, 'calendar/events');
  assert.equal(dataset('open-data/gvp-volcanoes').key, 'geospatial/gvp-volcanoes');
});

function matchesType(type: FieldType, v: Scalar): boolean {
  switch (type) {
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'date':
      return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v);
    case 'datetime':
      return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(v);
    default:
      return typeof v === 'string';
  }
}

test('sample rows are deterministic and every field has its declared type (or null)', () => {
  for (const d of datasets) {
    const rows = rowsByKey.get(d.key) ?? [];
    assert.deepEqual(generateSampleRows(d, NOW), rows, `${d.key} differs between runs`);
    for (const row of rows) {
      assert.deepEqual(
        Object.keys(row),
        d.fields.map((f) => f.name),
        `${d.key}: row fields`,
      );
      for (const f of d.fields) {
        const v = row[f.name] ?? null;
        const nullable = f.name !== d.time_field && !d.entity_fields.includes(f.name);
        if (v === null && nullable) continue;
        assert.ok(matchesType(f.type, v), `${d.key}.${f.name}: ${JSON.stringify(v)} is not a ${f.type}`);
      }
    }
  }
});

test('sample rows are sorted by time, and number fields respect their decimals', () => {
  for (const d of datasets) {
    const rows = rowsByKey.get(d.key) ?? [];
    for (let i = 1; i < rows.length; i++) {
      assert.ok(
        String(rows[i - 1]?.[d.time_field]) <= String(rows[i]?.[d.time_field]),
        `${d.key} not sorted at row ${i}`,
      );
    }
    for (const f of d.fields.filter((x) => x.type === 'number')) {
      const decimals = f.sample?.decimals ?? 2;
      for (const row of rows) {
        const v = row[f.name];
        if (typeof v === 'number') assert.equal(v, Number(v.toFixed(decimals)), `${d.key}.${f.name} = ${v}`);
      }
    }
  }
});

test('each dataset has between 20 and 2,000 sample rows (calendars up to 5,000)', () => {
  for (const d of datasets) {
    const n = rowsByKey.get(d.key)?.length ?? 0;
    const perPeriod = d.sample.entities * (d.sample.per_period ?? 1);
    const expected = perPeriod * d.sample.periods;
    // Only the period now in progress may lack its rows timed after now.
    assert.ok(n <= expected && n > expected - perPeriod, `${d.key}: ${n} rows, expected ${expected}`);
    const max = d.key.startsWith('calendar/') || d.key.startsWith('econ/') ? MAX_CALENDAR_ROWS : MAX_ROWS;
    assert.ok(n >= MIN_ROWS && n <= max, `${d.key} has ${n} rows`);
  }
});

test('generating every dataset takes well under a second', () => {
  const started = performance.now();
  for (const d of datasets) generateSampleRows(d, NOW);
  const ms = performance.now() - started;
  assert.ok(ms < 5000, `took ${ms.toFixed(0)} ms`);
});

test('stock price datasets hold all 30 Dow constituents with at least 10 days up to the last trading day', () => {
  for (const key of [
    'equities/stock-prices',
    'market/stock-prices',
    'eodquotes/stock-prices',
    'intradayquotes/stock-prices',
    'stocks/prices',
  ]) {
    const d = dataset(key);
    const rows = rowsOf(key);
    for (const name of ['symbol', 'open', 'high', 'low', 'close', 'volume']) {
      assert.ok(
        d.fields.some((f) => f.name === name),
        `${key} lacks ${name}`,
      );
    }
    for (const symbol of DOW30) {
      const own = rows.filter((r) => r.symbol === symbol);
      const days = new Set(own.map((r) => String(r[d.time_field]).slice(0, 10)));
      assert.ok(days.size >= 10, `${key} ${symbol}: ${days.size} days`);
      assert.equal([...days].sort().at(-1), '2026-11-20', `${key} ${symbol}: last day`);
      for (const r of own) {
        const [open, high, low, close] = [r.open, r.high, r.low, r.close].map(Number) as [
          number,
          number,
          number,
          number,
        ];
        assert.ok(
          high >= Math.max(open, close) && low <= Math.min(open, close),
          `${key} ${symbol} ${r[d.time_field]}: bad OHLC`,
        );
      }
    }
  }
  assert.equal(
    dataset('intradayquotes/stock-prices').fields.find(
      (f) => f.name === dataset('intradayquotes/stock-prices').time_field,
    )?.type,
    'datetime',
  );
});

test('entity attributes line up: a symbol always has the same company data', () => {
  const rows = rowsOf('stocks/profiles');
  const names = new Map<string, Set<string>>();
  for (const r of rows)
    names.set(String(r.symbol), (names.get(String(r.symbol)) ?? new Set()).add(String(r.cik)));
  assert.deepEqual([...(names.get('AAPL') ?? [])], ['320193']);
  assert.deepEqual([...(names.get('TSLA') ?? [])], ['1318605']);
  const legacy = rowsOf('cot/legacy-futures').filter((r) => r.cftc_contract_market_code === '067651');
  assert.ok(
    legacy.length > 0 &&
      legacy.every((r) => r.market_and_exchange_names === 'WTI-PHYSICAL - NEW YORK MERCANTILE EXCHANGE'),
  );
});

const nyParts = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/New_York',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});
function newYork(iso: string): { date: string; time: string } {
  const parts = Object.fromEntries(nyParts.formatToParts(new Date(iso)).map((p) => [p.type, p.value]));
  return { date: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}` };
}

test('calendars cover every day of 2025-2027 with several events a day, and evenings in New York', () => {
  for (const d of datasets.filter((x) => x.key.startsWith('calendar/') || x.key.startsWith('econ/'))) {
    const tf = d.fields.find((f) => f.name === d.time_field);
    assert.equal(tf?.type, 'datetime', `${d.key} time field`);
    const perDay = new Map<string, Set<string>>();
    for (const r of rowsByKey.get(d.key) ?? []) {
      const t = String(r[d.time_field]);
      perDay.set(t.slice(0, 10), (perDay.get(t.slice(0, 10)) ?? new Set()).add(t.slice(11)));
    }
    for (let ms = Date.UTC(2025, 0, 1); ms <= Date.UTC(2027, 11, 31); ms += 86_400_000) {
      const day = new Date(ms).toISOString().slice(0, 10);
      assert.ok((perDay.get(day)?.size ?? 0) >= 2, `${d.key}: fewer than two event times on ${day}`);
    }
  }
  const events = rowsOf('calendar/events');
  for (const day of ['2026-11-21', '2027-06-30']) {
    const evening = events.filter((r) => {
      const local = newYork(String(r.datetime));
      return local.date === day && local.time >= '18:00';
    });
    assert.ok(evening.length > 0, `no calendar/events row after 18:00 New York time on ${day}`);
  }
});

test('a broken catalog is rejected with every problem, naming dataset and field', () => {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-'));
  const path = join(dir, 'catalog.json');
  const good = dataset('equities/stock-prices');
  const broken = {
    datasets: [
      {
        ...good,
        time_field: 'when',
        fields: [...good.fields, { name: 'close', type: 'number', description: 'again' }],
      },
      { ...dataset('stocks/prices'), aliases: ['market/stock-prices'], entity_fields: ['ticker'] },
      {
        ...dataset('holdings/stock'),
        sample: { ...dataset('holdings/stock').sample, calendar: 'us-market' },
        fields: dataset('holdings/stock').fields.map((f) =>
          f.name === 'institution_count' ? { ...f, sample: { ...f.sample, series: 'price' } } : f,
        ),
      },
    ],
  };
  writeFileSync(path, JSON.stringify(broken));
  assert.throws(
    () => loadCatalogFile(path),
    (err: Error) => {
      assert.match(
        err.message,
        /dataset "equities\/stock-prices": time_field "when" is not one of its fields/,
      );
      assert.match(err.message, /dataset "equities\/stock-prices" field "close": duplicate field name/);
      assert.match(err.message, /dataset "stocks\/prices": entity field "ticker" is not one of its fields/);
      assert.match(
        err.message,
        /key "market\/stock-prices" is already used by dataset "equities\/stock-prices"/,
      );
      assert.match(err.message, /dataset "holdings\/stock": sample.calendar applies to a step of "day"/);
      assert.match(
        err.message,
        /dataset "holdings\/stock" field "institution_count": sample.series needs a step of "day"/,
      );
      return true;
    },
  );
});
