/**
 * The built-in planner over a table of questions: each answerable one with the analysis it must produce
 * (written as series | steps | outputs), each ambiguous or unanswerable one with the question it must ask
 * back and its candidates. Today is 2026-11-21 (UTC) for relative dates.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Catalog } from '../../../src/catalog/catalog.ts';
import { loadCatalogFile } from '../../../src/catalog/catalog-file.ts';
import { BuiltInPlanner } from '../../../src/domain/analysis/built-in-planner.ts';
import { checkSpec } from '../../../src/domain/analysis/check.ts';
import type { PlannerTools, PlanOutcome } from '../../../src/domain/analysis/planner.ts';
import { declineOf } from '../../../src/domain/analysis/scope.ts';
import type { AnalysisSpec } from '../../../src/domain/analysis/spec.ts';
import { analysisSpec } from '../../../src/domain/analysis/spec.ts';

const catalog = new Catalog(loadCatalogFile('config/catalog.json').datasets, {
  listCostOf: () => 2,
  isP0: () => false,
});
const planner = new BuiltInPlanner(catalog);
const TODAY = '2026-11-21';
const noTools = {} as PlannerTools;

/** series `id:dataset{entity}.field[from..to]`, then steps `op>as/window`, then outputs `kind:values`. */
function shape(spec: AnalysisSpec): string {
  const series = spec.series
    .map((s) => `${s.id}:${s.dataset}${JSON.stringify(s.entity)}.${s.field}[${s.from ?? ''}..${s.to ?? ''}]`)
    .join(' ');
  const steps = spec.steps
    .map((s) => s.op + ('as' in s ? `>${s.as}` : '') + ('window' in s ? `/${s.window}` : ''))
    .join(' ');
  const outputs = spec.outputs.map((o) => `${o.kind}:${o.values.join(',')}`).join(' ');
  return `${series} | ${steps} | ${outputs}`;
}

const answered: [string, string][] = [
  [
    'compare AAPL and MSFT closes since 2024-01-01',
    'aapl:stocks/prices{"symbol":"AAPL"}.close[2024-01-01..] msft:stocks/prices{"symbol":"MSFT"}.close[2024-01-01..] |  | line:aapl,msft stats:aapl,msft',
  ],
  [
    '10-year minus 2-year Treasury yield since 2020',
    'y10:macro/treasury-yield-series{"tenor":"10 Yr"}.par_yield[2020-01-01..] y2:macro/treasury-yield-series{"tenor":"2 Yr"}.par_yield[2020-01-01..] | spread>spread | line:spread stats:spread',
  ],
  [
    'net non-commercial position in gold futures, last 52 weeks',
    'net:cot/legacy-futures{"market_and_exchange_names":"GOLD - COMMODITY EXCHANGE INC."}.net:noncommercial[2025-11-22..] |  | line:net stats:net',
  ],
  [
    'correlation of AAPL and MSFT over the last year',
    'aapl:stocks/prices{"symbol":"AAPL"}.close[2025-11-21..] msft:stocks/prices{"symbol":"MSFT"}.close[2025-11-21..] | pct_change>aapl_ret pct_change>msft_ret correlation>correlation | table:correlation',
  ],
  [
    '30-day volatility of NVDA',
    'nvda:stocks/prices{"symbol":"NVDA"}.close[..] | log_returns>nvda_lr rolling_std>nvda_vol/30 | line:nvda_vol stats:nvda_vol',
  ],
  [
    'rebase AAPL and MSFT to 100 from 2026-10-15',
    'aapl:stocks/prices{"symbol":"AAPL"}.close[2026-10-15..] msft:stocks/prices{"symbol":"MSFT"}.close[2026-10-15..] | rebase>aapl_100 rebase>msft_100 | line:aapl_100,msft_100',
  ],
  [
    'beta of AAPL against MSFT',
    'aapl:stocks/prices{"symbol":"AAPL"}.close[..] msft:stocks/prices{"symbol":"MSFT"}.close[..] | pct_change>aapl_ret pct_change>msft_ret beta>beta | table:beta',
  ],
  [
    'max drawdown of TSLA since 2026-10-01',
    'tsla:stocks/prices{"symbol":"TSLA"}.close[2026-10-01..] | drawdown>tsla_dd | table:tsla_dd line:tsla',
  ],
  [
    'Treasury yield curve on 2026-11-02',
    'yields:macro/treasury-yield-series{}.par_yield[2026-10-19..2026-11-02] | curve>curve | bar:curve table:curve',
  ],
  [
    '2s10s since 2026-09-01',
    'y10:macro/treasury-yield-series{"tenor":"10 Yr"}.par_yield[2026-09-01..] y2:macro/treasury-yield-series{"tenor":"2 Yr"}.par_yield[2026-09-01..] | spread>spread | line:spread stats:spread',
  ],
  [
    'managed money net position in crude oil',
    'net:cot/disaggregated-futures{"market_and_exchange_names":"WTI-PHYSICAL - NEW YORK MERCANTILE EXCHANGE"}.net:m_money[2025-11-22..] |  | line:net stats:net',
  ],
  [
    'Apple vs Microsoft',
    'aapl:stocks/prices{"symbol":"AAPL"}.close[..] msft:stocks/prices{"symbol":"MSFT"}.close[..] |  | line:aapl,msft stats:aapl,msft',
  ],
  [
    'DGS10 minus DGS2',
    'dgs10:macro/fed-h15-series{"series_id":"DGS10"}.value[..] dgs2:macro/fed-h15-series{"series_id":"DGS2"}.value[..] | spread>spread | line:spread stats:spread',
  ],
  [
    'monthly average of AAPL close',
    'aapl:stocks/prices{"symbol":"AAPL"}.close[..] | resample>aapl_month | bar:aapl_month table:aapl_month',
  ],
  [
    '20-day moving average of Boeing',
    'ba:stocks/prices{"symbol":"BA"}.close[..] | rolling_mean>ba_ma/20 | line:ba,ba_ma',
  ],
  [
    'year-over-year change in DGS10',
    'dgs10:macro/fed-h15-series{"series_id":"DGS10"}.value[..] | yoy>dgs10_yoy | line:dgs10_yoy',
  ],
  [
    'z-score of JPM over 20 days',
    'jpm:stocks/prices{"symbol":"JPM"}.close[..] | rolling_zscore>jpm_z/20 | line:jpm_z',
  ],
  [
    'ratio of AAPL to MSFT in 2026',
    'aapl:stocks/prices{"symbol":"AAPL"}.close[2026-01-01..2026-12-31] msft:stocks/prices{"symbol":"MSFT"}.close[2026-01-01..2026-12-31] | ratio>ratio | line:ratio stats:ratio',
  ],
  [
    'percentile rank of net speculator position in gold over 26 weeks',
    'net:cot/legacy-futures{"market_and_exchange_names":"GOLD - COMMODITY EXCHANGE INC."}.net:noncommercial[2025-11-22..] | percentile_rank>net_rank/26 | line:net line:net_rank stats:net',
  ],
  [
    'yield on the 7-year note',
    'y7:macro/treasury-yield-series{"tenor":"7 Yr"}.par_yield[..] |  | line:y7 stats:y7',
  ],
  [
    'AAPL volume last 3 months',
    'aapl:stocks/prices{"symbol":"AAPL"}.volume[2026-08-21..] |  | line:aapl stats:aapl',
  ],
  [
    'daily returns of Home Depot',
    'hd:stocks/prices{"symbol":"HD"}.close[..] | pct_change>hd_ret | line:hd_ret stats:hd_ret',
  ],
  [
    'plot DFF since 2026-09-01',
    'dff:macro/fed-h15-series{"series_id":"DFF"}.value[2026-09-01..] |  | line:dff stats:dff',
  ],
  [
    'compare the fed funds rate and the prime rate',
    'dff:macro/fed-h15-series{"series_id":"DFF"}.value[..] dprime:macro/fed-h15-series{"series_id":"DPRIME"}.value[..] |  | line:dff,dprime stats:dff,dprime',
  ],
  [
    'weekly last close of MSFT',
    'msft:stocks/prices{"symbol":"MSFT"}.close[..] | resample>msft_week | bar:msft_week table:msft_week',
  ],
  [
    'quarterly sum of AAPL volume',
    'aapl:stocks/prices{"symbol":"AAPL"}.volume[..] | resample>aapl_quarter | bar:aapl_quarter table:aapl_quarter',
  ],
  [
    'MSFT adjusted close since 2026-10-01',
    'msft:stocks/prices{"symbol":"MSFT"}.adj_close[2026-10-01..] |  | line:msft stats:msft',
  ],
  [
    'net commercial position in corn over the past 6 months',
    'net:cot/legacy-futures{"market_and_exchange_names":"CORN - CHICAGO BOARD OF TRADE"}.net:commercial[2026-05-21..] |  | line:net stats:net',
  ],
  [
    'Treasury yield curve',
    'yields:macro/treasury-yield-series{}.par_yield[2026-11-07..2026-11-21] | curve>curve | bar:curve table:curve',
  ],
  [
    '10-year minus 3-month treasury spread between 2026-09-01 and 2026-10-31',
    'y10:macro/treasury-yield-series{"tenor":"10 Yr"}.par_yield[2026-09-01..2026-10-31] m3:macro/treasury-yield-series{"tenor":"3 Mo"}.par_yield[2026-09-01..2026-10-31] | spread>spread | line:spread stats:spread',
  ],
  [
    'correlation of AAPL, MSFT and NVDA returns in 2026',
    'aapl:stocks/prices{"symbol":"AAPL"}.close[2026-01-01..2026-12-31] msft:stocks/prices{"symbol":"MSFT"}.close[2026-01-01..2026-12-31] nvda:stocks/prices{"symbol":"NVDA"}.close[2026-01-01..2026-12-31] | pct_change>aapl_ret pct_change>msft_ret pct_change>nvda_ret correlation>correlation | table:correlation',
  ],
  [
    'volatility of Tesla over 10 days',
    'tsla:stocks/prices{"symbol":"TSLA"}.close[..] | log_returns>tsla_lr rolling_std>tsla_vol/10 | line:tsla_vol stats:tsla_vol',
  ],
  [
    'rebase Visa and Walmart to 100',
    'v:stocks/prices{"symbol":"V"}.close[..] wmt:stocks/prices{"symbol":"WMT"}.close[..] | rebase>v_100 rebase>wmt_100 | line:v_100,wmt_100',
  ],
  [
    'percent change of CAT since 2026-11-01',
    'cat:stocks/prices{"symbol":"CAT"}.close[2026-11-01..] | pct_change>cat_ret | line:cat_ret stats:cat_ret',
  ],
  [
    'drawdown of Amazon',
    'amzn:stocks/prices{"symbol":"AMZN"}.close[..] | drawdown>amzn_dd | table:amzn_dd line:amzn',
  ],
  [
    'net managed money position in natural gas with percentile rank',
    'net:cot/disaggregated-futures{"market_and_exchange_names":"NAT GAS NYME - NEW YORK MERCANTILE EXCHANGE"}.net:m_money[2025-11-22..] | percentile_rank>net_rank/52 | line:net line:net_rank stats:net',
  ],
  [
    'compare Nike and Goldman Sachs closes, past 2 weeks',
    'nke:stocks/prices{"symbol":"NKE"}.close[2026-11-07..] gs:stocks/prices{"symbol":"GS"}.close[2026-11-07..] |  | line:nke,gs stats:nke,gs',
  ],
  [
    'value of DGS10 and DGS2 in macro/fed-h15-series since 2026-09-01',
    'dgs10:macro/fed-h15-series{"series_id":"DGS10"}.value[2026-09-01..] dgs2:macro/fed-h15-series{"series_id":"DGS2"}.value[2026-09-01..] |  | line:dgs10,dgs2 stats:dgs10,dgs2',
  ],
  [
    'open interest of GOLD in cot/legacy-futures since 2026-01-01',
    'gold:cot/legacy-futures{"market_and_exchange_names":"GOLD - COMMODITY EXCHANGE INC."}.open_interest_all[2026-01-01..] |  | line:gold stats:gold',
  ],
  [
    'weekly sum of open interest of corn in cot/disaggregated-futures',
    'corn:cot/disaggregated-futures{"market_and_exchange_names":"CORN - CHICAGO BOARD OF TRADE"}.open_interest_all[..] | resample>corn_week | bar:corn_week table:corn_week',
  ],
  [
    '30-day volatility of AAPL in eodquotes/stock-prices',
    'aapl:eodquotes/stock-prices{"symbol":"AAPL"}.close[..] | log_returns>aapl_lr rolling_std>aapl_vol/30 | line:aapl_vol stats:aapl_vol',
  ],
  [
    'par yield of 10 Yr in rates/treasury-yield-series',
    's1:rates/treasury-yield-series{"tenor":"10 Yr"}.par_yield[..] |  | line:s1 stats:s1',
  ],
  // A month is a date constraint too: this year's when it has begun, else last year's.
  ['AAPL since January', 'aapl:stocks/prices{"symbol":"AAPL"}.close[2026-01-01..] |  | line:aapl stats:aapl'],
  [
    'AAPL since December',
    'aapl:stocks/prices{"symbol":"AAPL"}.close[2025-12-01..] |  | line:aapl stats:aapl',
  ],
  [
    'compare AAPL and MSFT from March 2025',
    'aapl:stocks/prices{"symbol":"AAPL"}.close[2025-03-01..] msft:stocks/prices{"symbol":"MSFT"}.close[2025-03-01..] |  | line:aapl,msft stats:aapl,msft',
  ],
  [
    'MSFT in Feb 2024',
    'msft:stocks/prices{"symbol":"MSFT"}.close[2024-02-01..2024-02-29] |  | line:msft stats:msft',
  ],
];

const clarified: [string, string, string[]][] = [
  ['compare APPL and MSFT', 'No symbol or series APPL in the catalog. Did you mean AAPL?', ['AAPL']],
  ['compare AAPL and MSF', 'No symbol or series MSF in the catalog. Did you mean MSFT?', ['MSFT']],
  ['compare XYZQ and MSFT', 'No symbol or series XYZQ in the catalog; the stocks are the ', []],
  [
    'net position in wheat futures',
    'Which market? 2 match: WHEAT-SRW, WHEAT-HRW.',
    ['WHEAT-SRW - CHICAGO BOARD OF TRADE', 'WHEAT-HRW - CHICAGO BOARD OF TRADE'],
  ],
  [
    'net position in gold',
    'Whose position in GOLD? Name a trader class.',
    ['non-commercial', 'commercial', 'non-reportable', 'managed money'],
  ],
  ['what is the weather in Paris', 'I could not find a dataset series in that question. I can an', []],
  ['', 'Ask a question about the data. I can answer questions such a', []],
  [
    'correlation of AAPL',
    'A correlation needs two or more series; I found only AAPL. N',
    ['MSFT', 'AAPL', 'NVDA'],
  ],
  ['beta of AAPL', 'A beta is of one series against another; name the benchmark,', ['MSFT', 'AAPL', 'NVDA']],
  ['spread of AAPL, MSFT and NVDA', 'A spread is of exactly two series; I found 3: AAPL close and', []],
  [
    'treasury spread',
    'Which Treasury yields? Name the tenors, e.g. "10-year minus ',
    [
      '10-year minus 2-year Treasury yield',
      '10-year minus 3-month Treasury yield',
      '30-year minus 5-year Treasury yield',
    ],
  ],
  [
    'yield on the 4-year note',
    'There is no 4-year Treasury yield; the tenors are 1 Mo, 2 Mo',
    ['1 Mo', '2 Mo'],
  ],
  ['volatility of gold', 'The catalog has positioning (Commitments of Traders) for tha', []],
  ['rebase to 100 from 2024-01-01', 'I could not find a dataset series in that question. I can an', []],
  [
    'net managed money position in bitcoin',
    'The disaggregated report in the catalog has no BITCOIN marke',
    ['WHEAT-SRW - CHICAGO BOARD OF TRADE', 'WHEAT-HRW - CHICAGO BOARD OF TRADE'],
  ],
  [
    'plot macro/fed-h15-series',
    'Which series_id of macro/fed-h15-series? For example DFF, DTB3',
    ['DFF', 'DTB3', 'DGS3MO'],
  ],
  [
    'compare AAPL in stocks/pricez',
    'No dataset stocks/pricez. Did you mean stocks/prices or stocks/profiles?',
    ['stocks/prices', 'stocks/profiles'],
  ],
  [
    'noncommercial of gold in cot/legacy-futures',
    'Which field of cot/legacy-futures? These match noncommercial_long_all',
    ['noncommercial_long_all', 'noncommercial_short_all', 'noncommercial_spreading_all'],
  ],
];

describe('the built-in planner answers the documented question forms', () => {
  assert.ok(answered.length >= 30);
  for (const [question, expected] of answered) {
    test(question, async () => {
      const outcome: PlanOutcome = await planner.plan(question, noTools, TODAY);
      assert.equal(outcome.kind, 'analysis', JSON.stringify(outcome));
      if (outcome.kind !== 'analysis') return;
      assert.equal(shape(outcome.spec), expected);
      // Every plan is a valid spec that the catalog can run, and says what it reads.
      analysisSpec.parse(outcome.spec);
      checkSpec(outcome.spec, catalog);
      assert.match(outcome.explanation, /^Reads /);
      assert.deepEqual(
        outcome.transcript.map((m) => m.role),
        ['user', 'assistant'],
      );
    });
  }
});

describe('the built-in planner asks back rather than guess', () => {
  assert.ok(clarified.length >= 10);
  for (const [question, message, candidates] of clarified) {
    test(question || '(an empty question)', async () => {
      const outcome = await planner.plan(question, noTools, TODAY);
      assert.equal(outcome.kind, 'clarify', JSON.stringify(outcome));
      if (outcome.kind !== 'clarify') return;
      assert.ok(outcome.message.startsWith(message), outcome.message);
      assert.deepEqual(
        outcome.candidates.slice(0, candidates.length).map((c) => c.value),
        candidates,
      );
      if (outcome.candidates.length <= 4) assert.equal(outcome.candidates.length, candidates.length);
    });
  }
});

describe('the assistant declines forecasts and rankings before any planner sees them', () => {
  for (const question of [
    'what will AAPL close at next week',
    'forecast MSFT',
    'predict the 10-year yield',
    'where is the 2s10s spread going to be',
    'AAPL price tomorrow',
    'is NVDA going to rise',
  ]) {
    test(`a forecast: ${question}`, () => {
      const declined = declineOf(question);
      assert.equal(declined?.reason, 'forecast', question);
      assert.match(declined?.message ?? '', /past data only: it does not forecast or predict/);
    });
  }
  for (const question of [
    'which Dow stock rose most last month',
    'what stock had the highest return in 2025',
    'top performing stocks this year',
    'biggest losers since 2026-01-01',
  ]) {
    test(`a ranking: ${question}`, () => {
      const declined = declineOf(question);
      assert.equal(declined?.reason, 'unsupported', question);
      assert.match(declined?.message ?? '', /does not rank stocks .* Name the ones to compare instead/);
    });
  }
  test('no question the planner answers is declined', () => {
    for (const [question] of answered) assert.equal(declineOf(question), null, question);
  });
});

test('a question no form fits is marked unsupported; one to name better is not', async () => {
  const weather = await planner.plan('what is the weather in Paris', noTools, TODAY);
  assert.equal(weather.kind === 'clarify' && weather.unsupported, true);
  const typo = await planner.plan('compare APPL and MSFT', noTools, TODAY);
  assert.equal(typo.kind === 'clarify' && typo.unsupported === undefined, true);
});

test('a plan takes well under 10 ms', async () => {
  const started = process.cpuUsage();
  for (let i = 0; i < 100; i++)
    await planner.plan('correlation of AAPL, MSFT and NVDA returns in 2026', noTools, TODAY);
  const { user, system } = process.cpuUsage(started);
  assert.ok((user + system) / 100 < 10_000, `${(user + system) / 100} µs per plan`);
});

describe('the built-in planner asks back on an impossible date or range', () => {
  for (const [question, message] of [
    ['AAPL since the split', 'I could not read the date in "since the split"'],
    ['MSFT closes until next earnings', 'I could not read the date in "until next earnings"'],
    ['AAPL since 2024-13-45', 'There is no date 2024-13-45'],
    ['yield curve on 2024-02-30', 'There is no date 2024-02-30'],
    ['compare AAPL and MSFT from 2024-01-01 to 2023-12-31', 'The range 2024-01-01 to 2023-12-31 ends'],
    ['AAPL last 99999999999 years', 'The last 99999999999 years reach back'],
  ] as const) {
    test(question, async () => {
      const outcome = await planner.plan(question, noTools, TODAY);
      assert.equal(outcome.kind, 'clarify', JSON.stringify(outcome));
      if (outcome.kind !== 'clarify') return;
      assert.ok(outcome.message.startsWith(message), outcome.message);
      assert.deepEqual(outcome.candidates, []);
    });
  }
});
