/**
 * What a run of an analysis gives: its reads, its computed outputs and notes on where the data did
 * not meet the dates asked for; stored as JSON for reuse and CSV export.
 */
import type { SeriesPlan } from './check.ts';
import type { Computed, RenderedOutput, StepProblem } from './engine.ts';
import type { SeriesSpec } from './spec.ts';
import { cotNet, type Series, type Value } from './transforms.ts';

/** Each series is one read of at most this many observations, the newest ones. */
export const OBSERVATIONS_PER_SERIES = 1000;

export interface SeriesRead {
  series: string;
  dataset: string;
  requestId: string;
  rows: number;
  /** More observations matched than one read returns: the oldest were left out. */
  truncated: boolean;
  firstDate: string | null;
  lastDate: string | null;
  costMicros: bigint;
  burnedMicros: bigint;
}

export interface RunResult {
  runId: string;
  analysisId: string | null;
  startedAt: number;
  reads: SeriesRead[];
  /** What this run burned: the sum of its reads' ledger entries. */
  burnedMicros: bigint;
  outputs: RenderedOutput[];
  problems: StepProblem[];
  /**
   * Where the data did not meet the dates asked for, said openly: a series that starts later than its
   * `from` ("the data starts 2025-03-01; showing from then"), one cut to its newest observations, one
   * with nothing in its range.
   */
  notes: string[];
  /** Set when this answer reuses an earlier run's paid result: nothing was read or burned now. */
  reusedFrom: { runId: string; startedAt: number; burnedMicros: bigint } | null;
}

/** A result as stored (and reused): token amounts as decimal micro strings. */
export function storeResult(result: RunResult): string {
  return JSON.stringify(result, (_key, value) => (typeof value === 'bigint' ? `${value}n` : value));
}

export function loadResult(json: string): RunResult {
  const result = JSON.parse(json, (_key, value) =>
    typeof value === 'string' && /^-?\d+n$/.test(value) ? BigInt(value.slice(0, -1)) : value,
  ) as RunResult;
  // Results stored before notes were kept have none.
  return { ...result, notes: result.notes ?? [] };
}

const DAY_MS = 86_400_000;
/** A week: a first observation within it of `from` is the calendar (a weekend, a holiday), not the data. */
const NOTE_SLACK_MS = 7 * DAY_MS;

/** Where the reads did not meet the dates the spec asked for (RunResult.notes). */
export function coverageNotes(series: readonly SeriesSpec[], reads: readonly SeriesRead[]): string[] {
  const notes: string[] = [];
  for (const s of series) {
    const read = reads.find((r) => r.series === s.id);
    if (!read) continue;
    const label = s.label ?? s.id;
    const range = `${s.from ? ` from ${s.from}` : ''}${s.to ? ` to ${s.to}` : ''}`;
    if (read.rows === 0) {
      notes.push(`There is no data for ${label}${range}: nothing to show for it.`);
    } else if (read.truncated && read.firstDate) {
      notes.push(
        `${label} has more than ${OBSERVATIONS_PER_SERIES} observations${range}: showing the newest ${OBSERVATIONS_PER_SERIES}, from ${read.firstDate}.`,
      );
    } else if (s.from && read.firstDate && Date.parse(read.firstDate) - Date.parse(s.from) > NOTE_SLACK_MS) {
      notes.push(
        `The data for ${label} starts ${read.firstDate.slice(0, 10)}; showing from then (asked from ${s.from}).`,
      );
    }
    if (s.to && read.lastDate && Date.parse(s.to) - Date.parse(read.lastDate) > NOTE_SLACK_MS) {
      notes.push(
        `The data for ${label} ends ${read.lastDate.slice(0, 10)}; showing to then (asked to ${s.to}).`,
      );
    }
  }
  return notes;
}

/** A series' rows as values: a numeric field, a COT net position, or every entity of a curve. */
export function toComputed(plan: SeriesPlan, rows: Record<string, unknown>[]): Computed {
  const label = plan.spec.label ?? plan.spec.id;
  const t = plan.timeField;
  if (plan.shape.kind === 'panel') {
    const { labelField, maturityField, field } = plan.shape;
    return {
      kind: 'panel',
      label,
      panel: {
        rows: rows.map((r) => ({
          date: String(r[t]),
          label: String(r[labelField]),
          maturityMonths: Number(r[maturityField]),
          value: typeof r[field] === 'number' ? (r[field] as number) : null,
        })),
      },
    };
  }
  const series: Series =
    plan.shape.kind === 'net'
      ? cotNet(rows, t, plan.shape.traderClass)
      : {
          dates: rows.map((r) => String(r[t])),
          values: rows.map((r) => {
            const v = r[(plan.shape as { field: string }).field];
            return typeof v === 'number' ? v : null;
          }),
        };
  return { kind: 'series', label, series: dedupeDates(series) };
}

/** A filter that matched two rows on one date (two listings of a symbol): the first one counts. */
function dedupeDates(s: Series): Series {
  const dates: string[] = [];
  const values: Value[] = [];
  s.dates.forEach((d, i) => {
    if (dates.at(-1) === d) return;
    dates.push(d);
    values.push(s.values[i] ?? null);
  });
  return { dates, values };
}
