/**
 * What the built-in planner does with the series a question names: a table of intents, each a pattern
 * over the question and the steps and outputs it plans, tried in order (the first that matches wins;
 * a question that matches none is charted with summary statistics). A new question form is a row here.
 */
import type { Candidate } from './planner.ts';
import type { Range } from './planner-range.ts';
import type { OutputSpec, SeriesSpec, StepSpec } from './spec.ts';

/** A question asked back: the planner answers it with a clarification, never an error. */
export class Clarify {
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

/** What an intent plans from: the question and the series it named. */
export interface IntentContext {
  /** The question in lower case, its date range taken out. */
  rest: string;
  range: Range;
  /** A window the question names ("30-day"), or null. */
  window: number | null;
  series: SeriesSpec[];
  /** "Reads AAPL and MSFT from stocks/prices (since 2024)": how every explanation starts. */
  what: string;
  /** Symbols to offer when a second series is missing. */
  someSymbols: () => Candidate[];
}

export interface IntentPlan {
  steps: StepSpec[];
  outputs: OutputSpec[];
  explanation: string;
}

export interface Intent {
  name: string;
  pattern: RegExp;
  plan: (context: IntentContext, match: RegExpMatchArray) => IntentPlan;
}

const idsOf = (c: IntentContext) => c.series.map((s) => s.id);
const labelsOf = (c: IntentContext) => c.series.map((s) => s.label ?? s.id).join(' and ');

/** The first series as the question named it (its entity value, else its id). */
function firstNamed(c: IntentContext): string | number | undefined {
  const s = c.series[0];
  return s?.entity ? (Object.values(s.entity)[0] ?? s.id) : s?.id;
}

/** A daily percent change of each id, as steps (pct_change) and the ids they make. */
function returns(ids: readonly string[]): { steps: StepSpec[]; rets: string[] } {
  const steps: StepSpec[] = ids.map((id) => ({ op: 'pct_change', input: id, as: `${id}_ret` }));
  return { steps, rets: ids.map((id) => `${id}_ret`) };
}

/** A spread or a ratio: of exactly two series, charted with its statistics. */
function pair(op: 'spread' | 'ratio'): Intent['plan'] {
  return (c) => {
    const ids = idsOf(c);
    if (ids.length !== 2)
      throw new Clarify(`A ${op} is of exactly two series; I found ${ids.length}: ${labelsOf(c)}.`);
    return {
      steps: [{ op, inputs: [ids[0] as string, ids[1] as string], as: op }],
      outputs: [
        {
          kind: 'line',
          values: [op],
          title: `${c.series[0]?.label} ${op === 'spread' ? 'minus' : 'divided by'} ${c.series[1]?.label}`,
        },
        { kind: 'stats', values: [op] },
      ],
      explanation: `${c.what}, and takes the ${op} on their common dates.`,
    };
  };
}

/** One step of `op` per series, over the question's window (else `window`), charted as a line. */
function rolling(
  op: 'rolling_zscore' | 'rolling_mean',
  suffix: string,
  title: string,
  explain: string,
  withInputs: boolean,
): Intent['plan'] {
  return (c) => {
    const n = c.window ?? 20;
    const ids = idsOf(c);
    return {
      steps: ids.map((id) => ({ op, input: id, window: n, as: `${id}_${suffix}` })),
      outputs: [
        {
          kind: 'line',
          values: withInputs
            ? ids.flatMap((id) => [id, `${id}_${suffix}`])
            : ids.map((id) => `${id}_${suffix}`),
          title: `${n}-observation ${title}`,
        },
      ],
      explanation: `${c.what}, ${explain.replace('{n}', String(n))}.`,
    };
  };
}

const RESAMPLE_FREQUENCY = { weekly: 'week', monthly: 'month', quarterly: 'quarter' } as const;

function resampleHow(word: string | undefined): 'sum' | 'mean' | 'last' {
  if (word === 'sum' || word === 'total') return 'sum';
  if (word === 'average' || word === 'mean') return 'mean';
  return 'last';
}

/** The question forms of docs/analyze.md#the-built-in-planner, in the order they are tried. */
export const INTENTS: readonly Intent[] = [
  {
    name: 'correlation',
    pattern: /\bcorrelat/,
    plan: (c) => {
      const ids = idsOf(c);
      if (ids.length < 2) {
        const first = firstNamed(c);
        throw new Clarify(
          `A correlation needs two or more series; I found only ${first}. Name another, e.g. "correlation of ${first} and MSFT".`,
          c.someSymbols(),
        );
      }
      const { steps, rets } = returns(ids);
      return {
        steps: [...steps, { op: 'correlation', inputs: rets, as: 'correlation' }],
        outputs: [{ kind: 'table', values: ['correlation'], title: 'Correlation of daily percent changes' }],
        explanation: `${c.what}, takes daily percent changes and correlates them on their common dates.`,
      };
    },
  },
  {
    name: 'beta',
    pattern: /\bbeta\b/,
    plan: (c) => {
      const ids = idsOf(c);
      if (ids.length < 2)
        throw new Clarify(
          `A beta is of one series against another; name the benchmark, e.g. "beta of ${firstNamed(c)} against MSFT".`,
          c.someSymbols(),
        );
      const { steps, rets } = returns(ids.slice(0, 2));
      return {
        steps: [...steps, { op: 'beta', y: rets[0] as string, x: rets[1] as string, as: 'beta' }],
        outputs: [
          {
            kind: 'table',
            values: ['beta'],
            title: `Beta of ${c.series[0]?.label} on ${c.series[1]?.label}`,
          },
        ],
        explanation: `${c.what}, takes daily percent changes and regresses the first on the second (OLS beta and R²).`,
      };
    },
  },
  { name: 'spread', pattern: /\bminus\b|\bspread\b|\b2s10s\b|\b10s2s\b|\bless\b/, plan: pair('spread') },
  { name: 'ratio', pattern: /\bratio\b|\brelative to\b|\bdivided by\b/, plan: pair('ratio') },
  {
    name: 'volatility',
    pattern: /\bvolatility\b|\bvol\b/,
    plan: (c) => {
      const n = c.window ?? 30;
      const ids = idsOf(c);
      const vols = ids.map((id) => `${id}_vol`);
      return {
        steps: ids.flatMap((id): StepSpec[] => [
          { op: 'log_returns', input: id, as: `${id}_lr` },
          { op: 'rolling_std', input: `${id}_lr`, window: n, as: `${id}_vol` },
        ]),
        outputs: [
          { kind: 'line', values: vols, title: `${n}-observation volatility (std of daily log returns)` },
          { kind: 'stats', values: vols },
        ],
        explanation: `${c.what}, takes daily log returns and their standard deviation over ${n} observations.`,
      };
    },
  },
  {
    name: 'drawdown',
    pattern: /\bdrawdown\b/,
    plan: (c) => {
      const ids = idsOf(c);
      return {
        steps: ids.map((id) => ({ op: 'drawdown', input: id, as: `${id}_dd` })),
        outputs: [
          { kind: 'table', values: ids.map((id) => `${id}_dd`), title: 'Maximum drawdown' },
          { kind: 'line', values: ids },
        ],
        explanation: `${c.what}, and finds the deepest fall from a running peak.`,
      };
    },
  },
  {
    name: 'rebase',
    pattern: /\brebase|\bindex(ed)? to 100|\bto 100\b/,
    plan: (c) => {
      const ids = idsOf(c);
      const { from } = c.range;
      return {
        steps: ids.map((id) => ({
          op: 'rebase',
          input: id,
          as: `${id}_100`,
          ...(from && { base_date: from }),
        })),
        outputs: [
          {
            kind: 'line',
            values: ids.map((id) => `${id}_100`),
            title: `Rebased to 100${from ? ` on ${from}` : ''}`,
          },
        ],
        explanation: `${c.what}, rebased to 100 at the first value${from ? ` on or after ${from}` : ''}.`,
      };
    },
  },
  {
    name: 'z-score',
    pattern: /\bz-?scores?\b/,
    plan: rolling('rolling_zscore', 'z', 'z-score', 'and its z-score over {n} observations', false),
  },
  {
    name: 'moving average',
    pattern: /\bmoving average\b|\brolling (mean|average)\b|\bsma\b/,
    plan: rolling('rolling_mean', 'ma', 'moving average', 'with its mean over {n} observations', true),
  },
  {
    name: 'year over year',
    pattern: /\byear[- ]over[- ]year\b|\byoy\b|\bannual change\b/,
    plan: (c) => {
      const ids = idsOf(c);
      return {
        steps: ids.map((id) => ({ op: 'yoy', input: id, as: `${id}_yoy` })),
        outputs: [{ kind: 'line', values: ids.map((id) => `${id}_yoy`), title: 'Year-over-year change, %' }],
        explanation: `${c.what}, and its percent change from a year earlier.`,
      };
    },
  },
  {
    name: 'resample',
    pattern: /\b(weekly|monthly|quarterly)\b(?: (average|mean|sum|total|last|close))?/,
    plan: (c, match) => {
      const frequency = RESAMPLE_FREQUENCY[match[1] as keyof typeof RESAMPLE_FREQUENCY];
      const how = resampleHow(match[2]);
      const ids = idsOf(c);
      const values = ids.map((id) => `${id}_${frequency}`);
      return {
        steps: ids.map((id) => ({ op: 'resample', input: id, frequency, how, as: `${id}_${frequency}` })),
        outputs: [
          { kind: 'bar', values, title: `${match[1]} ${how}` },
          { kind: 'table', values },
        ],
        explanation: `${c.what}, resampled to one value per ${frequency} (${how}).`,
      };
    },
  },
  {
    name: 'returns',
    pattern: /\breturns?\b|\bpercent change\b|\b% change\b|\bchanges?\b/,
    plan: (c) => {
      const { steps, rets } = returns(idsOf(c));
      return {
        steps,
        outputs: [
          { kind: 'line', values: rets, title: 'Percent change' },
          { kind: 'stats', values: rets },
        ],
        explanation: `${c.what}, and its percent change from one observation to the next.`,
      };
    },
  },
];

/** The plan of the first intent the question matches; else the series charted with their statistics. */
export function planIntent(context: IntentContext): IntentPlan {
  for (const intent of INTENTS) {
    const match = context.rest.match(intent.pattern);
    if (match) return intent.plan(context, match);
  }
  const ids = idsOf(context);
  return {
    steps: [],
    outputs: [
      { kind: 'line', values: ids },
      { kind: 'stats', values: ids },
    ],
    explanation: `${context.what}, charted with summary statistics.`,
  };
}
