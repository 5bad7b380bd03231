/** Spec 8.1 and 8.4: every dataset key's list cost, and the charge of every tier, exact to the micro-token. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chargeMicros, formatMicros, percentToBasisPoints } from '../src/domain/money.ts';
import { makePricing, priceRead, tierFor } from '../src/domain/pricing.ts';
import type { PageQuery } from '../src/store/port.ts';
import {
  assertLedgerBalanced,
  baseConfig,
  bearer,
  startServer,
  TestClock,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

// Written out from spec 8.1, not read from configuration.
const cot =
  'cit_all-facts disaggregated_all-facts disaggregated_combined-facts disaggregated_futures-facts legacy_all-facts legacy_combined-facts legacy_futures-facts product_hierarchy-facts supplemental_cit-facts tff_all-facts tff_combined-facts tff_futures-facts';
const corp = 'agreements executive-compensation financial-statements money-flow';
const econSeries =
  'bea-series bls-series census-series eia-series eurostat-series imf-series oecd-series worldbank-series';
const rates =
  'nyfed-bgcr-series nyfed-effr-series nyfed-obfr-series nyfed-sofr-series nyfed-tgcr-series treasury-avg-rates-series treasury-debt-outstanding-series treasury-debt-series treasury-outlays-series treasury-tic-series treasury-yield-series';
const specTable: [number, string, string][] = [
  [10, 'filings', 'documents'],
  [10, 'sec', 'filing-documents'],
  [10, 'system', 'xbrl-frames'],
  [
    1,
    'system',
    'api-usage backfill-state collection-metadata data-collection-log extension-records sec-data-library-datasets sec-data-library-files sec-rss-entries sec-rss-feeds sync-metadata',
  ],
  [5, 'cftc', cot],
  [5, 'positioning', cot],
  [5, 'corporate', corp],
  [5, 'ecb', 'observations series'],
  [5, 'economics', 'ecb-observations ecb-series'],
  [5, 'economics', econSeries],
  [5, 'macro', econSeries],
  [5, 'macro', 'fed-ddp-series fed-h15-series'],
  [5, 'macro', rates],
  [5, 'rates', rates],
  [5, 'rates', 'fed-ddp-series fed-h15-series'],
  [5, 'filings', 'nport-reports'],
  [5, 'ownership', 'nport-holdings'],
  [5, 'sec', 'nport-holdings nport-reports'],
  [5, 'sec', corp],
  [2, 'analytics', 'features'],
  [2, 'calendar', 'bea-events bls-events census-events eia-events events fed-events'],
  [2, 'cftc', 'download-log metadata'],
  [2, 'positioning', 'download-log metadata'],
  [2, 'climate', 'epa-violations nasa-neo-approaches noaa-space-weather'],
  [2, 'development', 'usgs-minerals wb-commodity-prices'],
  [2, 'ecb', 'dataflows sync-state'],
  [2, 'economics', 'ecb-dataflows ecb-sync'],
  [2, 'econ', 'bea-events bls-events calendar census-rss-events eia-rss-events fed-events'],
  [2, 'equities', 'esma-instruments investors stock-prices stocks'],
  [2, 'market', 'esma-instruments investors stock-prices stocks warehouse-stocks'],
  [2, 'filings', 'download-queue edinet-filings headers news parse-log submissions unknown-forms'],
  [
    2,
    'geospatial',
    'geoboundaries-features gvp-volcanoes marine-regions-features nasa-firms-hotspots natural-earth-features spatial-asset-manifest wri-gppd-plants',
  ],
  [2, 'governance', 'finma-authorised finma-enforcement finma-regulatory uk-psc'],
  [2, 'holdings', 'stock'],
  [
    2,
    'maritime',
    'emodnet-vessel-density fleet-snapshots marine-cadastre-manifest port-activity vessel-events vessel-identity vessel-positions',
  ],
  [
    2,
    'open-data',
    'adb-data-library afdb-open-portal bis-statistics-extended carbon-monitor-daily cepalstat crossref-works datacommons-obs ecdc-packages eurlex-resources geoboundaries-features gvp-volcanoes hdx-ckan idb-sims jrc-mars-feed marine-regions-features nasa-firms-hotspots nasa-power-daily natural-earth-features obis-occurrences openalex-works openflights-airports opensky-snapshots owid-grapher pacific-data-hub pangaea-meta silso-monthly soilgrids-point spatial-asset-manifest unctadstat-indicators wb-projects wri-aqueduct-meta wri-gppd-plants',
  ],
  [2, 'ownership', 'beneficial-ownership exchange-hk-ccass holdings insider-transactions'],
  [
    2,
    'sec',
    'beneficial-ownership download-queue filing-headers filings holdings insider-transactions news-items parse-log unknown-forms',
  ],
  [2, 'trading', 'symbol-quotes'],
  [2, 'eodquotes', 'stock-prices stocks'],
  [2, 'intradayquotes', 'stock-prices stocks'],
];
const expectedCosts = new Map<string, number>();
for (const [cost, domain, names] of specTable) {
  for (const name of names.split(' ')) expectedCosts.set(`${domain}/${name}`, cost);
}

// [tier level, list cost, Terminal, expected charge in tokens]: list x (1 - discount) x 1.35 if Terminal.
const chargeTable: [number, number, boolean, string][] = [
  [1, 1, false, '1'],
  [1, 1, true, '1.35'],
  [1, 2, false, '2'],
  [1, 2, true, '2.7'],
  [1, 5, false, '5'],
  [1, 5, true, '6.75'],
  [1, 10, false, '10'],
  [1, 10, true, '13.5'],
  [2, 1, false, '0.98'],
  [2, 1, true, '1.323'],
  [2, 2, false, '1.96'],
  [2, 2, true, '2.646'],
  [2, 5, false, '4.9'],
  [2, 5, true, '6.615'],
  [2, 10, false, '9.8'],
  [2, 10, true, '13.23'],
  [3, 1, false, '0.95'],
  [3, 1, true, '1.2825'],
  [3, 2, false, '1.9'],
  [3, 2, true, '2.565'],
  [3, 5, false, '4.75'],
  [3, 5, true, '6.4125'],
  [3, 10, false, '9.5'],
  [3, 10, true, '12.825'],
  [4, 1, false, '0.92'],
  [4, 1, true, '1.242'],
  [4, 2, false, '1.84'],
  [4, 2, true, '2.484'],
  [4, 5, false, '4.6'],
  [4, 5, true, '6.21'],
  [4, 10, false, '9.2'],
  [4, 10, true, '12.42'],
  [5, 1, false, '0.88'],
  [5, 1, true, '1.188'],
  [5, 2, false, '1.76'],
  [5, 2, true, '2.376'],
  [5, 5, false, '4.4'],
  [5, 5, true, '5.94'],
  [5, 10, false, '8.8'],
  [5, 10, true, '11.88'],
  [6, 1, false, '0.85'],
  [6, 1, true, '1.1475'],
  [6, 2, false, '1.7'],
  [6, 2, true, '2.295'],
  [6, 5, false, '4.25'],
  [6, 5, true, '5.7375'],
  [6, 10, false, '8.5'],
  [6, 10, true, '11.475'],
  [7, 1, false, '0.8'],
  [7, 1, true, '1.08'],
  [7, 2, false, '1.6'],
  [7, 2, true, '2.16'],
  [7, 5, false, '4'],
  [7, 5, true, '5.4'],
  [7, 10, false, '8'],
  [7, 10, true, '10.8'],
  [8, 1, false, '0.75'],
  [8, 1, true, '1.0125'],
  [8, 2, false, '1.5'],
  [8, 2, true, '2.025'],
  [8, 5, false, '3.75'],
  [8, 5, true, '5.0625'],
  [8, 10, false, '7.5'],
  [8, 10, true, '10.125'],
];
// Spec 2.4 min_tokens per level, written out.
const minTokens = [0, 500, 2000, 5000, 15000, 50000, 150000, 500000];

describe('list costs (spec 8.1)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('the spec table has 206 priced keys', () => {
    assert.equal(expectedCosts.size, 206);
  });

  test('GET /api/v1/pricing serves exactly the spec cost of every key, and the default of 2', async () => {
    const res = await server.request('GET', '/api/v1/pricing');
    assert.equal(res.status, 200);
    assert.deepEqual(new Map(Object.entries(res.json.endpoint_costs)), expectedCosts);
    assert.equal(res.json.default_endpoint_cost, 2);
    assert.equal(res.json.eur_per_token, 0.1);
    assert.equal(res.json.terminal_surcharge_percent, 35);
  });

  test('the catalog prices every key as the spec does, and unpriced datasets at the default', async () => {
    const res = await server.request('GET', '/api/v1/catalog');
    assert.equal(res.status, 200);
    const listed = new Map<string, number>(
      res.json.data.map((e: { key: string; list_cost: number }) => [e.key, e.list_cost]),
    );
    for (const [key, cost] of expectedCosts) assert.equal(listed.get(key), cost, key);
    for (const [key, cost] of listed) if (!expectedCosts.has(key)) assert.equal(cost, 2, key);
    for (const domain of ['cot', 'stocks', 'eodquotes', 'intradayquotes']) {
      assert.ok(
        [...listed.keys()].some((k) => k.startsWith(`${domain}/`)),
        `a dataset in ${domain}/`,
      );
    }
  });
});

describe('charges (spec 8.4, DECISIONS Money)', () => {
  const pricing = makePricing(baseConfig());

  test('every tier x list cost 1, 2, 5, 10 x Terminal on/off is exact to the micro-token', () => {
    assert.equal(chargeTable.length, 64);
    for (const [level, listCost, terminal, expected] of chargeTable) {
      const tier = pricing.tiers.find((t) => t.level === level);
      assert.ok(tier);
      const charge = priceRead(pricing, listCost, tier, terminal ? 'terminal' : 'rest');
      assert.equal(formatMicros(charge), expected, `level ${level}, cost ${listCost}, terminal ${terminal}`);
    }
  });

  test('the tier is the highest whose min_tokens the month burn reaches', () => {
    minTokens.forEach((min, index) => {
      assert.equal(tierFor(pricing, BigInt(min) * 1_000_000n).level, index + 1);
      if (min > 0) assert.equal(tierFor(pricing, BigInt(min) * 1_000_000n - 1n).level, index);
    });
  });

  test('an inexact configuration rounds half up to the micro-token', () => {
    // 1 token at 33.33% off is 0.6667 tokens exactly; 0.000001 at 50% off is 0.0000005 -> 0.000001.
    assert.equal(
      formatMicros(
        chargeMicros({
          listCostTokens: 1,
          discountBasisPoints: 3333n,
          terminal: false,
          terminalSurchargePercent: 35n,
        }),
      ),
      '0.6667',
    );
    assert.equal(
      chargeMicros({
        listCostTokens: 0.000001,
        discountBasisPoints: 5000n,
        terminal: false,
        terminalSurchargePercent: 35n,
      }),
      1n,
    );
    assert.equal(
      chargeMicros({
        listCostTokens: 0.000001,
        discountBasisPoints: 5001n,
        terminal: false,
        terminalSurchargePercent: 35n,
      }),
      0n,
    );
    assert.throws(() => percentToBasisPoints(2.555));
  });
});

describe('a read that straddles a UTC month change', () => {
  let server: TestServer;
  let hold: Promise<void> | null = null;
  let held: () => void = () => {};
  before(async () => {
    server = await startServer({
      clock: new TestClock(Date.parse('2026-11-30T23:59:59.900Z')),
      config: (c) => {
        for (const tier of c.pricing.loyalty_tiers) tier.rate_limit = 100_000;
      },
      wrapStore: (store) =>
        new Proxy(store, {
          get(target, property, receiver) {
            if (property === 'queryPage') {
              return async (query: PageQuery) => {
                if (hold && query.dataset === 'macro/fed-h15-series') {
                  held();
                  await hold;
                }
                return target.queryPage(query);
              };
            }
            const value = Reflect.get(target, property, receiver);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
    });
  });
  after(async () => {
    await assertLedgerBalanced(server);
    await server.close();
  });

  test('counts in its own month: the new month keeps its burn, and its tier', async () => {
    const { key } = await walletAccount(server, 10_000);
    let release: () => void = () => {};
    hold = new Promise((resolve) => {
      release = resolve;
    });
    const entered = new Promise<void>((resolve) => {
      held = resolve;
    });
    // Begun on 30 November, held while December's first reads commit.
    const late = server.request('GET', '/api/v1/data/macro/fed-h15-series?limit=1', { headers: bearer(key) });
    await entered;
    server.clock.t = Date.parse('2026-12-01T00:00:00.100Z');
    for (let i = 0; i < 50; i++) {
      const read = await server.request('GET', '/api/v1/data/filings/documents?limit=1', {
        headers: bearer(key),
      });
      assert.equal(read.headers.get('x-request-tokens'), '10', `read ${i}`);
    }
    hold = null;
    release();
    const lateRead = await late;
    assert.equal(lateRead.status, 200);
    assert.equal(lateRead.headers.get('x-request-tokens'), '5', 'charged, at November prices');
    const me = await server.request('GET', '/api/v1/me', { headers: bearer(key) });
    assert.equal(me.json.burned_this_month, '500', 'December keeps its 500');
    assert.equal(me.json.tier.level, 2);
    const next = await server.request('GET', '/api/v1/data/filings/documents?limit=1', {
      headers: bearer(key),
    });
    assert.equal(next.headers.get('x-token-cost'), '9.8', 'the second tier: 2% off');
  });
});
