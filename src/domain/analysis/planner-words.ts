/**
 * The words the built-in planner knows: stock fields, COT trader classes and markets by their everyday
 * names, tenors, the capitals that are not symbols, and a small edit distance for near spellings.
 */

export const STOCK_FIELDS: Record<string, string> = {
  'adjusted close': 'adj_close',
  'adj close': 'adj_close',
  close: 'close',
  closes: 'close',
  closing: 'close',
  price: 'close',
  prices: 'close',
  open: 'open',
  high: 'high',
  low: 'low',
  volume: 'volume',
};

/** Trader classes by the words people use, with the report that has them. */
export const TRADER_CLASSES: {
  words: RegExp;
  cls: string;
  report: 'legacy' | 'disaggregated';
  label: string;
}[] = [
  {
    words: /\bnon[- ]?commercials?\b|\bspeculators?\b|\blarge specs?\b/,
    cls: 'noncommercial',
    report: 'legacy',
    label: 'non-commercial',
  },
  {
    words: /\bnon[- ]?reportables?\b|\bsmall traders?\b|\bsmall specs?\b/,
    cls: 'nonreportable',
    report: 'legacy',
    label: 'non-reportable',
  },
  { words: /\bcommercials?\b|\bhedgers?\b/, cls: 'commercial', report: 'legacy', label: 'commercial' },
  {
    words: /\bmanaged money\b|\bmoney managers?\b|\bhedge funds?\b/,
    cls: 'm_money',
    report: 'disaggregated',
    label: 'managed money',
  },
  {
    words: /\bproducers?\b|\bmerchants?\b|\bprod(ucer)?[ /]merc/,
    cls: 'prod_merc',
    report: 'disaggregated',
    label: 'producer/merchant',
  },
  { words: /\bswap dealers?\b|\bswaps?\b/, cls: 'swap', report: 'disaggregated', label: 'swap dealer' },
];

/** Everyday names of COT markets, matched before the catalog's own names. */
export const MARKET_WORDS: [RegExp, string][] = [
  // A bare "oil" is crude, but not the oil of soybean oil or heating oil: the first match wins.
  [/\b(crude( oil)?|wti|(?<!(soybean|heating) )oil)\b/, 'WTI-PHYSICAL'],
  [/\bnat(ural)? gas\b/, 'NAT GAS NYME'],
  [/\bs ?& ?p( ?500)?\b|\bsp ?500\b|\be-?mini s&p\b/, 'E-MINI S&P 500'],
  [/\bnasdaq\b/, 'NASDAQ MINI'],
  [/\b10[- ]?y(ea)?r? (treasury )?notes?\b/, 'UST 10Y NOTE'],
  [/\beuros?\b/, 'EURO FX'],
  [/\byen\b/, 'JAPANESE YEN'],
  [/\bbitcoin\b/, 'BITCOIN'],
  [/\bsoybean oil\b/, 'SOYBEAN OIL'],
  [/\bsoybean meal\b/, 'SOYBEAN MEAL'],
  [/\bsoy(beans?)?\b(?! (oil|meal))/, 'SOYBEANS'],
  [/\bcopper\b/, 'COPPER- #1'],
  [/\bcotton\b/, 'COTTON NO. 2'],
  [/\bcattle\b/, 'LIVE CATTLE'],
  [/\bhogs?\b/, 'LEAN HOGS'],
  [/\bgasoline\b/, 'GASOLINE RBOB'],
  [/\bheating oil\b|\bulsd\b|\bdiesel\b/, 'NY HARBOR ULSD'],
];

/** Tenor words -> months: "10-year", "10y", "2 yr", "3-month", "30 year". */
export function tenorMonths(text: string): { months: number; at: number }[] {
  const out: { months: number; at: number }[] = [];
  const re = /\b(\d{1,2})[- ]?(years?|yrs?|y|months?|mos?|m)\b/g;
  for (const m of text.matchAll(re)) {
    const n = Number(m[1]);
    out.push({ months: /^m/.test(m[2] as string) ? n : n * 12, at: m.index ?? 0 });
  }
  return out;
}

export const UPPER_STOP = new Set([
  'A',
  'I',
  'AND',
  'OR',
  'THE',
  'OF',
  'US',
  'USD',
  'EUR',
  'COT',
  'YOY',
  'OLS',
  'ETF',
  'CFTC',
  'UST',
  'WTI',
  'FX',
  'MA',
  'ID',
  'NYSE',
  'NY',
  'GDP',
  'CPI',
  'FRED',
  'API',
  'CSV',
  'YTD',
  'S',
  'P',
  'SP',
  'R2',
  'VS',
  'MAX',
  'MIN',
  'TO',
  'IN',
  'ON',
]);

export const GENERIC_FIRST_WORDS = new Set(['home', 'american', 'international', 'united', 'general']);

export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Levenshtein distance, small strings only. */
export function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] as number;
      row[j] = Math.min(above + 1, (row[j - 1] as number) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] as number;
}
