/**
 * planner-words.ts: the words the built-in planner knows (stock fields, trader classes, COT markets,
 * tenors) and its edit distance for near spellings.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  distance,
  escapeRegExp,
  MARKET_WORDS,
  STOCK_FIELDS,
  TRADER_CLASSES,
  tenorMonths,
  UPPER_STOP,
} from '../../../src/domain/analysis/planner-words.ts';

const classOf = (text: string) => TRADER_CLASSES.find((c) => c.words.test(text))?.cls ?? null;
const marketOf = (text: string) => MARKET_WORDS.find(([words]) => words.test(text))?.[1] ?? null;
/** Every market whose words match, in the table's order. */
const marketsOf = (text: string) => MARKET_WORDS.filter(([words]) => words.test(text)).map(([, m]) => m);

describe('the words of stocks and COT reports', () => {
  test('stock field words map to fields of stocks/prices', () => {
    assert.equal(STOCK_FIELDS['adjusted close'], 'adj_close');
    assert.equal(STOCK_FIELDS.closing, 'close');
    assert.equal(STOCK_FIELDS.price, 'close');
    assert.equal(STOCK_FIELDS.volume, 'volume');
    assert.deepEqual(
      new Set(Object.values(STOCK_FIELDS)),
      new Set(['adj_close', 'close', 'open', 'high', 'low', 'volume']),
    );
  });

  test('trader classes by everyday words; "non-commercial" is not read as "commercial"', () => {
    assert.equal(classOf('net non-commercial position'), 'noncommercial');
    assert.equal(classOf('what speculators hold'), 'noncommercial');
    assert.equal(classOf('small traders in gold'), 'nonreportable');
    assert.equal(classOf('hedgers in corn'), 'commercial');
    assert.equal(classOf('hedge funds in oil'), 'm_money');
    assert.equal(classOf('producer/merchant positions'), 'prod_merc');
    assert.equal(classOf('swap dealers'), 'swap');
    assert.equal(classOf('gold closes'), null);
    const reports = Object.fromEntries(TRADER_CLASSES.map((c) => [c.cls, c.report]));
    assert.deepEqual(reports, {
      noncommercial: 'legacy',
      nonreportable: 'legacy',
      commercial: 'legacy',
      m_money: 'disaggregated',
      prod_merc: 'disaggregated',
      swap: 'disaggregated',
    });
  });

  test('markets by their everyday names', () => {
    assert.equal(marketOf('crude oil'), 'WTI-PHYSICAL');
    assert.equal(marketOf('natural gas'), 'NAT GAS NYME');
    assert.equal(marketOf('the s&p 500'), 'E-MINI S&P 500');
    assert.equal(marketOf('10-year notes'), 'UST 10Y NOTE');
    assert.equal(marketOf('soybeans'), 'SOYBEANS');
    assert.equal(marketOf('diesel'), 'NY HARBOR ULSD');
    assert.equal(marketOf('gold'), null);
  });

  test('soybean oil and meal are not soybeans, and neither they nor heating oil are crude', () => {
    // The planner takes the first match in table order: each oil must match its own market only.
    assert.deepEqual(marketsOf('soybean oil'), ['SOYBEAN OIL']);
    assert.deepEqual(marketsOf('soybean meal'), ['SOYBEAN MEAL']);
    assert.deepEqual(marketsOf('heating oil'), ['NY HARBOR ULSD']);
    assert.deepEqual(marketsOf('net speculators in oil'), ['WTI-PHYSICAL']);
    assert.equal(marketOf('net managed money in heating oil'), 'NY HARBOR ULSD');
  });
});

describe('tenors', () => {
  test('years and months, with where each was found', () => {
    assert.deepEqual(tenorMonths('10-year minus 2 yr'), [
      { months: 120, at: 0 },
      { months: 24, at: 14 },
    ]);
    assert.deepEqual(tenorMonths('3-month vs 30y vs 6 mos'), [
      { months: 3, at: 0 },
      { months: 360, at: 11 },
      { months: 6, at: 18 },
    ]);
  });

  test('no tenor in a date or a three-digit number', () => {
    assert.deepEqual(tenorMonths('since 2024-01-01'), []);
    assert.deepEqual(tenorMonths('100 years'), []);
  });
});

describe('helpers', () => {
  test('capitals that are not symbols', () => {
    for (const word of ['USD', 'COT', 'GDP', 'VS', 'S', 'P']) assert.ok(UPPER_STOP.has(word), word);
    assert.equal(UPPER_STOP.has('AAPL'), false);
  });

  test('escapeRegExp makes a literal pattern', () => {
    assert.equal(escapeRegExp('S&P 500 (E-mini) $1.5*'), 'S&P 500 \\(E-mini\\) \\$1\\.5\\*');
    assert.ok(new RegExp(escapeRegExp('a.b[c]')).test('xa.b[c]y'));
    assert.equal(new RegExp(escapeRegExp('a.b')).test('axb'), false);
  });

  test('Levenshtein distance', () => {
    assert.equal(distance('', ''), 0);
    assert.equal(distance('APPL', 'AAPL'), 1);
    assert.equal(distance('MSTF', 'MSFT'), 2);
    assert.equal(distance('AAPL', 'AAPL'), 0);
    assert.equal(distance('kitten', 'sitting'), 3);
    assert.equal(distance('MSFT', ''), 4);
    assert.equal(distance('', 'NVDA'), 4);
    assert.equal(distance('prices', 'pricez'), 1);
  });
});
