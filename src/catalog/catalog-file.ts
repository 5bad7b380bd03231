import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { FieldType } from './types.ts';
import { fieldTypes, sampleCalendars, sampleSeriesNames, sampleSteps } from './types.ts';

/**
 * Schema of config/catalog.json. Operators replace this file, so every problem is reported with
 * the dataset key and field it concerns, and all problems are reported at once.
 */

const KEY_PATTERN = /^[a-z0-9-]+\/[a-z0-9_-]+$/;
const FIELD_NAME_PATTERN = /^[a-z][a-z0-9_]*$/;
const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const TIME_OF_DAY_PATTERN = /^([01]\d|2[0-3]):[0-5]\d$/;
/** Sample rows are generated at start-up; this keeps a mistyped count from stalling it. */
export const MAX_SAMPLE_ROWS = 50_000;

const KEY_MESSAGE = 'must look like domain/name: lowercase letters, digits and "-" (and "_" in the name)';

function isRealDate(text: string): boolean {
  if (!DATE_PATTERN.test(text)) return false;
  const [y, m, d] = text.split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

const nonEmpty = z.string().trim().min(1, 'must not be empty');

const fieldSampleSchema = z.strictObject({
  values: z
    .array(z.union([z.string(), z.number()]))
    .min(1, 'must list at least one value')
    .optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  decimals: z.number().int().min(0).max(10).optional(),
  walk: z.boolean().optional(),
  times: z.array(z.string().regex(TIME_OF_DAY_PATTERN, 'must be HH:MM (UTC)')).min(1).optional(),
  null_rate: z.number().min(0).max(1).optional(),
  series: z.enum(sampleSeriesNames).optional(),
});

const fieldSchema = z.strictObject({
  name: z.string().regex(FIELD_NAME_PATTERN, 'must be snake_case (a-z, 0-9, "_", starting with a letter)'),
  type: z.enum(fieldTypes),
  unit: nonEmpty.optional(),
  description: nonEmpty,
  sample: fieldSampleSchema.optional(),
});

const datasetSampleSchema = z.strictObject({
  from: z.string().refine(isRealDate, 'must be a real date, YYYY-MM-DD'),
  step: z.enum(sampleSteps),
  calendar: z.enum(sampleCalendars).optional(),
  scheduled: z.boolean().optional(),
  periods: z.number().int().min(1),
  entities: z.number().int().min(1),
  per_period: z.number().int().min(1).optional(),
});

const datasetSchema = z
  .strictObject({
    key: z.string().regex(KEY_PATTERN, KEY_MESSAGE),
    aliases: z.array(z.string().regex(KEY_PATTERN, KEY_MESSAGE)).default([]),
    title: nonEmpty,
    description: nonEmpty,
    source: nonEmpty,
    frequency: nonEmpty,
    time_field: nonEmpty,
    entity_fields: z.array(nonEmpty),
    fields: z.array(fieldSchema).min(1, 'must declare at least one field'),
    sample: datasetSampleSchema,
  })
  // `when` runs the cross-field checks even when a sibling property failed, so one pass lists all problems.
  .superRefine((value, ctx) => checkDataset(value, ctx), { when: () => true });

export const catalogFileSchema = z
  .strictObject({
    datasets: z.array(datasetSchema).min(1, 'must list at least one dataset'),
  })
  .superRefine((value, ctx) => checkUniqueKeys(value, ctx), { when: () => true });

export type CatalogFile = z.output<typeof catalogFileSchema>;

type Ctx = { addIssue(issue: { code: 'custom'; message: string; path: (string | number)[] }): void };

// The refinements may see partially invalid input (see `when` above), so they read it defensively.
type Loose = Record<string, unknown>;
const asRecord = (v: unknown): Loose | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Loose) : undefined;
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const asString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function checkUniqueKeys(value: unknown, ctx: Ctx): void {
  const seen = new Map<string, string>();
  asArray(asRecord(value)?.datasets).forEach((raw, i) => {
    const ds = asRecord(raw);
    const owner = asString(ds?.key) ?? `#${i}`;
    const names: [string, (string | number)[]][] = [];
    if (typeof ds?.key === 'string') names.push([ds.key, ['datasets', i, 'key']]);
    asArray(ds?.aliases).forEach((a, k) => {
      if (typeof a === 'string') names.push([a, ['datasets', i, 'aliases', k]]);
    });
    for (const [name, path] of names) {
      const first = seen.get(name);
      if (first !== undefined && first !== owner) {
        ctx.addIssue({
          code: 'custom',
          path,
          message: `dataset "${owner}": key "${name}" is already used by dataset "${first}"`,
        });
      } else if (first === undefined) {
        seen.set(name, owner);
      }
    }
  });
}

function valueMatchesType(type: FieldType, v: string | number): boolean {
  switch (type) {
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return v === 0 || v === 1 || v === 'true' || v === 'false';
    case 'date':
      return typeof v === 'string' && isRealDate(v);
    case 'datetime':
      return typeof v === 'string' && DATETIME_PATTERN.test(v) && isRealDate(v.slice(0, 10));
    default:
      return typeof v === 'string';
  }
}

const TYPE_HINT: Record<FieldType, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: '1, 0, "true" or "false"',
  date: 'a date YYYY-MM-DD',
  datetime: 'a datetime YYYY-MM-DDTHH:MM:SSZ',
};

type Issue = (path: (string | number)[], message: string) => void;

/** What the cross-field checks of one dataset share: its fields by name and its sample's shape. */
interface DatasetFacts {
  ds: Loose;
  issue: Issue;
  fields: (Loose | undefined)[];
  byName: Map<string, { index: number; type: unknown }>;
  sample: Loose | undefined;
  step: string | undefined;
  entities: number | undefined;
  timeField: string | undefined;
  /** The entity fields, each once. */
  entitySeen: Set<string>;
}

function checkDataset(value: unknown, ctx: Ctx): void {
  const ds = asRecord(value);
  if (!ds) return;
  const label = `dataset "${asString(ds.key) ?? '?'}"`;
  const issue: Issue = (path, message) =>
    ctx.addIssue({ code: 'custom', path, message: `${label}${message}` });
  const fields = asArray(ds.fields).map(asRecord);
  const sample = asRecord(ds.sample);
  const facts: DatasetFacts = {
    ds,
    issue,
    fields,
    byName: fieldsByName(fields, issue),
    sample,
    step: asString(sample?.step),
    entities: typeof sample?.entities === 'number' ? sample.entities : undefined,
    timeField: asString(ds.time_field),
    entitySeen: new Set<string>(),
  };
  checkTimeField(facts);
  checkEntityFields(facts);
  checkAliases(facts);
  checkSampleSize(facts);
  facts.fields.forEach((f, index) => {
    checkFieldSample(facts, f, index);
  });
}

function fieldsByName(fields: readonly (Loose | undefined)[], issue: Issue): DatasetFacts['byName'] {
  const byName: DatasetFacts['byName'] = new Map();
  fields.forEach((f, index) => {
    const name = asString(f?.name);
    if (name === undefined) return;
    if (byName.has(name)) issue(['fields', index, 'name'], ` field "${name}": duplicate field name`);
    else byName.set(name, { index, type: f?.type });
  });
  return byName;
}

function checkTimeField({ issue, byName, step, timeField }: DatasetFacts): void {
  if (timeField === undefined) return;
  const tf = byName.get(timeField);
  if (!tf) issue(['time_field'], `: time_field "${timeField}" is not one of its fields`);
  else if (tf.type !== 'date' && tf.type !== 'datetime')
    issue(['time_field'], ` field "${timeField}": the time field must be of type date or datetime`);
  else if (step === 'hour' && tf.type !== 'datetime')
    issue(['sample', 'step'], ` field "${timeField}": sample.step "hour" needs a datetime time field`);
}

/** Also fills `entitySeen`, which the field checks read. */
function checkEntityFields({
  ds,
  issue,
  byName,
  sample,
  step,
  entities,
  timeField,
  entitySeen,
}: DatasetFacts): void {
  const entityFields = asArray(ds.entity_fields);
  entityFields.forEach((raw, k) => {
    const name = asString(raw);
    if (name === undefined) return;
    if (entitySeen.has(name)) {
      issue(['entity_fields', k], ` field "${name}": listed twice in entity_fields`);
      return;
    }
    entitySeen.add(name);
    if (!byName.has(name)) issue(['entity_fields', k], `: entity field "${name}" is not one of its fields`);
    if (name === timeField)
      issue(['entity_fields', k], ` field "${name}": the time field cannot also be an entity field`);
  });
  if (sample?.calendar !== undefined && step !== undefined && step !== 'day')
    issue(['sample', 'calendar'], `: sample.calendar applies to a step of "day", not "${step}"`);
  if (entityFields.length === 0 && entities !== undefined && entities !== 1)
    issue(['sample', 'entities'], `: sample.entities must be 1 when entity_fields is empty`);
}

function checkAliases({ ds, issue }: DatasetFacts): void {
  const key = asString(ds.key);
  const aliasSeen = new Set<string>();
  asArray(ds.aliases).forEach((raw, k) => {
    const alias = asString(raw);
    if (alias === undefined) return;
    if (alias === key) issue(['aliases', k], `: alias "${alias}" repeats the dataset's own key`);
    else if (aliasSeen.has(alias)) issue(['aliases', k], `: alias "${alias}" is listed twice`);
    aliasSeen.add(alias);
  });
}

function checkSampleSize({ issue, sample, entities }: DatasetFacts): void {
  if (!sample || typeof sample.periods !== 'number' || entities === undefined) return;
  const perPeriod = typeof sample.per_period === 'number' ? sample.per_period : 1;
  const rows = sample.periods * entities * perPeriod;
  if (rows > MAX_SAMPLE_ROWS)
    issue(
      ['sample'],
      `: sample makes ${rows} rows (entities x periods x per_period); the limit is ${MAX_SAMPLE_ROWS}`,
    );
}

/** One field's `sample` block against its type and its role (time, entity or value field). */
function checkFieldSample(facts: DatasetFacts, f: Loose | undefined, index: number): void {
  const { issue, step, entities, timeField, entitySeen } = facts;
  const name = asString(f?.name) ?? `#${index}`;
  const type = asString(f?.type) as FieldType | undefined;
  const s = asRecord(f?.sample);
  if (!s || !type || !(fieldTypes as readonly string[]).includes(type)) return;
  const at = (...rest: (string | number)[]) => ['fields', index, 'sample', ...rest];
  const fieldIssue = (path: (string | number)[], message: string) =>
    issue(path, ` field "${name}": ${message}`);
  const numeric = type === 'integer' || type === 'number';
  const isTime = name === timeField;
  const isEntity = entitySeen.has(name);

  asArray(s.values).forEach((v, k) => {
    if ((typeof v === 'string' || typeof v === 'number') && !valueMatchesType(type, v))
      fieldIssue(at('values', k), `sample value ${JSON.stringify(v)} is not ${TYPE_HINT[type]}`);
  });
  if (typeof s.min === 'number' && typeof s.max === 'number' && s.min > s.max)
    fieldIssue(at('min'), `sample.min (${s.min}) is greater than sample.max (${s.max})`);
  if ((s.min !== undefined || s.max !== undefined) && !numeric && type !== 'date' && type !== 'datetime')
    fieldIssue(at('min'), 'sample.min/max apply to numeric fields (and to dates, as day offsets)');
  if (s.decimals !== undefined && type !== 'number')
    fieldIssue(at('decimals'), 'sample.decimals applies to number fields');
  if (s.walk !== undefined && !numeric)
    fieldIssue(at('walk'), 'sample.walk applies to integer and number fields');
  if (s.walk === true && isEntity)
    fieldIssue(at('walk'), 'an entity field is constant per entity and cannot walk');
  if (s.series !== undefined) {
    if (!numeric) fieldIssue(at('series'), 'sample.series applies to integer and number fields');
    else if (isTime || isEntity)
      fieldIssue(at('series'), 'the time and entity fields cannot follow a series');
    else if (step !== undefined && step !== 'day')
      fieldIssue(at('series'), `sample.series needs a step of "day", not "${step}"`);
    else if (entitySeen.size === 0)
      fieldIssue(at('series'), 'sample.series needs an entity field to name whose series it is');
    else if (asArray(s.values).length === 0)
      fieldIssue(at('series'), "sample.series needs values: each entity's level");
  }
  if (s.times !== undefined && type !== 'datetime')
    fieldIssue(at('times'), 'sample.times applies to datetime fields');
  if (isTime && s.times !== undefined && step === 'hour')
    fieldIssue(at('times'), 'sample.times on the time field needs a step of a day or more, not "hour"');
  if (isTime && (s.values !== undefined || s.min !== undefined || s.max !== undefined))
    fieldIssue(
      at(),
      'the time field takes its values from dataset.sample (from, step, periods); remove values/min/max',
    );
  if ((isTime || isEntity) && s.null_rate !== undefined)
    fieldIssue(at('null_rate'), 'time and entity fields are never null; remove sample.null_rate');
  const values = asArray(s.values);
  if (isEntity && values.length > 0 && entities !== undefined && values.length < entities)
    fieldIssue(
      at('values'),
      `entity field has ${values.length} sample values but sample.entities is ${entities}; entities would repeat`,
    );
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(root)' : out;
}

/** Adds the dataset key and field name to zod's own messages, which only carry a path. */
function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const message = issue.message;
  if (message.startsWith('dataset "')) return message;
  const [root, dsIndex, section, fieldIndex] = issue.path;
  if (root !== 'datasets' || typeof dsIndex !== 'number') return message;
  const ds = asRecord(asArray(asRecord(input)?.datasets)[dsIndex]);
  let label = `dataset "${asString(ds?.key) ?? `#${dsIndex}`}"`;
  if (section === 'fields' && typeof fieldIndex === 'number') {
    const field = asRecord(asArray(ds?.fields)[fieldIndex]);
    label += ` field "${asString(field?.name) ?? `#${fieldIndex}`}"`;
  }
  return `${label}: ${message}`;
}

/** Lists each problem as "path: message", one a line. */
export function formatCatalogIssues(error: z.ZodError, input: unknown): string[] {
  return error.issues.map((issue) => `${formatPath(issue.path)}: ${describeIssue(issue, input)}`);
}

/** Reads and validates a catalog file; throws one Error that lists every problem found. */
export function loadCatalogFile(path: string): CatalogFile {
  let input: unknown;
  try {
    input = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`Cannot read catalog file ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const result = catalogFileSchema.safeParse(input);
  if (!result.success) {
    const lines = formatCatalogIssues(result.error, input);
    throw new Error(
      `Invalid catalog file ${path} (${lines.length} problem${lines.length === 1 ? '' : 's'}):\n${lines.map((l) => `  - ${l}`).join('\n')}`,
    );
  }
  return result.data;
}
