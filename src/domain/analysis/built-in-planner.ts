/**
 * The built-in planner: deterministic, no network. It reads a documented set of question forms
 * (docs/analyze.md#the-built-in-planner) and matches names against the catalog's own entity values:
 * stock symbols and company names, Treasury tenors, H.15 series ids, COT market names. When a name is
 * close to more than one thing, or to nothing, it asks back with the candidates; it never guesses.
 */
import type { Catalog } from '../../catalog/catalog.ts';
import type { Candidate, Planner, PlanOutcome } from './planner.ts';
import { Clarify, planIntent } from './planner-intents.ts';
import { addDays, parseRange, type Range } from './planner-range.ts';
import {
  distance,
  escapeRegExp,
  GENERIC_FIRST_WORDS,
  MARKET_WORDS,
  STOCK_FIELDS,
  TRADER_CLASSES,
  tenorMonths,
  UPPER_STOP,
} from './planner-words.ts';
import type { AnalysisSpec, SeriesSpec } from './spec.ts';

/** The datasets the planner reads, by role; each must be in the catalog. */
export const PLANNER_DATASETS = {
  stocks: 'stocks/prices',
  profiles: 'stocks/profiles',
  treasury: 'macro/treasury-yield-series',
  h15: 'macro/fed-h15-series',
  cotLegacy: 'cot/legacy-futures',
  cotDisaggregated: 'cot/disaggregated-futures',
} as const;

/** A series the question names, before it is turned into a spec. */
interface Named {
  kind: 'stock' | 'tenor' | 'h15';
  value: string;
  at: number;
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
    const labels = series.map((s) => s.label ?? s.id).join(' and ');
    const what = `Reads ${labels} from ${[...new Set(series.map((s) => s.dataset))].join(', ')}${range.phrase ? ` (${range.phrase})` : ''}`;
    const plan = planIntent({
      rest,
      range,
      window,
      series,
      what,
      someSymbols: () => this.#someSymbols(),
    });
    return {
      name,
      spec: { series, steps: plan.steps, outputs: plan.outputs },
      explanation: plan.explanation,
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
