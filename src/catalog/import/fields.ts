/**
 * Which column (or constant) each field of the dataset takes, and one record as a row of typed values.
 * Columns reach fields in this order: `--set`, `--map`, then the column-name convention.
 */
import type { DatasetDef, Row, Scalar } from '../types.ts';
import { CellRefusal, cellValue, convertCell } from './cells.ts';
import type { ImportOptions, ParsedImport } from './options.ts';
import { ImportError, type Problems } from './problems.ts';
import { normalizeColumnName } from './records.ts';

/** A field taken from a column: its name, and its place among the file's columns. */
export interface ColumnSource {
  kind: 'column';
  column: string;
  index: number;
}

export type FieldSource = ColumnSource | { kind: 'set'; value: Scalar } | { kind: 'none' };

export function resolveSources(
  dataset: DatasetDef,
  columns: readonly string[],
  options: ImportOptions,
  nullTokens: ReadonlySet<string>,
): Map<string, FieldSource> {
  const problems: string[] = [];
  const fields = new Map(dataset.fields.map((f) => [f.name, f]));
  for (const [flag, given] of [
    ['--map', options.map],
    ['--set', options.set],
  ] as const) {
    for (const name of Object.keys(given ?? {})) {
      if (!fields.has(name))
        problems.push(
          `${flag} ${name}=…: ${dataset.key} has no field "${name}" (fields: ${[...fields.keys()].join(', ')})`,
        );
    }
  }
  const byNormalized = new Map<string, string>();
  for (const column of columns) {
    const normalized = normalizeColumnName(column);
    if (!byNormalized.has(normalized)) byNormalized.set(normalized, column);
  }
  const columnSet = new Set(columns);
  const sources = new Map<string, FieldSource>();
  for (const field of dataset.fields) {
    const constant = options.set?.[field.name];
    const mapped = options.map?.[field.name];
    if (constant !== undefined) {
      const converted = convertCell(field, constant, nullTokens);
      if ('error' in converted) problems.push(`--set ${field.name}: ${converted.error}`);
      else sources.set(field.name, { kind: 'set', value: converted.value });
    } else if (mapped !== undefined) {
      if (columnSet.has(mapped)) sources.set(field.name, columnSource(columns, mapped));
      else
        problems.push(
          `--map ${field.name}=${mapped}: the file has no column "${mapped}" (columns: ${columns.join(', ')})`,
        );
    } else {
      const column = byNormalized.get(field.name);
      sources.set(field.name, column === undefined ? { kind: 'none' } : columnSource(columns, column));
    }
  }
  const required = [dataset.time_field, ...dataset.entity_fields];
  for (const name of required) {
    if (sources.get(name)?.kind === 'none') {
      const role = name === dataset.time_field ? 'the time field' : 'an entity field';
      problems.push(
        `field "${name}" (${role}) has no column: map one with --map ${name}=<column> or give a constant with --set ${name}=<value>`,
      );
    }
  }
  if (problems.length > 0) throw new ImportError(`The file does not fit ${dataset.key}.`, problems);
  return sources;
}

const columnSource = (columns: readonly string[], column: string): ColumnSource => ({
  kind: 'column',
  column,
  index: columns.indexOf(column),
});

/**
 * One record as a row of the dataset; each cell that does not fit its field is a problem naming
 * `where()` (called only then: a large file's lines are not each named).
 */
export function rowOf(
  dataset: DatasetDef,
  sources: ReadonlyMap<string, FieldSource>,
  nullTokens: ReadonlySet<string>,
  where: () => string,
  cellOf: (source: ColumnSource) => unknown,
  problems: Problems,
): Row {
  const row: Row = {};
  for (const field of dataset.fields) {
    const source = sources.get(field.name) as FieldSource;
    if (source.kind === 'none') {
      row[field.name] = null;
      continue;
    }
    if (source.kind === 'set') {
      row[field.name] = source.value;
      continue;
    }
    const value = cellValue(field, cellOf(source), nullTokens);
    if (value instanceof CellRefusal) {
      problems.add(`${where()}: column "${source.column}" -> ${field.name} (${field.type}): ${value.error}`);
      continue;
    }
    row[field.name] = value;
  }
  if (row[dataset.time_field] === null)
    problems.add(`${where()}: ${dataset.time_field} (the time field) is empty`);
  return row;
}

export function describeSources(
  sources: ReadonlyMap<string, FieldSource>,
  columns: readonly string[],
): Omit<ParsedImport, 'rows'> {
  const used = new Set<string>();
  const described: Record<string, string | null> = {};
  for (const [name, source] of sources) {
    if (source.kind === 'column') used.add(source.column);
    described[name] =
      source.kind === 'column'
        ? `column "${source.column}"`
        : source.kind === 'set'
          ? `set ${JSON.stringify(source.value)}`
          : null;
  }
  return { sources: described, ignoredColumns: columns.filter((c) => !used.has(c)) };
}
