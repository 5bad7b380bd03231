/** The composer's draft of an analysis (text as typed) and the spec it makes. */
import { parseJsonInput } from '../../api.ts';
import type { AnalysisSpec, SeriesSpec } from '../../types.ts';

export interface SeriesRow {
  id: string;
  dataset: string;
  entity: string;
  field: string;
  from: string;
  to: string;
}

export interface Draft {
  name: string;
  rows: SeriesRow[];
  stepsText: string;
  outputsText: string;
}

export const emptyRow = (n: number): SeriesRow => ({
  id: `s${n}`,
  dataset: 'stocks/prices',
  entity: '',
  field: 'close',
  from: '',
  to: '',
});

export const emptyDraft: Draft = { name: '', rows: [emptyRow(1)], stepsText: '', outputsText: '' };

function rowsOf(spec: AnalysisSpec): SeriesRow[] {
  return spec.series.map((s) => ({
    id: s.id,
    dataset: s.dataset,
    entity: Object.entries(s.entity)
      .map(([k, v]) => `${k}=${v}`)
      .join(', '),
    field: s.field,
    from: s.from ?? '',
    to: s.to ?? '',
  }));
}

/** An analysis (saved or an answer) as the composer shows it. */
export function draftOf(a: { name: string; spec: AnalysisSpec }): Draft {
  return {
    name: a.name,
    rows: rowsOf(a.spec),
    stepsText: a.spec.steps.length ? JSON.stringify(a.spec.steps, null, 1) : '',
    outputsText: JSON.stringify(a.spec.outputs, null, 1),
  };
}

/** "symbol=AAPL, exchange=NASDAQ" -> {symbol: "AAPL", exchange: "NASDAQ"}. */
function entityOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

export function specOf({ rows, stepsText, outputsText }: Draft): AnalysisSpec {
  const series: SeriesSpec[] = rows.map((r) => ({
    id: r.id.trim(),
    dataset: r.dataset.trim(),
    entity: entityOf(r.entity),
    field: r.field.trim(),
    // "AAPL close": how charts and tables name it.
    label: [...Object.values(entityOf(r.entity)), r.field.trim()].join(' ').slice(0, 80),
    ...(r.from.trim() && { from: r.from.trim() }),
    ...(r.to.trim() && { to: r.to.trim() }),
  }));
  const ids = series.map((s) => s.id);
  // Parsed here: a typo is reported with where it is, and nothing is sent.
  const steps = stepsText.trim() ? (parseJsonInput('Steps', stepsText) as AnalysisSpec['steps']) : [];
  const outputs: AnalysisSpec['outputs'] = outputsText.trim()
    ? (parseJsonInput('Outputs', outputsText) as AnalysisSpec['outputs'])
    : [
        { kind: 'line', values: ids },
        { kind: 'stats', values: ids },
      ];
  return { series, steps, outputs };
}
