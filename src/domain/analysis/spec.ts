/**
 * What an analysis is: series to read, steps (transforms) over them and outputs. One zod schema, used
 * by the REST routes (and so the OpenAPI document), the assistant's run_analysis tool and the store's
 * JSON: the domain receives a typed spec.
 */
import { z } from 'zod';

const name = z
  .string()
  .regex(
    /^[a-z][a-z0-9_]{0,31}$/,
    'must be a lower-case name: a letter, then letters, digits or _ (32 at most)',
  );
const date = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be YYYY-MM-DD')
  // Never throws: an invalid Date's toISOString() would, and zod does not catch a refinement's throw.
  .refine((v) => {
    const d = new Date(`${v}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(v);
  }, 'is not a real date');
const window = z.int().min(1).max(2000);

export const seriesSpec = z.strictObject({
  id: name.describe('How steps and outputs name this series.'),
  dataset: z
    .string()
    .regex(/^[a-z0-9-]+\/[a-z0-9_-]+$/, 'must be domain/name')
    .describe('A dataset key of the catalog.'),
  entity: z
    .record(z.string().max(64), z.union([z.string().max(200), z.number()]))
    .default({})
    .describe('Entity filters, e.g. {"symbol": "AAPL"} or {"tenor": "10 Yr"}; one value per field.'),
  field: z
    .string()
    .max(80)
    .describe(
      'A numeric field of the dataset (close, par_yield, value), or net:<class> on a COT report: that trader class long minus short (net:noncommercial, net:m_money).',
    ),
  from: date.optional().describe('First date, inclusive.'),
  to: date.optional().describe('Last date, inclusive.'),
  label: z.string().max(80).optional().describe('How charts and tables name it (default: the id).'),
});

const one = { input: name, as: name };
export const stepSpec = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('pct_change'), ...one, periods: window.optional() }),
  z.strictObject({ op: z.literal('log_returns'), ...one }),
  z.strictObject({ op: z.literal('difference'), ...one, periods: window.optional() }),
  z.strictObject({ op: z.literal('yoy'), ...one }),
  z.strictObject({ op: z.literal('rebase'), ...one, base_date: date.optional() }),
  z.strictObject({ op: z.literal('rolling_mean'), ...one, window }),
  z.strictObject({ op: z.literal('rolling_std'), ...one, window }),
  z.strictObject({ op: z.literal('rolling_zscore'), ...one, window }),
  z.strictObject({
    op: z.literal('resample'),
    ...one,
    frequency: z.enum(['week', 'month', 'quarter']),
    how: z.enum(['last', 'mean', 'sum']),
  }),
  z.strictObject({ op: z.literal('align'), inputs: z.array(name).min(2).max(10) }),
  z.strictObject({ op: z.literal('spread'), inputs: z.tuple([name, name]), as: name }),
  z.strictObject({ op: z.literal('ratio'), inputs: z.tuple([name, name]), as: name }),
  z.strictObject({ op: z.literal('correlation'), inputs: z.array(name).min(2).max(10), as: name }),
  z.strictObject({ op: z.literal('beta'), y: name, x: name, as: name }),
  z.strictObject({ op: z.literal('drawdown'), ...one }),
  z.strictObject({ op: z.literal('percentile_rank'), ...one, window }),
  z.strictObject({ op: z.literal('curve'), ...one, date: date.optional() }),
]);

export const outputSpec = z.strictObject({
  kind: z.enum(['line', 'bar', 'table', 'stats']),
  values: z.array(name).min(1).max(10).describe('Series ids or step results to show.'),
  title: z.string().max(120).optional(),
});

export const analysisSpec = z.strictObject({
  series: z.array(seriesSpec).min(1).max(10),
  steps: z.array(stepSpec).max(30).default([]),
  outputs: z.array(outputSpec).min(1).max(8),
});

export type SeriesSpec = z.infer<typeof seriesSpec>;
export type StepSpec = z.infer<typeof stepSpec>;
export type OutputSpec = z.infer<typeof outputSpec>;
export type AnalysisSpec = z.infer<typeof analysisSpec>;

export const analysisName = z
  .string()
  .trim()
  .min(1)
  .max(120)
  .regex(/^\P{Cc}*$/u, 'must not contain control characters');

/** The names a step reads. */
export function stepInputs(step: StepSpec): string[] {
  if ('inputs' in step) return [...step.inputs];
  if (step.op === 'beta') return [step.y, step.x];
  return [step.input];
}

/** The names a step defines (align redefines its inputs in place). */
export function stepOutputs(step: StepSpec): string[] {
  return step.op === 'align' ? [...step.inputs] : [step.as];
}
