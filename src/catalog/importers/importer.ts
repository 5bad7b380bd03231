/**
 * A named importer reads one published file format (docs/operators.md#named-importers) into source
 * records: each record's values by field name, and where it sits in the file (a line, or an XML path) so
 * that a rejected record can be found. `convertRecords` then checks every value against its field's type
 * and unit, the same way for every format.
 */
import { convertCell, ImportError } from '../import-file.ts';
import type { DatasetDef, FieldDef, Row, Scalar } from '../types.ts';

export interface ImportTarget {
  /** A dataset's canonical key. */
  dataset: string;
  /** Fields whose values name a row (entity + time); absent when the importer keys records itself. */
  naturalKey?: readonly string[];
}

export interface ImportContext {
  /** The dataset the records go to (one of the importer's targets). */
  dataset: DatasetDef;
  fileName: string;
  sha256: string;
  /** `--set field=value` constants: a format that does not carry a field can take it from the operator. */
  set: Readonly<Record<string, string>>;
  /** When the import runs (ms): the release date of a snapshot that does not carry one. */
  now: number;
}

export interface SourceRecord {
  /** `line 17`, or an XML path such as `/informationTable/infoTable[3]`. */
  where: string;
  /** Raw values by field name: text as in the file, or JSON scalars. Fields left out are null. */
  values: Record<string, unknown>;
  /** The record's natural key when the format gives one (accession + line); else the target's fields. */
  key?: string;
  /** A reason the record cannot be read at all (a line with too few cells): it is rejected with it. */
  problem?: string;
}

export interface Importer {
  /** The `--format` name. */
  name: string;
  title: string;
  /** Who publishes the data. */
  source: string;
  licence: string;
  /** The credit the licence asks for, shown beside every read of the rows. */
  attribution: string | null;
  /** Where the rows may go; the first is the default. */
  targets: readonly ImportTarget[];
  /** Whether a file looks like this format, from its first few kilobytes and its name. */
  detect(head: string, fileName: string): boolean;
  /** The file's records; a problem with the file as a whole (not one record) throws ImportError. */
  records(text: string, context: ImportContext): Iterable<SourceRecord>;
}

export interface Rejected {
  where: string;
  reason: string;
}

export interface ConvertedRecords {
  rows: { key: string; row: Row }[];
  rejected: Rejected[];
  read: number;
}

const MAX_LISTED = 20;

/** Checks beyond the type that a field's unit implies. */
function unitProblem(field: FieldDef, value: Scalar): string | null {
  if (typeof value !== 'number') return null;
  switch (field.unit) {
    case 'degrees':
      return Math.abs(value) > 180 ? `${value} is not an angle in degrees (-180 to 180)` : null;
    case 'hours':
      return value < -12 || value > 14 ? `${value} is not a UTC offset in hours (-12 to 14)` : null;
    case 'bytes':
    case 'traders':
    case 'months':
      return value < 0 ? `${value} is negative, and ${field.unit} cannot be` : null;
    case 'percent':
      return Math.abs(value) > 1000 ? `${value} is not a plausible percentage` : null;
    default:
      return null;
  }
}

function naturalKeyOf(target: ImportTarget, row: Row): string {
  return JSON.stringify((target.naturalKey ?? []).map((field) => row[field] ?? null));
}

/**
 * Records to rows of the dataset: `--set` constants first, then each value converted to its field's
 * type and checked against its unit. A record with any bad value, or without its time, is rejected
 * whole, with the first reason.
 */
export function convertRecords(
  records: Iterable<SourceRecord>,
  target: ImportTarget,
  context: ImportContext,
): ConvertedRecords {
  const { dataset } = context;
  const nothing = new Set<string>();
  const constants = new Map<string, Scalar>();
  const problems: string[] = [];
  const names = new Set(dataset.fields.map((f) => f.name));
  for (const [name, text] of Object.entries(context.set)) {
    const field = dataset.fields.find((f) => f.name === name);
    if (!field) {
      problems.push(
        `--set ${name}=…: ${dataset.key} has no field "${name}" (fields: ${[...names].join(', ')})`,
      );
      continue;
    }
    const converted = convertCell(field, text, nothing);
    if ('error' in converted) problems.push(`--set ${name}: ${converted.error}`);
    else constants.set(name, converted.value);
  }
  if (problems.length > 0) throw new ImportError(`The constants do not fit ${dataset.key}.`, problems);

  const rows: ConvertedRecords['rows'] = [];
  const rejected: Rejected[] = [];
  let read = 0;
  for (const record of records) {
    read++;
    if (record.problem !== undefined) {
      rejected.push({ where: record.where, reason: record.problem });
      continue;
    }
    const row: Row = {};
    let reason: string | null = null;
    for (const field of dataset.fields) {
      if (constants.has(field.name)) {
        row[field.name] = constants.get(field.name) ?? null;
        continue;
      }
      const converted = convertCell(field, record.values[field.name], nothing);
      if ('error' in converted) {
        reason ??= `${field.name} (${field.type}${field.unit ? `, ${field.unit}` : ''}): ${converted.error}`;
        continue;
      }
      const problem = unitProblem(field, converted.value);
      if (problem) reason ??= `${field.name} (${field.unit}): ${problem}`;
      row[field.name] = converted.value;
    }
    if (reason === null && row[dataset.time_field] === null)
      reason = `${dataset.time_field} (the time field) is empty`;
    if (reason !== null) rejected.push({ where: record.where, reason });
    else rows.push({ key: record.key ?? naturalKeyOf(target, row), row });
  }
  return { rows, rejected, read };
}

/** A refusal that lists the first rejected records by line or path. */
export function rejectionError(rejected: readonly Rejected[], read: number): ImportError {
  const more = rejected.length > MAX_LISTED ? ` (the first ${MAX_LISTED} are listed)` : '';
  return new ImportError(
    `${rejected.length} of ${read} record(s) are invalid; nothing was imported${more}. Fix the file, or pass --partial to import the valid ones.`,
    rejected.slice(0, MAX_LISTED).map((r) => `${r.where}: ${r.reason}`),
  );
}
