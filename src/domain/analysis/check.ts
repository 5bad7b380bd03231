/**
 * An analysis checked against the catalog before anything is read (so a run never pays for reads it then
 * cannot use): datasets, fields and entity filters exist, every name is defined before it is used, and
 * each step and output gets the kind of value it takes.
 */
import type { Catalog, CatalogEntry } from '../../catalog/catalog.ts';
import { AppError } from '../../errors.ts';
import { type AnalysisSpec, type SeriesSpec, type StepSpec, stepInputs, stepOutputs } from './spec.ts';
import { cotFields } from './transforms.ts';

export type ValueKind = 'series' | 'panel' | 'matrix' | 'regression' | 'drawdown' | 'curve';

/** How one series is read: the dataset, the fields to fetch, and how its rows become values. */
export interface SeriesPlan {
  spec: SeriesSpec;
  entry: CatalogEntry;
  timeField: string;
  /** A plain numeric field; a COT net position (long and short fields); every entity of a curve. */
  shape:
    | { kind: 'field'; field: string }
    | { kind: 'net'; traderClass: string; long: string; short: string }
    | { kind: 'panel'; field: string; labelField: string; maturityField: string };
  fields: string[];
}

const NUMERIC = new Set(['integer', 'number']);
const MATURITY_FIELD = 'maturity_months';

interface Problem {
  path: string;
  message: string;
}

function planSeries(s: SeriesSpec, index: number, catalog: Catalog, problems: Problem[]): SeriesPlan | null {
  const path = `series.${index}`;
  const entry = catalog.resolve(s.dataset);
  if (!entry) {
    const suggestions = catalog.suggest(s.dataset);
    throw new AppError(
      'dataset_not_found',
      `No dataset "${s.dataset}" (${path}.dataset).${suggestions.length ? ` Did you mean ${suggestions.join(', ')}?` : ''}`,
      { suggestions },
    );
  }
  const d = entry.dataset;
  const typeOf = (name: string) => d.fields.find((f) => f.name === name)?.type;
  for (const field of Object.keys(s.entity)) {
    if (!d.entity_fields.includes(field)) {
      problems.push({
        path: `${path}.entity.${field}`,
        message: `${s.dataset} has no entity field ${field}; its entity fields are ${d.entity_fields.join(', ')}`,
      });
    }
  }
  if (s.from && s.to && s.from > s.to)
    problems.push({ path: `${path}.to`, message: 'must not be before from' });
  const pinned = Object.keys(s.entity).length > 0;
  const base = { spec: s, entry, timeField: d.time_field };
  if (s.field.startsWith('net:')) {
    const traderClass = s.field.slice(4);
    const { long, short } = cotFields(traderClass);
    if (!NUMERIC.has(typeOf(long) ?? '') || !NUMERIC.has(typeOf(short) ?? '')) {
      problems.push({
        path: `${path}.field`,
        message: `${s.dataset} has no ${long} and ${short}: net:<class> needs a COT report's trader class (net:noncommercial, net:commercial, net:m_money, net:prod_merc, net:swap)`,
      });
      return null;
    }
    if (!pinned)
      problems.push({ path: `${path}.entity`, message: 'name the market (market_and_exchange_names)' });
    return { ...base, shape: { kind: 'net', traderClass, long, short }, fields: [d.time_field, long, short] };
  }
  if (!NUMERIC.has(typeOf(s.field) ?? '')) {
    const numeric = d.fields.filter((f) => NUMERIC.has(f.type)).map((f) => f.name);
    problems.push({
      path: `${path}.field`,
      message: `${s.field} is not a numeric field of ${s.dataset}; its numeric fields are ${numeric.slice(0, 20).join(', ')}`,
    });
    return null;
  }
  if (!pinned) {
    const labelField = d.entity_fields[0] as string;
    if (!typeOf(MATURITY_FIELD)) {
      problems.push({
        path: `${path}.entity`,
        message: `name one entity (${d.entity_fields.join(', ')}): only a yield curve reads every entity at once`,
      });
      return null;
    }
    return {
      ...base,
      shape: { kind: 'panel', field: s.field, labelField, maturityField: MATURITY_FIELD },
      fields: [d.time_field, labelField, MATURITY_FIELD, s.field],
    };
  }
  return { ...base, shape: { kind: 'field', field: s.field }, fields: [d.time_field, s.field] };
}

/** What each step makes, given what it reads. */
function stepKind(step: StepSpec): ValueKind {
  switch (step.op) {
    case 'correlation':
      return 'matrix';
    case 'beta':
      return 'regression';
    case 'drawdown':
      return 'drawdown';
    case 'curve':
      return 'curve';
    default:
      return 'series';
  }
}

/** Checks a spec against the catalog; throws 400 invalid_request listing every problem, or 404 for an unknown dataset. */
export function checkSpec(spec: AnalysisSpec, catalog: Catalog): SeriesPlan[] {
  const problems: Problem[] = [];
  const kinds = new Map<string, ValueKind>();
  const plans: SeriesPlan[] = [];
  spec.series.forEach((s, i) => {
    if (kinds.has(s.id)) problems.push({ path: `series.${i}.id`, message: `${s.id} is used twice` });
    const plan = planSeries(s, i, catalog, problems);
    if (plan) plans.push(plan);
    kinds.set(s.id, plan?.shape.kind === 'panel' ? 'panel' : 'series');
  });
  spec.steps.forEach((step, i) => {
    const path = `steps.${i}`;
    for (const input of stepInputs(step)) {
      const kind = kinds.get(input);
      if (kind === undefined) {
        problems.push({ path, message: `${step.op} reads ${input}, which nothing before it defines` });
      } else if (step.op === 'curve' && kind !== 'panel') {
        problems.push({
          path,
          message: `curve reads every tenor: read ${input} with no entity (only a dataset with maturity_months)`,
        });
      } else if (step.op !== 'curve' && kind !== 'series') {
        problems.push({
          path,
          message:
            kind === 'panel'
              ? `${input} holds every entity: name one in its entity, or read it with a curve step`
              : `${step.op} needs a series, and ${input} is a ${kind}`,
        });
      }
    }
    for (const out of stepOutputs(step)) {
      if (step.op !== 'align' && kinds.has(out)) {
        problems.push({
          path: `${path}.as`,
          message: `${out} is already defined: give the result a new name`,
        });
      }
      kinds.set(out, stepKind(step));
    }
  });
  spec.outputs.forEach((output, i) => {
    output.values.forEach((name, k) => {
      const kind = kinds.get(name);
      const path = `outputs.${i}.values.${k}`;
      if (kind === undefined) problems.push({ path, message: `nothing is named ${name}` });
      else if (kind === 'panel')
        problems.push({ path, message: `${name} holds every entity: show a curve of it` });
      else if ((output.kind === 'line' || output.kind === 'bar') && kind !== 'series' && kind !== 'curve') {
        problems.push({
          path,
          message: `a ${output.kind} chart shows series or curves; show ${name} as a table`,
        });
      } else if (output.kind === 'stats' && kind !== 'series') {
        problems.push({ path, message: `statistics are of series; ${name} is a ${kind}` });
      }
    });
  });
  if (problems.length > 0) {
    throw new AppError(
      'invalid_request',
      `The analysis cannot run: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}.`,
      { errors: problems },
    );
  }
  return plans;
}
