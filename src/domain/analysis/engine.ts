/**
 * Runs an analysis's steps over the series already read, and renders its outputs: pure, no I/O. The
 * service reads (and meters) the series, then hands them here.
 */
import { type AnalysisSpec, type OutputSpec, type StepSpec, stepInputs, stepOutputs } from './spec.ts';
import {
  align,
  type Curve,
  correlationMatrix,
  curveOn,
  type Drawdown,
  difference,
  logReturns,
  maxDrawdown,
  olsBeta,
  pctChange,
  percentileRank,
  type Regression,
  ratio,
  rebase,
  resample,
  rollingMean,
  rollingStd,
  rollingZScore,
  type Series,
  spread,
  summarize,
  TransformError,
  type Value,
  yoy,
} from './transforms.ts';

/** Rows of several entities (a whole yield curve): only `curve` reads them. */
export interface Panel {
  rows: { date: string; label: string; maturityMonths: number; value: Value }[];
}

export type Computed =
  | { kind: 'series'; label: string; series: Series }
  | { kind: 'panel'; label: string; panel: Panel }
  | { kind: 'matrix'; label: string; labels: string[]; matrix: Value[][]; observations: number }
  | { kind: 'regression'; label: string; y: string; x: string; regression: Regression }
  | { kind: 'drawdown'; label: string; drawdown: Drawdown }
  | { kind: 'curve'; label: string; curve: Curve };

export type Cell = string | number | null;

export type RenderedOutput =
  | {
      kind: 'line' | 'bar';
      title: string;
      x: 'date' | 'label';
      series: { name: string; x: string[]; y: Value[] }[];
    }
  | { kind: 'table'; title: string; columns: string[]; rows: Cell[][] }
  | {
      kind: 'stats';
      title: string;
      rows: {
        name: string;
        count: number;
        first_date: string | null;
        last_date: string | null;
        mean: Value;
        std: Value;
        min: Value;
        max: Value;
        last: Value;
      }[];
    };

/** A step or output that cannot run on what it was given: the service turns it into a 400. */
export class AnalysisError extends Error {
  override name = 'AnalysisError';
  readonly path: string;
  constructor(path: string, message: string) {
    super(message);
    this.path = path;
  }
}

function seriesOf(values: Map<string, Computed>, name: string, path: string): Series {
  const v = values.get(name);
  if (!v) throw new AnalysisError(path, `nothing is named ${name} before this step`);
  if (v.kind === 'panel') {
    throw new AnalysisError(
      path,
      `${name} holds several entities (one row per entity per date): name one in its entity, or use it in a curve step`,
    );
  }
  if (v.kind !== 'series') throw new AnalysisError(path, `${name} is a ${v.kind}, not a series`);
  return v.series;
}

function runStep(step: StepSpec, values: Map<string, Computed>, path: string): void {
  const s = (name: string) => seriesOf(values, name, path);
  const put = (name: string, series: Series, label = name): void => {
    values.set(name, { kind: 'series', label, series });
  };
  switch (step.op) {
    case 'pct_change':
      put(step.as, pctChange(s(step.input), step.periods ?? 1));
      return;
    case 'log_returns':
      put(step.as, logReturns(s(step.input)));
      return;
    case 'difference':
      put(step.as, difference(s(step.input), step.periods ?? 1));
      return;
    case 'yoy':
      put(step.as, yoy(s(step.input)));
      return;
    case 'rebase':
      put(step.as, rebase(s(step.input), step.base_date));
      return;
    case 'rolling_mean':
      put(step.as, rollingMean(s(step.input), step.window));
      return;
    case 'rolling_std':
      put(step.as, rollingStd(s(step.input), step.window));
      return;
    case 'rolling_zscore':
      put(step.as, rollingZScore(s(step.input), step.window));
      return;
    case 'percentile_rank':
      put(step.as, percentileRank(s(step.input), step.window));
      return;
    case 'resample':
      put(step.as, resample(s(step.input), step.frequency, step.how));
      return;
    case 'align': {
      const aligned = align(step.inputs.map(s));
      step.inputs.forEach((name, i) => {
        put(name, aligned[i] as Series, values.get(name)?.label ?? name);
      });
      return;
    }
    case 'spread':
      put(step.as, spread(s(step.inputs[0]), s(step.inputs[1])));
      return;
    case 'ratio':
      put(step.as, ratio(s(step.inputs[0]), s(step.inputs[1])));
      return;
    case 'correlation': {
      const m = correlationMatrix(
        step.inputs.map((name) => values.get(name)?.label ?? name),
        step.inputs.map(s),
      );
      values.set(step.as, { kind: 'matrix', label: step.as, ...m });
      return;
    }
    case 'beta':
      values.set(step.as, {
        kind: 'regression',
        label: step.as,
        y: step.y,
        x: step.x,
        regression: olsBeta(s(step.y), s(step.x)),
      });
      return;
    case 'drawdown':
      values.set(step.as, { kind: 'drawdown', label: step.as, drawdown: maxDrawdown(s(step.input)) });
      return;
    case 'curve': {
      const v = values.get(step.input);
      if (v?.kind !== 'panel') {
        throw new AnalysisError(
          path,
          `a curve reads every tenor: ${step.input} must be read with no tenor in its entity`,
        );
      }
      values.set(step.as, { kind: 'curve', label: step.as, curve: curveOn(v.panel.rows, step.date) });
      return;
    }
  }
}

export interface StepProblem {
  path: string;
  message: string;
}

/**
 * Runs every step in order over the series read. A step that cannot run on this data (a base value of
 * 0, no curve on the date) is reported, and the steps and outputs that need its result are skipped: the
 * reads are paid for, so the run returns everything else it could compute.
 */
export function computeSteps(
  spec: AnalysisSpec,
  read: ReadonlyMap<string, Computed>,
): { values: Map<string, Computed>; problems: StepProblem[] } {
  const values = new Map(read);
  const problems: StepProblem[] = [];
  const failed = new Set<string>();
  spec.steps.forEach((step, i) => {
    const path = `steps.${i}`;
    const outs = stepOutputs(step);
    const missing = stepInputs(step).find((name) => failed.has(name));
    if (missing !== undefined) {
      problems.push({ path, message: `${step.op} skipped: ${missing} could not be computed` });
      for (const out of outs) failed.add(out);
      return;
    }
    try {
      runStep(step, values, path);
    } catch (error) {
      if (!(error instanceof TransformError || error instanceof AnalysisError)) throw error;
      problems.push({ path, message: `${step.op}: ${error.message}` });
      for (const out of outs) {
        failed.add(out);
        values.delete(out);
      }
    }
  });
  return { values, problems };
}

const fmt = (v: Value): Cell => v;

/** Series joined on every date any of them has (an outer join: a missing value is an empty cell). */
function seriesTable(named: { name: string; series: Series }[]): { columns: string[]; rows: Cell[][] } {
  const dates = [...new Set(named.flatMap((n) => n.series.dates))].sort();
  const lookups = named.map((n) => new Map(n.series.dates.map((d, i) => [d, n.series.values[i] ?? null])));
  return {
    columns: ['date', ...named.map((n) => n.name)],
    rows: dates.map((d) => [d, ...lookups.map((m) => fmt(m.get(d) ?? null))]),
  };
}

function tableOf(v: Computed): { columns: string[]; rows: Cell[][] } {
  switch (v.kind) {
    case 'series':
      return seriesTable([{ name: v.label, series: v.series }]);
    case 'matrix':
      return { columns: ['', ...v.labels], rows: v.labels.map((l, i) => [l, ...(v.matrix[i] as Value[])]) };
    case 'regression':
      return {
        columns: ['y', 'x', 'beta', 'alpha', 'r2', 'observations'],
        rows: [[v.y, v.x, v.regression.beta, v.regression.alpha, v.regression.r2, v.regression.observations]],
      };
    case 'drawdown':
      return {
        columns: ['max_drawdown_pct', 'peak_date', 'trough_date', 'recovery_date'],
        rows: [
          [v.drawdown.maxDrawdownPct, v.drawdown.peakDate, v.drawdown.troughDate, v.drawdown.recoveryDate],
        ],
      };
    case 'curve':
      return {
        columns: ['tenor', 'maturity_months', v.curve.date],
        rows: v.curve.points.map((p) => [p.label, p.maturityMonths, p.value]),
      };
    case 'panel':
      return {
        columns: ['date', 'entity', 'value'],
        rows: v.panel.rows.map((r) => [r.date, r.label, r.value]),
      };
  }
}

function render(output: OutputSpec, values: Map<string, Computed>, path: string): RenderedOutput {
  const picked = output.values.map((name) => {
    const v = values.get(name);
    if (!v) throw new AnalysisError(path, `no series or step result is named ${name}`);
    return { name, v };
  });
  const title = output.title ?? picked.map((p) => p.v.label).join(', ');
  if (output.kind === 'line' || output.kind === 'bar') {
    const curves = picked.filter((p) => p.v.kind === 'curve');
    if (curves.length > 0) {
      return {
        kind: output.kind,
        title,
        x: 'label',
        series: curves.map(({ v }) => {
          const c = (v as Extract<Computed, { kind: 'curve' }>).curve;
          return {
            name: `${v.label} ${c.date}`,
            x: c.points.map((p) => p.label),
            y: c.points.map((p) => p.value),
          };
        }),
      };
    }
    return {
      kind: output.kind,
      title,
      x: 'date',
      series: picked.map(({ name, v }) => {
        const s = seriesOf(values, name, path);
        return { name: v.label, x: s.dates, y: s.values };
      }),
    };
  }
  if (output.kind === 'stats') {
    return {
      kind: 'stats',
      title,
      rows: picked.map(({ name, v }) => {
        const st = summarize(seriesOf(values, name, path));
        return {
          name: v.label,
          count: st.count,
          first_date: st.firstDate,
          last_date: st.lastDate,
          mean: st.mean,
          std: st.std,
          min: st.min,
          max: st.max,
          last: st.last,
        };
      }),
    };
  }
  const allSeries = picked.every((p) => p.v.kind === 'series');
  if (allSeries && picked.length > 1) {
    return {
      kind: 'table',
      title,
      ...seriesTable(picked.map((p) => ({ name: p.v.label, series: (p.v as { series: Series }).series }))),
    };
  }
  return { kind: 'table', title, ...tableOf((picked[0] as { v: Computed }).v) };
}

/** The outputs, rendered in the order the spec declares them; one that needs a missing result is reported instead. */
export function renderOutputs(
  spec: AnalysisSpec,
  values: Map<string, Computed>,
  problems: StepProblem[] = [],
): RenderedOutput[] {
  const out: RenderedOutput[] = [];
  spec.outputs.forEach((output, i) => {
    try {
      out.push(render(output, values, `outputs.${i}`));
    } catch (error) {
      if (!(error instanceof AnalysisError)) throw error;
      problems.push({ path: error.path, message: `output skipped: ${error.message}` });
    }
  });
  return out;
}

const csvCell = (c: Cell): string => {
  if (c === null) return '';
  const text = String(c);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/**
 * The result as CSV: every series shown by a line, bar or table output joined on its dates, then each
 * other table (a correlation matrix, a regression, a curve, statistics) after an empty line.
 */
export function resultCsv(outputs: readonly RenderedOutput[]): string {
  const tables: { columns: string[]; rows: Cell[][] }[] = [];
  const dated = new Map<string, Series>();
  for (const o of outputs) {
    if ((o.kind === 'line' || o.kind === 'bar') && o.x === 'date') {
      for (const s of o.series) dated.set(s.name, { dates: s.x, values: s.y });
    } else if (o.kind === 'line' || o.kind === 'bar') {
      for (const s of o.series)
        tables.push({ columns: ['label', s.name], rows: s.x.map((x, i) => [x, s.y[i] ?? null]) });
    } else if (o.kind === 'table') {
      if (o.columns[0] === 'date') {
        o.columns.slice(1).forEach((name, k) => {
          dated.set(name, {
            dates: o.rows.map((r) => String(r[0])),
            values: o.rows.map((r) => (r[k + 1] ?? null) as Value),
          });
        });
      } else tables.push(o);
    } else if (o.kind === 'stats') {
      tables.push({
        columns: ['name', 'count', 'first_date', 'last_date', 'mean', 'std', 'min', 'max', 'last'],
        rows: o.rows.map((r) => [
          r.name,
          r.count,
          r.first_date,
          r.last_date,
          r.mean,
          r.std,
          r.min,
          r.max,
          r.last,
        ]),
      });
    }
  }
  if (dated.size > 0) {
    tables.unshift(
      seriesTable(
        [...dated].map(([name, series]) => ({
          name,
          series: { dates: series.dates, values: series.values.map((v) => (v === null ? null : v)) },
        })),
      ),
    );
  }
  return tables
    .map((t) => [t.columns, ...t.rows].map((row) => row.map(csvCell).join(',')).join('\r\n'))
    .join('\r\n\r\n')
    .concat('\r\n');
}
