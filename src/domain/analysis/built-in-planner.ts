/**
 * The built-in planner: deterministic, no network. It reads a documented set of question forms
 * (docs/analyze.md#the-built-in-planner) and matches names against the catalog's own entity values:
 * stock symbols and company names, Treasury tenors, H.15 series ids, COT market names. When a name is
 * close to more than one thing, or to nothing, it asks back with the candidates; it never guesses.
 */
import type { Catalog } from '../../catalog/catalog.ts';
import type { Candidate, Planner, PlanOutcome } from './planner.ts';
import type { AnalysisSpec, OutputSpec, SeriesSpec, StepSpec } from './spec.ts';

/** The datasets the planner reads, by role; each must be in the catalog. */
export const PLANNER_DATASETS = {
  stocks: 'stocks/prices',
  profiles: 'stocks/profiles',
  treasury: 'macro/treasury-yield-series',
  h15: 'macro/fed-h15-series',
  cotLegacy: 'cot/legacy-futures',
  cotDisaggregated: 'cot/disaggregated-futures',
} as const;

const STOCK_FIELDS: Record<string, string> = {
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
const TRADER_CLASSES: { words: RegExp; cls: string; report: 'legacy' | 'disaggregated'; label: string }[] = [
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
const MARKET_WORDS: [RegExp, string][] = [
  [/\b(crude( oil)?|wti|oil)\b/, 'WTI-PHYSICAL'],
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
function tenorMonths(text: string): { months: number; at: number }[] {
  const out: { months: number; at: number }[] = [];
  const re = /\b(\d{1,2})[- ]?(years?|yrs?|y|months?|mos?|m)\b/g;
  for (const m of text.matchAll(re)) {
    const n = Number(m[1]);
    out.push({ months: /^m/.test(m[2] as string) ? n : n * 12, at: m.index ?? 0 });
  }
  return out;
}

const UPPER_STOP = new Set([
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

const DAY_MS = 86_400_000;

const GENERIC_FIRST_WORDS = new Set(['home', 'american', 'international', 'united', 'general']);

/** YYYY-MM-DD of a time, or null past what a date of an analysis can name (years 0000 to 9999). */
function isoDay(d: Date): string | null {
  if (Number.isNaN(d.getTime())) return null;
  const day = d.toISOString().slice(0, 10);
  return /^\d{4}-\d{2}-\d{2}$/.test(day) ? day : null;
}

function addDays(date: string, days: number): string | null {
  return isoDay(new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS));
}

function minusMonths(date: string, months: number): string | null {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() - months);
  return isoDay(d);
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] as const;
const MONTH =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';

/**
 * The first day of a named month: of the year given, else the latest such month that has begun by today
 * ("since January" in November is this January; "since December" in November is last December).
 */
function monthStart(name: string, year: string | undefined, today: string): string {
  const month = MONTHS.indexOf(name.slice(0, 3) as (typeof MONTHS)[number]) + 1;
  const mm = String(month).padStart(2, '0');
  if (year) return `${year}-${mm}-01`;
  const thisYear = Number(today.slice(0, 4));
  const start = `${thisYear}-${mm}-01`;
  return start <= today ? start : `${String(thisYear - 1).padStart(4, '0')}-${mm}-01`;
}

/** Whether a YYYY-MM-DD names a day of the calendar (not 2024-13-45 or 2024-02-30). */
function isRealDate(date: string): boolean {
  return isoDay(new Date(`${date}T00:00:00Z`)) === date;
}

interface Range {
  from?: string;
  to?: string;
  /** A single date (the curve "on" a date). */
  on?: string;
  phrase?: string;
  /** Why the dates named cannot be read (an impossible date, a range ending before it starts). */
  problem?: string;
}

/** The date range a question names, and the question with it taken out. */
function parseRange(text: string, today: string): { range: Range; rest: string } {
  const range: Range = {};
  let rest = text;
  const take = (re: RegExp, f: (m: RegExpMatchArray) => void) => {
    const m = rest.match(re);
    if (!m) return false;
    f(m);
    range.phrase ??= m[0].trim();
    rest = rest.replace(m[0], ' ');
    return true;
  };
  const d = '(\\d{4}-\\d{2}-\\d{2})';
  take(new RegExp(`\\b(?:between|from) ${d} (?:and|to|until) ${d}`), (m) => {
    range.from = m[1];
    range.to = m[2];
  }) ||
    take(new RegExp(`\\b(?:since|from|starting|after) ${d}`), (m) => {
      range.from = m[1];
    }) ||
    take(/\b(?:since|from|starting) (\d{4})\b/, (m) => {
      range.from = `${m[1]}-01-01`;
    }) ||
    take(
      new RegExp(`\\b(?:since|from|starting|after) (?:the start of )?${MONTH}(?:,? (\\d{4}))?\\b`),
      (m) => {
        range.from = monthStart(m[1] as string, m[2], today);
      },
    ) ||
    take(new RegExp(`\\bin ${MONTH},? (\\d{4})\\b`), (m) => {
      range.from = monthStart(m[1] as string, m[2], today);
      range.to = addDays(minusMonths(range.from, -1) ?? range.from, -1) ?? range.from;
    }) ||
    take(/\bin (\d{4})\b/, (m) => {
      range.from = `${m[1]}-01-01`;
      range.to = `${m[1]}-12-31`;
    }) ||
    take(
      /\b(?:over |in |for )?(?:the )?(?:last|past|trailing) (\d+)? ?(days?|weeks?|months?|years?)\b/,
      (m) => {
        const n = m[1] ? Number(m[1]) : 1;
        const unit = (m[2] as string).replace(/s$/, '');
        const from =
          unit === 'day'
            ? addDays(today, -n)
            : unit === 'week'
              ? addDays(today, -7 * n)
              : minusMonths(today, unit === 'month' ? n : 12 * n);
        if (from === null) {
          range.problem = `The last ${m[1] ?? ''} ${m[2]} reach back before any date there is: ask for a shorter span, e.g. "last 5 years".`;
        } else {
          range.from = from;
        }
      },
    ) ||
    take(/\b(?:ytd|year to date)\b/, () => {
      range.from = `${today.slice(0, 4)}-01-01`;
    });
  take(new RegExp(`\\b(?:on|as of|at) ${d}`), (m) => {
    range.on = m[1];
  });
  take(new RegExp(`\\b(?:until|to|through) ${d}`), (m) => {
    range.to = m[1];
  });
  // A date constraint is never dropped: one the forms above do not read is asked back.
  const unread = rest.match(
    /\b(?:since|until|before|after|through) (?!the (?:last|past)\b)[^ ,.;]+(?: [^ ,.;]+)?/,
  );
  if (unread && !range.problem) {
    range.problem = `I could not read the date in "${unread[0].trim()}": write it as YYYY-MM-DD (since 2026-01-15), a year (since 2024), a month (since January, since March 2025) or a span (last 3 months).`;
  }
  const impossible = [range.from, range.to, range.on].find((date) => date !== undefined && !isRealDate(date));
  if (impossible !== undefined) {
    range.problem = `There is no date ${impossible}: write a day of the calendar as YYYY-MM-DD, e.g. 2024-01-31.`;
  } else if (range.from !== undefined && range.to !== undefined && range.to < range.from) {
    range.problem = `The range ${range.from} to ${range.to} ends before it starts: name the earlier date first.`;
  }
  return { range, rest };
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Levenshtein distance, small strings only. */
function distance(a: string, b: string): number {
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

/** A series the question names, before it is turned into a spec. */
interface Named {
  kind: 'stock' | 'tenor' | 'h15';
  value: string;
  at: number;
}

class Clarify {
  readonly message: string;
  readonly candidates: Candidate[];
  /** Set when no question form fits: the question is not one the planner answers, however it is named. */
  readonly unsupported: boolean;
  constructor(message: string, candidates: Candidate[] = [], unsupported = false) {
    this.message = message;
    this.candidates = candidates;
    this.unsupported = unsupported;
  }
}

const FORMS =
  'I can answer questions such as "compare AAPL and MSFT closes since 2024-01-01", "10-year minus 2-year Treasury yield since 2020", "net non-commercial position in gold futures, last 52 weeks", "correlation of AAPL and MSFT over the last year", "30-day volatility of NVDA", "rebase AAPL and MSFT to 100 from 2026-10-15", "beta of AAPL against MSFT", "max drawdown of TSLA", "Treasury yield curve on 2026-11-02".';

export class BuiltInPlanner implements Planner {
  readonly name = 'built-in';
  readonly #symbols: Set<string>;
  readonly #companies: [RegExp, string][];
  readonly #tenors: { label: string; months: number }[];
  readonly #h15: Set<string>;
  readonly #markets: { legacy: string[]; disaggregated: string[] };
  readonly #catalog: Catalog;

  constructor(catalog: Catalog) {
    this.#catalog = catalog;
    const values = (key: string, field: string): string[] => {
      // An operator's catalog without one of these datasets leaves its question forms unanswerable.
      const entry = catalog.resolve(key);
      if (!entry) return [];
      return (entry.dataset.fields.find((f) => f.name === field)?.sample?.values ?? []).map(String);
    };
    this.#symbols = new Set(values(PLANNER_DATASETS.stocks, 'symbol'));
    const profileSymbols = values(PLANNER_DATASETS.profiles, 'symbol');
    this.#companies = values(PLANNER_DATASETS.profiles, 'name').flatMap((name, i) => {
      const symbol = profileSymbols[i];
      if (!symbol || !this.#symbols.has(symbol)) return [];
      // "The Walt Disney Company" -> disney; "Apple Inc." -> apple; "JPMorgan Chase & Co." -> jpmorgan.
      const words = name
        .toLowerCase()
        .replace(/[.,']/g, ' ')
        .split(/\s+/)
        .filter((w) => w !== '' && !['the', 'walt', 'inc', 'co', 'company', 'corporation', '&'].includes(w));
      // A generic first word ("home", "american") needs the second too.
      const first = GENERIC_FIRST_WORDS.has(words[0] ?? '') ? words.slice(0, 2).join(' ') : words[0];
      if (!first || first.length < 3) return [];
      return [[new RegExp(`\\b${first.replace(/[^a-z0-9 -]/g, '')}\\b`), symbol] as [RegExp, string]];
    });
    const tenorLabels = values(PLANNER_DATASETS.treasury, 'tenor');
    const maturities = values(PLANNER_DATASETS.treasury, 'maturity_months').map(Number);
    this.#tenors = tenorLabels.map((label, i) => ({ label, months: maturities[i] as number }));
    this.#h15 = new Set(values(PLANNER_DATASETS.h15, 'series_id'));
    this.#markets = {
      legacy: values(PLANNER_DATASETS.cotLegacy, 'market_and_exchange_names'),
      disaggregated: values(PLANNER_DATASETS.cotDisaggregated, 'market_and_exchange_names'),
    };
  }

  async plan(question: string, _tools: unknown, today: string): Promise<PlanOutcome> {
    const transcript = [{ role: 'user' as const, content: question }];
    try {
      const { name, spec, explanation } = this.#plan(question, today);
      return {
        kind: 'analysis',
        name,
        spec,
        explanation,
        transcript: [...transcript, { role: 'assistant', content: explanation }],
      };
    } catch (error) {
      if (!(error instanceof Clarify)) throw error;
      return {
        kind: 'clarify',
        message: error.message,
        candidates: error.candidates,
        ...(error.unsupported && { unsupported: true }),
        transcript: [...transcript, { role: 'assistant', content: error.message }],
      };
    }
  }

  #plan(question: string, today: string): { name: string; spec: AnalysisSpec; explanation: string } {
    const original = question.trim();
    if (original.length === 0) throw new Clarify(`Ask a question about the data. ${FORMS}`);
    const lower = ` ${original.toLowerCase().replace(/[?!]/g, ' ').replace(/\s+/g, ' ')} `;
    const { range, rest } = parseRange(lower, today);
    if (range.problem) throw new Clarify(range.problem);
    const window = this.#window(rest);
    const name = original.replace(/\s+/g, ' ').slice(0, 120);

    const generic = this.#generic(rest, range);
    if (!generic && /\b(yield )?curve\b/.test(rest)) return { name, ...this.#curve(range, today) };
    if (!generic && /\b(net|position|positions|positioning|cot)\b/.test(rest) && !/\bdrawdown\b/.test(rest)) {
      const cot = this.#cot(rest, range, today, window);
      if (cot) return { name, ...cot };
    }
    const wants = (re: RegExp) => re.test(rest);
    const named = generic ? [] : this.#named(original, rest);
    if (!generic && named.length === 0) {
      if (wants(/\btreasury|yields?|spread|2s10s|10s2s\b/)) {
        throw new Clarify('Which Treasury yields? Name the tenors, e.g. "10-year minus 2-year".', [
          { label: '10-year minus 2-year', value: '10-year minus 2-year Treasury yield' },
          { label: '10-year minus 3-month', value: '10-year minus 3-month Treasury yield' },
          { label: '30-year minus 5-year', value: '30-year minus 5-year Treasury yield' },
        ]);
      }
      if (/\b(gold|silver|wheat|corn|oil|crude|bitcoin|copper)\b/.test(rest)) {
        throw new Clarify(
          'The catalog has positioning (Commitments of Traders) for that market, not its price. Ask for a net position, e.g. "net non-commercial position in gold futures, last 52 weeks".',
        );
      }
      throw new Clarify(`I could not find a dataset series in that question. ${FORMS}`, [], true);
    }
    const series = generic ?? this.#seriesSpecs(named, rest, range);
    const first = series[0]?.entity ? (Object.values(series[0].entity)[0] ?? series[0].id) : series[0]?.id;
    const ids = series.map((s) => s.id);
    const labels = series.map((s) => s.label ?? s.id).join(' and ');
    const what = `Reads ${labels} from ${[...new Set(series.map((s) => s.dataset))].join(', ')}${range.phrase ? ` (${range.phrase})` : ''}`;
    const steps: StepSpec[] = [];
    const outputs: OutputSpec[] = [];
    const ret = (id: string) => {
      steps.push({ op: 'pct_change', input: id, as: `${id}_ret` });
      return `${id}_ret`;
    };

    if (wants(/\bcorrelat/)) {
      if (ids.length < 2)
        throw new Clarify(
          `A correlation needs two or more series; I found only ${first}. Name another, e.g. "correlation of ${first} and MSFT".`,
          this.#someSymbols(),
        );
      const rets = ids.map(ret);
      steps.push({ op: 'correlation', inputs: rets, as: 'correlation' });
      outputs.push({ kind: 'table', values: ['correlation'], title: 'Correlation of daily percent changes' });
      return {
        name,
        spec: { series, steps, outputs },
        explanation: `${what}, takes daily percent changes and correlates them on their common dates.`,
      };
    }
    if (wants(/\bbeta\b/)) {
      if (ids.length < 2)
        throw new Clarify(
          `A beta is of one series against another; name the benchmark, e.g. "beta of ${first} against MSFT".`,
          this.#someSymbols(),
        );
      const [y, x] = [ret(ids[0] as string), ret(ids[1] as string)];
      steps.push({ op: 'beta', y, x, as: 'beta' });
      outputs.push({
        kind: 'table',
        values: ['beta'],
        title: `Beta of ${series[0]?.label} on ${series[1]?.label}`,
      });
      return {
        name,
        spec: { series, steps, outputs },
        explanation: `${what}, takes daily percent changes and regresses the first on the second (OLS beta and R²).`,
      };
    }
    const pair = wants(/\bminus\b|\bspread\b|\b2s10s\b|\b10s2s\b|\bless\b/)
      ? 'spread'
      : wants(/\bratio\b|\brelative to\b|\bdivided by\b/)
        ? 'ratio'
        : null;
    if (pair) {
      if (ids.length !== 2)
        throw new Clarify(`A ${pair} is of exactly two series; I found ${ids.length}: ${labels}.`);
      steps.push({ op: pair, inputs: [ids[0] as string, ids[1] as string], as: pair });
      outputs.push({
        kind: 'line',
        values: [pair],
        title: `${series[0]?.label} ${pair === 'spread' ? 'minus' : 'divided by'} ${series[1]?.label}`,
      });
      outputs.push({ kind: 'stats', values: [pair] });
      return {
        name,
        spec: { series, steps, outputs },
        explanation: `${what}, and takes the ${pair} on their common dates.`,
      };
    }
    if (wants(/\bvolatility\b|\bvol\b/)) {
      const n = window ?? 30;
      for (const id of ids) {
        steps.push({ op: 'log_returns', input: id, as: `${id}_lr` });
        steps.push({ op: 'rolling_std', input: `${id}_lr`, window: n, as: `${id}_vol` });
      }
      outputs.push({
        kind: 'line',
        values: ids.map((id) => `${id}_vol`),
        title: `${n}-observation volatility (std of daily log returns)`,
      });
      outputs.push({ kind: 'stats', values: ids.map((id) => `${id}_vol`) });
      return {
        name,
        spec: { series, steps, outputs },
        explanation: `${what}, takes daily log returns and their standard deviation over ${n} observations.`,
      };
    }
    if (wants(/\bdrawdown\b/)) {
      for (const id of ids) steps.push({ op: 'drawdown', input: id, as: `${id}_dd` });
      outputs.push({ kind: 'table', values: ids.map((id) => `${id}_dd`), title: 'Maximum drawdown' });
      outputs.push({ kind: 'line', values: ids });
      return {
        name,
        spec: { series, steps, outputs },
        explanation: `${what}, and finds the deepest fall from a running peak.`,
      };
    }
    if (wants(/\brebase|\bindex(ed)? to 100|\bto 100\b/)) {
      for (const id of ids)
        steps.push({
          op: 'rebase',
          input: id,
          as: `${id}_100`,
          ...(range.from && { base_date: range.from }),
        });
      outputs.push({
        kind: 'line',
        values: ids.map((id) => `${id}_100`),
        title: `Rebased to 100${range.from ? ` on ${range.from}` : ''}`,
      });
      return {
        name,
        spec: { series, steps, outputs },
        explanation: `${what}, rebased to 100 at the first value${range.from ? ` on or after ${range.from}` : ''}.`,
      };
    }
    if (wants(/\bz-?scores?\b/)) {
      const n = window ?? 20;
      for (const id of ids) steps.push({ op: 'rolling_zscore', input: id, window: n, as: `${id}_z` });
      outputs.push({ kind: 'line', values: ids.map((id) => `${id}_z`), title: `${n}-observation z-score` });
      return {
        name,
        spec: { series, steps, outputs },
        explanation: `${what}, and its z-score over ${n} observations.`,
      };
    }
    if (wants(/\bmoving average\b|\brolling (mean|average)\b|\bsma\b/)) {
      const n = window ?? 20;
      for (const id of ids) steps.push({ op: 'rolling_mean', input: id, window: n, as: `${id}_ma` });
      outputs.push({
        kind: 'line',
        values: ids.flatMap((id) => [id, `${id}_ma`]),
        title: `${n}-observation moving average`,
      });
      return {
        name,
        spec: { series, steps, outputs },
        explanation: `${what}, with its mean over ${n} observations.`,
      };
    }
    if (wants(/\byear[- ]over[- ]year\b|\byoy\b|\bannual change\b/)) {
      for (const id of ids) steps.push({ op: 'yoy', input: id, as: `${id}_yoy` });
      outputs.push({ kind: 'line', values: ids.map((id) => `${id}_yoy`), title: 'Year-over-year change, %' });
      return {
        name,
        spec: { series, steps, outputs },
        explanation: `${what}, and its percent change from a year earlier.`,
      };
    }
    const resample = rest.match(/\b(weekly|monthly|quarterly)\b(?: (average|mean|sum|total|last|close))?/);
    if (resample) {
      const frequency = ({ weekly: 'week', monthly: 'month', quarterly: 'quarter' } as const)[
        resample[1] as 'weekly'
      ];
      const how =
        resample[2] === 'sum' || resample[2] === 'total'
          ? 'sum'
          : resample[2] === 'average' || resample[2] === 'mean'
            ? 'mean'
            : 'last';
      for (const id of ids)
        steps.push({ op: 'resample', input: id, frequency, how, as: `${id}_${frequency}` });
      outputs.push({
        kind: 'bar',
        values: ids.map((id) => `${id}_${frequency}`),
        title: `${resample[1]} ${how}`,
      });
      outputs.push({ kind: 'table', values: ids.map((id) => `${id}_${frequency}`) });
      return {
        name,
        spec: { series, steps, outputs },
        explanation: `${what}, resampled to one value per ${frequency} (${how}).`,
      };
    }
    if (wants(/\breturns?\b|\bpercent change\b|\b% change\b|\bchanges?\b/)) {
      const rets = ids.map(ret);
      outputs.push({ kind: 'line', values: rets, title: 'Percent change' });
      outputs.push({ kind: 'stats', values: rets });
      return {
        name,
        spec: { series, steps, outputs },
        explanation: `${what}, and its percent change from one observation to the next.`,
      };
    }
    outputs.push({ kind: 'line', values: ids });
    outputs.push({ kind: 'stats', values: ids });
    return {
      name,
      spec: { series, steps, outputs },
      explanation: `${what}, charted with summary statistics.`,
    };
  }

  /**
   * A question that names a dataset by its key ("value of DGS10 in macro/fed-h15-series"): the key exact,
   * else asked back with the closest keys; then a numeric field named in the question (by spelling, else
   * asked back with the numeric fields); then an entity value of the dataset for each series.
   */
  #generic(lower: string, range: Range): SeriesSpec[] | null {
    const key = lower.match(/\b([a-z0-9-]+\/[a-z0-9_-]+)\b/)?.[1];
    if (!key) return null;
    const entry = this.#catalog.resolve(key);
    if (!entry) {
      const close = this.#catalog.suggest(key);
      throw new Clarify(
        close.length
          ? `No dataset ${key}. Did you mean ${close.join(' or ')}?`
          : `No dataset ${key} in the catalog.`,
        close.map((k) => ({ label: k, value: k })),
      );
    }
    const d = entry.dataset;
    const numeric = d.fields.filter((f) => f.type === 'number' || f.type === 'integer').map((f) => f.name);
    const words = lower.split(/[^a-z0-9_]+/).filter((w) => w.length >= 3 && !key.includes(w));
    // By name ("par_yield", "par yield"), then by spelling (one edit, two for long names); a price
    // dataset's close when none is named, as for stocks.
    const field =
      numeric.find(
        (f) => words.includes(f) || ` ${lower} `.includes(` ${f.replace(/_all$/, '').replaceAll('_', ' ')} `),
      ) ??
      numeric.find((f) => words.some((w) => w.length >= 4 && distance(w, f) <= (f.length >= 8 ? 2 : 1))) ??
      (numeric.length === 1 ? numeric[0] : numeric.includes('close') ? 'close' : undefined);
    if (!field) {
      // The fields holding a word of the question first ("noncommercial" -> noncommercial_long_all, ...).
      const near = numeric.filter((f) => words.some((w) => w.length >= 4 && f.includes(w)));
      const offered = (near.length > 0 ? near : numeric).slice(0, 12);
      throw new Clarify(
        `Which field of ${entry.key}? ${near.length > 0 ? 'These match' : 'Its numeric fields are'} ${offered.join(', ')}.`,
        offered.map((f) => ({ label: f, value: f })),
      );
    }
    const known = d.entity_fields.flatMap((name) =>
      (d.fields.find((f) => f.name === name)?.sample?.values ?? []).map((v) => ({ name, value: String(v) })),
    );
    // Dates are taken out first: a code such as 01 must not match a date.
    const text = lower;
    // A market is named by its whole name or by its head ("GOLD" of "GOLD - COMMODITY EXCHANGE INC.").
    const at = (value: string) =>
      value.length >= 2 && !/^\d{1,3}$/.test(value)
        ? text.search(new RegExp(`(^|[^a-z0-9])${escapeRegExp(value.toLowerCase())}($|[^a-z0-9])`))
        : -1;
    const hits = known
      .map((k) => ({
        ...k,
        at: Math.max(at(k.value), k.value.includes(' - ') ? at(k.value.split(' - ')[0] as string) : -1),
      }))
      .filter((k) => k.at >= 0)
      .sort((a, b) => a.at - b.at);
    const values = [...new Map(hits.map((h) => [h.value, h])).values()];
    if (values.length === 0 && d.entity_fields.length > 0) {
      const primary = d.entity_fields[0] as string;
      const candidates = known.filter((k) => k.name === primary).slice(0, 12);
      throw new Clarify(
        `Which ${primary} of ${entry.key}?${
          candidates.length
            ? ` For example ${candidates
                .slice(0, 3)
                .map((c) => c.value)
                .join(', ')}.`
            : ''
        }`,
        candidates.map((c) => ({ label: c.value, value: c.value })),
      );
    }
    return values.map((v, i) => {
      const base = (v.value.split(' - ')[0] as string).toLowerCase();
      const id = base
        .replace(/[^a-z0-9]+/g, '_')
        .replace(/^_+|_+$/g, '')
        .slice(0, 20);
      const spec: SeriesSpec = {
        id: /^[a-z]/.test(id) ? id : `s${i + 1}`,
        dataset: entry.key,
        entity: { [v.name]: v.value },
        field,
        label: `${v.value} ${field}`,
      };
      if (range.from) spec.from = range.from;
      if (range.to) spec.to = range.to;
      return spec;
    });
  }

  /** "30-day", "20 day", "over 60 observations", "52-week" (not "last 30 days", a date range taken out before). */
  #window(text: string): number | null {
    const m = text.match(/\b(\d{1,4})[- ](?:days?|weeks?|obs|observations?|sessions?)\b/);
    return m ? Number(m[1]) : null;
  }

  #someSymbols(): Candidate[] {
    return ['MSFT', 'AAPL', 'NVDA'].filter((s) => this.#symbols.has(s)).map((s) => ({ label: s, value: s }));
  }

  /** Stocks, Treasury tenors and H.15 series the question names, in the order it names them. */
  #named(original: string, lower: string): Named[] {
    const found: Named[] = [];
    const seen = new Set<string>();
    const add = (n: Named) => {
      const key = `${n.kind}:${n.value}`;
      if (!seen.has(key)) {
        seen.add(key);
        found.push(n);
      }
    };
    const unknown: string[] = [];
    for (const m of original.matchAll(/\b[A-Za-z][A-Za-z0-9]{0,6}\b/g)) {
      const token = m[0];
      const upper = token.toUpperCase();
      const at = lower.indexOf(token.toLowerCase());
      if (this.#h15.has(upper)) add({ kind: 'h15', value: upper, at });
      else if (token === upper && this.#symbols.has(upper)) add({ kind: 'stock', value: upper, at });
      else if (token.length >= 4 && this.#symbols.has(upper)) add({ kind: 'stock', value: upper, at });
      else if (
        token === upper &&
        token.length >= 2 &&
        token.length <= 5 &&
        /^[A-Z]+$/.test(token) &&
        !UPPER_STOP.has(token)
      )
        unknown.push(token);
    }
    for (const [re, symbol] of this.#companies) {
      const m = lower.match(re);
      if (m) add({ kind: 'stock', value: symbol, at: m.index ?? 0 });
    }
    if (/\bfed funds\b|\bfederal funds\b/.test(lower))
      add({ kind: 'h15', value: 'DFF', at: lower.search(/\bfed(eral)? funds\b/) });
    if (/\bprime rate\b/.test(lower)) add({ kind: 'h15', value: 'DPRIME', at: lower.indexOf('prime rate') });
    if (
      /\btreasury|\byields?\b|\b2s10s\b|\b10s2s\b|\bnotes?\b|\bbills?\b|\bbonds?\b/.test(lower) ||
      /\d[- ]?(year|yr|month)/.test(lower)
    ) {
      const tenors = /\b2s10s\b|\b10s2s\b/.test(lower)
        ? [
            { months: 120, at: 0 },
            { months: 24, at: 1 },
          ]
        : tenorMonths(lower);
      for (const t of tenors) {
        const tenor = this.#tenors.find((x) => x.months === t.months);
        if (!tenor) {
          throw new Clarify(
            `There is no ${t.months % 12 === 0 ? `${t.months / 12}-year` : `${t.months}-month`} Treasury yield; the tenors are ${this.#tenors.map((x) => x.label).join(', ')}.`,
            this.#tenors.map((x) => ({ label: x.label, value: x.label })),
          );
        }
        add({ kind: 'tenor', value: tenor.label, at: t.at });
      }
    }
    if (unknown.length > 0) {
      const token = unknown[0] as string;
      const close = [...this.#symbols, ...this.#h15]
        .map((s) => ({ s, d: distance(token, s) }))
        .filter(({ s, d }) => d <= 1 || (d === 2 && s.length >= 5 && token.length >= 4))
        .sort((a, b) => a.d - b.d || a.s.localeCompare(b.s))
        .map(({ s }) => ({ label: s, value: s }));
      throw new Clarify(
        close.length > 0
          ? `No symbol or series ${token} in the catalog. Did you mean ${close.map((c) => c.value).join(' or ')}?`
          : `No symbol or series ${token} in the catalog; the stocks are the Dow 30 and TSLA, SNOW, GOOGL, META.`,
        close,
      );
    }
    return found.sort((a, b) => a.at - b.at);
  }

  #seriesSpecs(named: Named[], text: string, range: Range): SeriesSpec[] {
    const dates: { from?: string; to?: string } = {};
    if (range.from) dates.from = range.from;
    if (range.to) dates.to = range.to;
    const fieldWord = Object.keys(STOCK_FIELDS).find((w) => new RegExp(`\\b${w}\\b`).test(text));
    const stockField = fieldWord ? (STOCK_FIELDS[fieldWord] as string) : 'close';
    return named.map((n): SeriesSpec => {
      if (n.kind === 'stock') {
        return {
          id: n.value.toLowerCase(),
          dataset: PLANNER_DATASETS.stocks,
          entity: { symbol: n.value },
          field: stockField,
          label: `${n.value} ${stockField}`,
          ...dates,
        };
      }
      if (n.kind === 'h15') {
        return {
          id: n.value.toLowerCase(),
          dataset: PLANNER_DATASETS.h15,
          entity: { series_id: n.value },
          field: 'value',
          label: n.value,
          ...dates,
        };
      }
      const months = this.#tenors.find((t) => t.label === n.value)?.months ?? 0;
      const id = months % 12 === 0 ? `y${months / 12}` : `m${months}`;
      return {
        id,
        dataset: PLANNER_DATASETS.treasury,
        entity: { tenor: n.value },
        field: 'par_yield',
        label: `${n.value} yield`,
        ...dates,
      };
    });
  }

  #curve(range: Range, today: string): { spec: AnalysisSpec; explanation: string } {
    const on = range.on ?? range.to ?? range.from ?? today;
    const spec: AnalysisSpec = {
      series: [
        {
          id: 'yields',
          dataset: PLANNER_DATASETS.treasury,
          entity: {},
          field: 'par_yield',
          from: addDays(on, -14) ?? on,
          to: on,
          label: 'Treasury par yields',
        },
      ],
      steps: [{ op: 'curve', input: 'yields', as: 'curve', date: on }],
      outputs: [
        {
          kind: 'bar',
          values: ['curve'],
          title: `Treasury yield curve on ${on} (or the last business day before)`,
        },
        { kind: 'table', values: ['curve'] },
      ],
    };
    return {
      spec,
      explanation: `Reads every tenor of ${PLANNER_DATASETS.treasury} for the two weeks to ${on} and draws the curve of the last day with yields.`,
    };
  }

  #cot(
    text: string,
    range: Range,
    today: string,
    window: number | null,
  ): { spec: AnalysisSpec; explanation: string } | null {
    const classMatch = TRADER_CLASSES.find((c) => c.words.test(text));
    const market = this.#market(text, classMatch?.report);
    if (!market) return null;
    if (!classMatch) {
      throw new Clarify(`Whose position in ${market.split(' - ')[0]}? Name a trader class.`, [
        { label: 'non-commercial (speculators)', value: 'non-commercial' },
        { label: 'commercial (hedgers)', value: 'commercial' },
        { label: 'non-reportable (small traders)', value: 'non-reportable' },
        { label: 'managed money', value: 'managed money' },
      ]);
    }
    const dataset =
      classMatch.report === 'legacy' ? PLANNER_DATASETS.cotLegacy : PLANNER_DATASETS.cotDisaggregated;
    const weeks = window ?? 52;
    const from = range.from ?? addDays(today, -7 * 52) ?? today;
    const spec: AnalysisSpec = {
      series: [
        {
          id: 'net',
          dataset,
          entity: { market_and_exchange_names: market },
          field: `net:${classMatch.cls}`,
          from,
          ...(range.to && { to: range.to }),
          label: `${classMatch.label} net, ${market.split(' - ')[0]}`,
        },
      ],
      steps: [],
      outputs: [
        {
          kind: 'line',
          values: ['net'],
          title: `Net ${classMatch.label} position (long minus short), ${market}`,
        },
      ],
    };
    if (/\bpercentile|\brank\b|\bextreme/.test(text)) {
      spec.steps.push({ op: 'percentile_rank', input: 'net', window: weeks, as: 'net_rank' });
      spec.outputs.push({ kind: 'line', values: ['net_rank'], title: `Percentile rank over ${weeks} weeks` });
    }
    spec.outputs.push({ kind: 'stats', values: ['net'] });
    return {
      spec,
      explanation: `Reads ${classMatch.label} long and short positions in ${market} from ${dataset} since ${from} and takes long minus short${spec.steps.length ? `, with its percentile rank over ${weeks} weeks` : ''}.`,
    };
  }

  /** The COT market a question names: everyday words first, then the catalog's own market names. */
  #market(text: string, report: 'legacy' | 'disaggregated' | undefined): string | null {
    const names =
      report === 'disaggregated'
        ? this.#markets.disaggregated
        : report === 'legacy'
          ? this.#markets.legacy
          : [...new Set([...this.#markets.legacy, ...this.#markets.disaggregated])];
    for (const [re, prefix] of MARKET_WORDS) {
      if (!re.test(text)) continue;
      const hit = names.filter((n) => n.startsWith(prefix));
      if (hit.length === 1) return hit[0] as string;
      if (hit.length === 0) {
        throw new Clarify(
          `The ${report ?? 'COT'} report in the catalog has no ${prefix} market.`,
          names.map((n) => ({ label: n, value: n })),
        );
      }
    }
    const words = text.split(/[^a-z0-9&-]+/).filter((w) => w.length >= 3);
    const hits = names.filter((n) => {
      const head = n.split(' - ')[0]?.toLowerCase() ?? '';
      return words.some((w) => head.split(/[^a-z0-9&]+/).includes(w));
    });
    if (hits.length === 1) return hits[0] as string;
    if (hits.length > 1) {
      throw new Clarify(
        `Which market? ${hits.length} match: ${hits.map((h) => h.split(' - ')[0]).join(', ')}.`,
        hits.map((h) => ({ label: h, value: h })),
      );
    }
    return null;
  }
}
