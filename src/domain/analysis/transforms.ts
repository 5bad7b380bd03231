/**
 * The Workbench's transforms: pure functions over time series, exact to IEEE doubles and documented in
 * docs/analyze.md. The rules every function shares:
 * - A series is dates in strictly increasing order (YYYY-MM-DD, or a UTC date-time) with one value each;
 *   a `null` value is a gap (a holiday, a value not published). Gaps are never filled.
 * - Windows and lags count observations (positions), not calendar days: "30-day" means 30 rows.
 * - A result that cannot be computed is `null`, never NaN or Infinity: a gap in its inputs, a window
 *   shorter than asked, a division by zero, a logarithm of a non-positive number.
 * - Two or more series are combined on their common dates only (an inner join on the date), and only
 *   where every one has a value: unequal calendars never shift one series against another.
 */

export type Value = number | null;

export interface Series {
  dates: string[];
  values: Value[];
}

/** Why a transform cannot run at all (too few observations, a bad parameter): the caller reports it. */
export class TransformError extends Error {
  override name = 'TransformError';
}

const finite = (v: number): Value => (Number.isFinite(v) ? v : null);

function lagged(s: Series, periods: number, f: (now: number, then: number) => number | null): Series {
  if (!Number.isInteger(periods) || periods < 1)
    throw new TransformError('periods must be a whole number >= 1');
  const values = s.values.map((now, i) => {
    const then = i >= periods ? s.values[i - periods] : null;
    if (now === null || then === null || then === undefined) return null;
    const out = f(now, then);
    return out === null ? null : finite(out);
  });
  return { dates: [...s.dates], values };
}

/**
 * Percent change over `periods` observations: (x_t - x_{t-p}) / x_{t-p} * 100 (FRED's (x_t / x_{t-p} - 1) * 100,
 * written so that round figures stay round); null where x_{t-p} is 0.
 */
export function pctChange(s: Series, periods = 1): Series {
  return lagged(s, periods, (now, then) => (then === 0 ? null : ((now - then) / then) * 100));
}

/** Log return: ln(x_t / x_{t-1}); null unless both are positive. */
export function logReturns(s: Series): Series {
  return lagged(s, 1, (now, then) => (now > 0 && then > 0 ? Math.log(now / then) : null));
}

/** Difference over `periods` observations: x_t - x_{t-p}. */
export function difference(s: Series, periods = 1): Series {
  return lagged(s, periods, (now, then) => now - then);
}

/** The same calendar day a year earlier (29 February -> 28 February), as YYYY-MM-DD. */
function yearBefore(date: string): string {
  const year = Number(date.slice(0, 4)) - 1;
  let monthDay = date.slice(5, 10);
  if (monthDay === '02-29') monthDay = '02-28';
  return `${String(year).padStart(4, '0')}-${monthDay}`;
}

/** Days between two YYYY-MM-DD dates (b - a). */
function daysBetween(a: string, b: string): number {
  return (Date.parse(`${b.slice(0, 10)}T00:00:00Z`) - Date.parse(`${a.slice(0, 10)}T00:00:00Z`)) / 86_400_000;
}

/**
 * Year-over-year percent change by date, whatever the calendar: x_t against the last observation on or
 * before the same day a year earlier, provided it is at most `toleranceDays` (default 7) before that day
 * (a weekend or holiday a year ago); null otherwise, and null where either value is a gap or the earlier
 * value is 0.
 */
export function yoy(s: Series, toleranceDays = 7): Series {
  let j = 0;
  const values = s.dates.map((date, i) => {
    const now = s.values[i] ?? null;
    const target = yearBefore(date);
    while (j + 1 < s.dates.length && (s.dates[j + 1] as string).slice(0, 10) <= target) j++;
    const refDate = s.dates[j] as string;
    if (now === null || refDate.slice(0, 10) > target || daysBetween(refDate, target) > toleranceDays)
      return null;
    const then = s.values[j] ?? null;
    if (then === null || then === 0) return null;
    return finite(((now - then) / then) * 100);
  });
  return { dates: [...s.dates], values };
}

/**
 * Rebased to 100 at the first observation on or after `baseDate` that has a value (the first value when
 * no date is given): x_t / x_base * 100. Observations before the base keep their rebased value too.
 */
export function rebase(s: Series, baseDate?: string): Series {
  const i = s.values.findIndex(
    (v, k) => v !== null && (baseDate === undefined || (s.dates[k] as string) >= baseDate),
  );
  if (i < 0) throw new TransformError(`no value on or after ${baseDate ?? 'the start'} to rebase on`);
  const base = s.values[i] as number;
  if (base === 0) throw new TransformError(`the base value on ${s.dates[i]} is 0: cannot rebase`);
  return { dates: [...s.dates], values: s.values.map((v) => (v === null ? null : finite((v / base) * 100))) };
}

function windowed(s: Series, window: number, min: number, f: (w: number[], last: number) => Value): Series {
  if (!Number.isInteger(window) || window < min) {
    throw new TransformError(`window must be a whole number >= ${min}`);
  }
  const values = s.values.map((last, i) => {
    if (i + 1 < window || last === null) return null;
    const w: number[] = [];
    for (let k = i + 1 - window; k <= i; k++) {
      const v = s.values[k] ?? null;
      if (v === null) return null;
      w.push(v);
    }
    return f(w, last);
  });
  return { dates: [...s.dates], values };
}

const meanOf = (xs: readonly number[]): number => {
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
};

/** Sample standard deviation (n - 1 in the denominator). */
const stdOf = (xs: readonly number[]): number => {
  const m = meanOf(xs);
  let ss = 0;
  for (const x of xs) ss += (x - m) * (x - m);
  return Math.sqrt(ss / (xs.length - 1));
};

/** Mean of the last `window` observations (this one included); null until there are that many, or with a gap in them. */
export function rollingMean(s: Series, window: number): Series {
  return windowed(s, window, 1, (w) => finite(meanOf(w)));
}

/** Sample standard deviation of the last `window` observations (window >= 2). */
export function rollingStd(s: Series, window: number): Series {
  return windowed(s, window, 2, (w) => finite(stdOf(w)));
}

/** (x_t - mean) / std over the last `window` observations, x_t included; null where the std is 0. */
export function rollingZScore(s: Series, window: number): Series {
  return windowed(s, window, 2, (w, last) => {
    const sd = stdOf(w);
    return sd === 0 ? null : finite((last - meanOf(w)) / sd);
  });
}

export type Frequency = 'week' | 'month' | 'quarter';
export type Aggregation = 'last' | 'mean' | 'sum';

/** The first day of the period holding `date`: Monday of its ISO week, the 1st of its month or quarter. */
export function periodStart(date: string, frequency: Frequency): string {
  const day = date.slice(0, 10);
  if (frequency === 'month') return `${day.slice(0, 7)}-01`;
  if (frequency === 'quarter') {
    const month = Number(day.slice(5, 7));
    const first = month - ((month - 1) % 3);
    return `${day.slice(0, 4)}-${String(first).padStart(2, '0')}-01`;
  }
  const ms = Date.parse(`${day}T00:00:00Z`);
  const weekday = (new Date(ms).getUTCDay() + 6) % 7; // Monday 0 ... Sunday 6
  return new Date(ms - weekday * 86_400_000).toISOString().slice(0, 10);
}

/**
 * One value per week, month or quarter, dated by the period's first day: the last value, the mean or the
 * sum of the values inside it. Gaps inside a period are skipped; a period with no value at all is left
 * out. The last period may be partial (it holds what has been published so far).
 */
export function resample(s: Series, frequency: Frequency, how: Aggregation): Series {
  const dates: string[] = [];
  const values: Value[] = [];
  let current: string | null = null;
  let acc: number[] = [];
  const flush = () => {
    if (current === null || acc.length === 0) return;
    dates.push(current);
    values.push(
      how === 'last' ? (acc.at(-1) as number) : how === 'sum' ? acc.reduce((a, b) => a + b, 0) : meanOf(acc),
    );
  };
  s.dates.forEach((date, i) => {
    const period = periodStart(date, frequency);
    if (period !== current) {
      flush();
      current = period;
      acc = [];
    }
    const v = s.values[i] ?? null;
    if (v !== null) acc.push(v);
  });
  flush();
  return { dates, values };
}

/** The dates every series has a value on, and each series' values there, in order. */
export function align(series: readonly Series[]): Series[] {
  if (series.length === 0) return [];
  const maps = series.map((s) => {
    const m = new Map<string, number>();
    s.dates.forEach((d, i) => {
      const v = s.values[i] ?? null;
      if (v !== null) m.set(d, v);
    });
    return m;
  });
  const first = series[0] as Series;
  const dates = first.dates.filter((d) => maps.every((m) => m.has(d)));
  return maps.map((m) => ({ dates: [...dates], values: dates.map((d) => m.get(d) as number) }));
}

/** a - b on their common dates. */
export function spread(a: Series, b: Series): Series {
  const [x, y] = align([a, b]) as [Series, Series];
  return { dates: x.dates, values: x.values.map((v, i) => finite((v as number) - (y.values[i] as number))) };
}

/** a / b on their common dates; null where b is 0. */
export function ratio(a: Series, b: Series): Series {
  const [x, y] = align([a, b]) as [Series, Series];
  return {
    dates: x.dates,
    values: x.values.map((v, i) =>
      y.values[i] === 0 ? null : finite((v as number) / (y.values[i] as number)),
    ),
  };
}

/** Pearson correlation of two equally long samples; null with fewer than 3 pairs or a constant sample. */
export function pearson(xs: readonly number[], ys: readonly number[]): Value {
  if (xs.length !== ys.length || xs.length < 3) return null;
  const mx = meanOf(xs);
  const my = meanOf(ys);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < xs.length; i++) {
    const dx = (xs[i] as number) - mx;
    const dy = (ys[i] as number) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return null;
  return finite(sxy / Math.sqrt(sxx * syy));
}

export interface CorrelationMatrix {
  labels: string[];
  /** matrix[i][j]: correlation of series i and j over the dates all of them have (1 on the diagonal). */
  matrix: Value[][];
  /** How many common dates the matrix was computed over. */
  observations: number;
}

/** Pearson correlations of every pair, all over the same common dates (align first). */
export function correlationMatrix(labels: readonly string[], series: readonly Series[]): CorrelationMatrix {
  if (series.length < 2) throw new TransformError('a correlation needs at least two series');
  const aligned = align(series);
  const cols = aligned.map((s) => s.values as number[]);
  const n = aligned[0]?.dates.length ?? 0;
  const matrix = cols.map((a, i) => cols.map((b, j) => (i === j ? (n >= 3 ? 1 : null) : pearson(a, b))));
  return { labels: [...labels], matrix, observations: n };
}

export interface Regression {
  beta: Value;
  alpha: Value;
  r2: Value;
  observations: number;
}

/** Ordinary least squares of y on x (y = alpha + beta x) over their common dates; nulls under 3 points or a constant x. */
export function olsBeta(y: Series, x: Series): Regression {
  const [ya, xa] = align([y, x]) as [Series, Series];
  const ys = ya.values as number[];
  const xs = xa.values as number[];
  const n = xs.length;
  if (n < 3) return { beta: null, alpha: null, r2: null, observations: n };
  const mx = meanOf(xs);
  const my = meanOf(ys);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] as number) - mx;
    const dy = (ys[i] as number) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0) return { beta: null, alpha: null, r2: null, observations: n };
  const beta = sxy / sxx;
  // With a constant y every fitted value is exact: the fit explains all there is (R^2 = 1 by convention).
  const r2 = syy === 0 ? 1 : (sxy * sxy) / (sxx * syy);
  return { beta: finite(beta), alpha: finite(my - beta * mx), r2: finite(r2), observations: n };
}

export interface Drawdown {
  /** The deepest fall from a running peak, in percent (0 or negative). */
  maxDrawdownPct: number;
  peakDate: string | null;
  troughDate: string | null;
  /** The first date after the trough back at or above the peak; null if not (yet) recovered. */
  recoveryDate: string | null;
}

/** Maximum drawdown of a level series (prices, an index): values must be positive; gaps are skipped. */
export function maxDrawdown(s: Series): Drawdown {
  let peak: number | null = null;
  let peakDate: string | null = null;
  let worst = 0;
  let best: { peak: number; peakDate: string; troughDate: string } | null = null;
  s.values.forEach((v, i) => {
    if (v === null) return;
    if (v <= 0) throw new TransformError('a drawdown needs positive levels (prices, an index), not returns');
    const date = s.dates[i] as string;
    if (peak === null || v > peak) {
      peak = v;
      peakDate = date;
      return;
    }
    const dd = ((v - peak) / peak) * 100;
    if (dd < worst) {
      worst = dd;
      best = { peak, peakDate: peakDate as string, troughDate: date };
    }
  });
  if (best === null) return { maxDrawdownPct: 0, peakDate: null, troughDate: null, recoveryDate: null };
  const found = best as { peak: number; peakDate: string; troughDate: string };
  let recoveryDate: string | null = null;
  for (let i = 0; i < s.dates.length; i++) {
    const v = s.values[i] ?? null;
    if ((s.dates[i] as string) > found.troughDate && v !== null && v >= found.peak) {
      recoveryDate = s.dates[i] as string;
      break;
    }
  }
  return { maxDrawdownPct: worst, peakDate: found.peakDate, troughDate: found.troughDate, recoveryDate };
}

/** A COT report row's fields for one trader class: `<class>_long_all` and `<class>_short_all`. */
export function cotFields(traderClass: string): { long: string; short: string } {
  return { long: `${traderClass}_long_all`, short: `${traderClass}_short_all` };
}

/**
 * Net position of a trader class, long minus short, from COT report rows (one per report date, of one
 * market). A row missing either side is a gap.
 */
export function cotNet(
  rows: readonly Record<string, unknown>[],
  timeField: string,
  traderClass: string,
): Series {
  const { long, short } = cotFields(traderClass);
  const dates: string[] = [];
  const values: Value[] = [];
  for (const row of rows) {
    dates.push(String(row[timeField]));
    const l = row[long];
    const s = row[short];
    values.push(typeof l === 'number' && typeof s === 'number' ? l - s : null);
  }
  return { dates, values };
}

/**
 * Percentile rank of each value among the last `window` observations (itself included): 100 * (values
 * below it + half of the others equal to it) / (window - 1), so the lowest of the window is 0 and the
 * highest 100. Null until `window` observations exist or with a gap among them (window >= 2).
 */
export function percentileRank(s: Series, window: number): Series {
  return windowed(s, window, 2, (w, last) => {
    let below = 0;
    let equal = 0;
    for (const v of w) {
      if (v < last) below++;
      else if (v === last) equal++;
    }
    return ((below + (equal - 1) / 2) / (window - 1)) * 100;
  });
}

export interface CurvePoint {
  label: string;
  maturityMonths: number;
  value: number;
}

export interface Curve {
  /** The date the curve is of: the latest date on or before the one asked with every tenor's value present there. */
  date: string;
  points: CurvePoint[];
}

/**
 * The yield curve on a date across tenors, from rows of (date, tenor label, maturity in months, yield):
 * the latest date on or before `date` (the latest date at all when none is given) that has at least two
 * tenors with a value, sorted by maturity. Tenors without a value that day are left out.
 */
export function curveOn(
  rows: readonly { date: string; label: string; maturityMonths: number; value: Value }[],
  date?: string,
): Curve {
  const byDate = new Map<string, CurvePoint[]>();
  for (const r of rows) {
    if (r.value === null || (date !== undefined && r.date.slice(0, 10) > date)) continue;
    let points = byDate.get(r.date);
    if (!points) {
      points = [];
      byDate.set(r.date, points);
    }
    points.push({ label: r.label, maturityMonths: r.maturityMonths, value: r.value });
  }
  const dates = [...byDate.keys()].filter((d) => (byDate.get(d) as CurvePoint[]).length >= 2).sort();
  const chosen = dates.at(-1);
  if (chosen === undefined)
    throw new TransformError(`no curve with two or more tenors on or before ${date ?? 'today'}`);
  const points = (byDate.get(chosen) as CurvePoint[]).sort((a, b) => a.maturityMonths - b.maturityMonths);
  return { date: chosen, points };
}

/** The 2s10s spread over time: the 10-year yield minus the 2-year, in percentage points, on common dates. */
export function twosTens(tenYear: Series, twoYear: Series): Series {
  return spread(tenYear, twoYear);
}

export interface SummaryStats {
  count: number;
  firstDate: string | null;
  lastDate: string | null;
  mean: Value;
  std: Value;
  min: Value;
  max: Value;
  last: Value;
}

/** Count, first and last date, mean, sample std, min, max and last value, over the values present. */
export function summarize(s: Series): SummaryStats {
  const present: number[] = [];
  let firstDate: string | null = null;
  let lastDate: string | null = null;
  s.values.forEach((v, i) => {
    if (v === null) return;
    present.push(v);
    firstDate ??= s.dates[i] as string;
    lastDate = s.dates[i] as string;
  });
  if (present.length === 0) {
    return {
      count: 0,
      firstDate: null,
      lastDate: null,
      mean: null,
      std: null,
      min: null,
      max: null,
      last: null,
    };
  }
  return {
    count: present.length,
    firstDate,
    lastDate,
    mean: finite(meanOf(present)),
    std: present.length >= 2 ? finite(stdOf(present)) : null,
    min: Math.min(...present),
    max: Math.max(...present),
    last: present.at(-1) as number,
  };
}
