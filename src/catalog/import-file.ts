/**
 * Real rows for a dataset from an operator's file (CSV, NDJSON or JSON), checked against the dataset's
 * declared fields and types. Nothing is loaded unless every row is valid; each problem names its line.
 *
 * Columns reach fields in this order: `--set field=value` (a constant), `--map field=Column`, then the
 * column-name convention: a column whose header, lower-cased with every run of other characters turned
 * into `_`, equals the field name ("Open Interest (All)" -> open_interest_all, "DATE" -> date).
 */
import { pipeline, type Readable, Transform } from 'node:stream';
import { parse } from 'csv-parse';
import type { DatasetDef, FieldDef, Row, Scalar } from './types.ts';

export const importFormats = ['csv', 'ndjson', 'json'] as const;
export type ImportFormat = (typeof importFormats)[number];

export interface ImportOptions {
  format: ImportFormat;
  /** Field name -> source column (CSV header or JSON key). */
  map?: Readonly<Record<string, string>>;
  /** Field name -> a constant for every row, written as a cell would be. */
  set?: Readonly<Record<string, string>>;
  /** Cell texts that mean "no value", besides the empty cell (FRED writes "."). */
  nullTokens?: readonly string[];
}

export interface ParsedImport {
  rows: Row[];
  /** Where each field came from: `column "X"`, `set "v"`, or null when it is empty in every row. */
  sources: Record<string, string | null>;
  /** Columns of the file that no field took. */
  ignoredColumns: string[];
}

/** Every problem found, each naming its line (or record), up to MAX_PROBLEMS. */
export class ImportError extends Error {
  readonly problems: readonly string[];
  constructor(summary: string, problems: readonly string[]) {
    super(problems.length > 0 ? `${summary}\n  ${problems.join('\n  ')}` : summary);
    this.name = 'ImportError';
    this.problems = problems;
  }
}

const MAX_PROBLEMS = 20;

interface SourceRecord {
  /** "line 17" for CSV and NDJSON, "record 3" for a JSON array. */
  where: string;
  values: Map<string, unknown>;
}

export function normalizeColumnName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** RFC 4180 records with the line each starts on; quoted cells may hold commas, quotes and newlines. */
export function* csvRecords(text: string): Generator<{ line: number; cells: string[] }> {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  while (i < text.length) {
    const start = line;
    const cells: string[] = [];
    let cell = '';
    let quoted = false;
    let ended = false;
    while (i < text.length && !ended) {
      const ch = text[i] as string;
      if (quoted) {
        if (ch === '"') {
          if (text[i + 1] === '"') {
            cell += '"';
            i += 2;
            continue;
          }
          quoted = false;
        } else {
          if (ch === '\n') line++;
          cell += ch;
        }
        i++;
        continue;
      }
      if (ch === '"' && cell.trim() === '') {
        quoted = true;
        cell = '';
      } else if (ch === ',') {
        cells.push(cell);
        cell = '';
      } else if (ch === '\n' || ch === '\r') {
        if (ch === '\r' && text[i + 1] === '\n') i++;
        line++;
        ended = true;
      } else {
        cell += ch;
      }
      i++;
    }
    if (quoted)
      throw new ImportError('The CSV file is malformed.', [`line ${start}: a quoted cell is never closed`]);
    cells.push(cell);
    if (cells.length === 1 && cells[0]?.trim() === '') continue;
    yield { line: start, cells };
  }
}

function readCsv(text: string): { columns: string[]; records: SourceRecord[] } {
  const records: SourceRecord[] = [];
  let columns: string[] | null = null;
  const problems: string[] = [];
  for (const { line, cells } of csvRecords(text)) {
    if (columns === null) {
      columns = cells.map((c) => c.trim());
      const seen = new Set<string>();
      for (const column of columns) {
        if (column === '') problems.push(`line ${line}: the header has an empty column name`);
        else if (seen.has(column)) problems.push(`line ${line}: the header names "${column}" twice`);
        seen.add(column);
      }
      continue;
    }
    if (cells.length !== columns.length) {
      if (problems.length < MAX_PROBLEMS)
        problems.push(`line ${line}: ${cells.length} cells, but the header has ${columns.length} columns`);
      continue;
    }
    const values = new Map<string, unknown>();
    columns.forEach((column, index) => {
      values.set(column, cells[index]);
    });
    records.push({ where: `line ${line}`, values });
  }
  if (problems.length > 0) throw new ImportError('The CSV file is malformed.', problems);
  if (columns === null) throw new ImportError('The file is empty: no header row.', []);
  return { columns, records };
}

function recordOf(value: unknown, where: string, problems: string[]): SourceRecord | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    problems.push(`${where}: not a JSON object`);
    return null;
  }
  return { where, values: new Map(Object.entries(value)) };
}

function readNdjson(text: string): SourceRecord[] {
  const records: SourceRecord[] = [];
  const problems: string[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || problems.length >= MAX_PROBLEMS) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      problems.push(`line ${index + 1}: not valid JSON`);
      return;
    }
    const record = recordOf(value, `line ${index + 1}`, problems);
    if (record) records.push(record);
  });
  if (problems.length > 0) throw new ImportError('The NDJSON file is malformed.', problems);
  return records;
}

function readJson(text: string): SourceRecord[] {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ImportError('The JSON file is malformed.', [(error as Error).message]);
  }
  // Accepts a bare array, or the service's own read envelope {"data": [...]}.
  const list = Array.isArray(value) ? value : (value as { data?: unknown } | null)?.data;
  if (!Array.isArray(list)) {
    throw new ImportError('The JSON file must hold an array of objects, or {"data": [...]}.', []);
  }
  const problems: string[] = [];
  const records: SourceRecord[] = [];
  list.forEach((item, index) => {
    if (problems.length >= MAX_PROBLEMS) return;
    const record = recordOf(item, `record ${index + 1}`, problems);
    if (record) records.push(record);
  });
  if (problems.length > 0) throw new ImportError('The JSON file is malformed.', problems);
  return records;
}

const integerText = /^[+-]?\d+$/;
const numberText = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const dateText = /^(\d{4})-(\d{2})-(\d{2})$/;
const dateTimeText = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

function isRealDate(text: string): boolean {
  const m = dateText.exec(text);
  if (!m) return false;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return new Date(ms).toISOString().slice(0, 10) === text;
}

/** A cell as the field's type, or a reason it is not one. Strings are trimmed. */
export function convertCell(
  field: FieldDef,
  raw: unknown,
  nullTokens: ReadonlySet<string>,
): { value: Scalar } | { error: string } {
  if (raw === null || raw === undefined) return { value: null };
  if (typeof raw === 'object') return { error: 'is an object or array, not a single value' };
  const text = String(raw).trim();
  // No stored value holds a control character (tab, CR and LF inside a quoted cell are text), and
  // PostgreSQL text cannot hold NUL at all.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text))
    return { error: `${JSON.stringify(text)} holds a control character` };
  // A lone surrogate (a JSON file's "\ud800"): PostgreSQL stores the JSON text as given but cannot read
  // the value back out of it, so every filtered read of the dataset would fail there.
  if (!text.isWellFormed())
    return { error: `${JSON.stringify(text)} is not valid Unicode (a lone surrogate)` };
  if (typeof raw === 'string' && (text === '' || nullTokens.has(text))) return { value: null };
  // Only for the message of a refused value: not built for every cell of a large file.
  const shown = () => JSON.stringify(typeof raw === 'string' ? text : raw);
  switch (field.type) {
    case 'string':
      return { value: text };
    case 'integer': {
      if (typeof raw === 'boolean' || !integerText.test(text))
        return { error: `${shown()} is not an integer` };
      const n = Number(text);
      return Number.isSafeInteger(n) ? { value: n } : { error: `${shown()} is too large for an integer` };
    }
    case 'number': {
      if (typeof raw === 'boolean' || !numberText.test(text)) return { error: `${shown()} is not a number` };
      const n = Number(text);
      return Number.isFinite(n) ? { value: n } : { error: `${shown()} is not a finite number` };
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      if (lower === 'true' || lower === '1') return { value: true };
      if (lower === 'false' || lower === '0') return { value: false };
      return { error: `${shown()} is not a boolean (true/false/1/0)` };
    }
    case 'date':
      return isRealDate(text) ? { value: text } : { error: `${shown()} is not a date (YYYY-MM-DD)` };
    case 'datetime': {
      const m = dateTimeText.exec(text);
      const ms = m ? Date.parse(text.replace(' ', 'T')) : Number.NaN;
      // Date.parse rolls 2024-02-30 and 24:00 over into the next day: the parts must be real ones.
      if (Number.isNaN(ms) || !isRealDate(text.slice(0, 10)) || Number(text.slice(11, 13)) > 23) {
        return { error: `${shown()} is not a date-time (ISO 8601 with Z or an offset)` };
      }
      // One UTC form to the second, so the stored time column sorts as text and compares with the
      // read bounds; a fraction of a second would sort before the whole second.
      if (ms % 1000 !== 0)
        return { error: `${shown()} has a fraction of a second; times are stored to the second` };
      return { value: new Date(ms).toISOString().replace('.000Z', 'Z') };
    }
  }
}

type FieldSource = { kind: 'column'; column: string } | { kind: 'set'; value: Scalar } | { kind: 'none' };

function resolveSources(
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
      if (columnSet.has(mapped)) sources.set(field.name, { kind: 'column', column: mapped });
      else
        problems.push(
          `--map ${field.name}=${mapped}: the file has no column "${mapped}" (columns: ${columns.join(', ')})`,
        );
    } else {
      const column = byNormalized.get(field.name);
      sources.set(field.name, column === undefined ? { kind: 'none' } : { kind: 'column', column });
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

function readRecords(text: string, format: ImportFormat): { columns: string[]; records: SourceRecord[] } {
  if (format === 'csv') return readCsv(text);
  const records = format === 'ndjson' ? readNdjson(text) : readJson(text);
  const columns = new Set<string>();
  for (const record of records) for (const key of record.values.keys()) columns.add(key);
  return { columns: [...columns], records };
}

export function parseImport(dataset: DatasetDef, text: string, options: ImportOptions): ParsedImport {
  const nullTokens = new Set(options.nullTokens ?? []);
  const { columns, records } = readRecords(text, options.format);
  const sources = resolveSources(dataset, columns, options, nullTokens);
  if (records.length === 0) throw new ImportError('The file holds no rows.', []);

  const problems = new Problems();
  const rows: Row[] = [];
  for (const record of records) {
    rows.push(
      rowOf(dataset, sources, nullTokens, record.where, (column) => record.values.get(column), problems),
    );
  }
  problems.throwIfAny();
  return { rows, ...describeSources(sources, columns) };
}

/** The problems found so far: every one counted, the first MAX_PROBLEMS kept. */
class Problems {
  readonly listed: string[] = [];
  count = 0;
  add(problem: string): void {
    if (++this.count <= MAX_PROBLEMS) this.listed.push(problem);
  }
  throwIfAny(): void {
    if (this.count === 0) return;
    const more = this.count > MAX_PROBLEMS ? ` (the first ${MAX_PROBLEMS} are listed)` : '';
    throw new ImportError(
      `${this.count} invalid value(s) in the file; nothing was imported${more}.`,
      this.listed,
    );
  }
}

/** One record as a row of the dataset; each cell that does not fit its field is a problem naming `where`. */
function rowOf(
  dataset: DatasetDef,
  sources: ReadonlyMap<string, FieldSource>,
  nullTokens: ReadonlySet<string>,
  where: string,
  cellOf: (column: string) => unknown,
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
    const converted = convertCell(field, cellOf(source.column), nullTokens);
    if ('error' in converted) {
      problems.add(
        `${where}: column "${source.column}" -> ${field.name} (${field.type}): ${converted.error}`,
      );
      continue;
    }
    row[field.name] = converted.value;
  }
  if (row[dataset.time_field] === null)
    problems.add(`${where}: ${dataset.time_field} (the time field) is empty`);
  return row;
}

function describeSources(
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

/** Bytes as UTF-8 text, refusing bytes that are not UTF-8 rather than turning them into U+FFFD. */
function utf8Text(name: string): Transform {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (chunk: Uint8Array | undefined, stream: boolean) => {
    try {
      return decoder.decode(chunk, { stream });
    } catch {
      throw new ImportError(
        `${name} is not UTF-8 text; convert it first (e.g. iconv -f latin1 -t utf-8).`,
        [],
      );
    }
  };
  return new Transform({
    decodeStrings: true,
    readableObjectMode: false,
    transform(chunk: Buffer, _encoding, done) {
      try {
        done(null, decode(chunk, true));
      } catch (error) {
        done(error as Error);
      }
    },
    flush(done) {
      try {
        done(null, decode(undefined, false));
      } catch (error) {
        done(error as Error);
      }
    },
  });
}

/** How far a streamed import has read. */
export interface ImportProgress {
  rows: number;
  bytes: number;
}

/** Rows a streamed import hands on at a time. */
export const IMPORT_BATCH_ROWS = 5000;

export interface CsvStreamOptions extends Omit<ImportOptions, 'format'> {
  /** The file's name, for messages. */
  name: string;
  /** Called every `progressEvery` rows (50,000) and once at the end. */
  onProgress?: (progress: ImportProgress) => void;
  progressEvery?: number;
  /** Rows per batch (IMPORT_BATCH_ROWS). */
  batchRows?: number;
}

/**
 * A CSV file read as a stream (csv-parse, RFC 4180) and handed on in batches of rows, as the dataset's
 * typed values, while it is parsed: neither the file's text nor all its rows are ever held. The same
 * rules as parseImport, each problem naming the line its record starts on. Once a record is refused no
 * further batch is handed on, but the file is read to its end to count every problem; then `batches()`
 * throws the ImportError, so a loader that holds one transaction rolls back what it took. `rows`,
 * `sources` and `ignoredColumns` describe the file once its batches are read.
 */
export class CsvRowStream {
  /** Records read so far (valid or not), the header excepted. */
  rows = 0;
  /** Where each field came from, known once the header is read (see ParsedImport). */
  sources: Record<string, string | null> = {};
  ignoredColumns: string[] = [];
  readonly #dataset: DatasetDef;
  readonly #input: Readable;
  readonly #options: CsvStreamOptions;

  constructor(dataset: DatasetDef, input: Readable, options: CsvStreamOptions) {
    this.#dataset = dataset;
    this.#input = input;
    this.#options = options;
  }

  async *batches(): AsyncGenerator<Row[]> {
    const dataset = this.#dataset;
    const options = this.#options;
    const input = this.#input;
    const nullTokens = new Set(options.nullTokens ?? []);
    const every = options.progressEvery ?? 50_000;
    const batchRows = options.batchRows ?? IMPORT_BATCH_ROWS;
    let bytes = 0;
    input.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    // pipeline: a failure of any stage (a read error, bytes that are not UTF-8) ends the parser with it.
    const parser = pipeline(
      input,
      utf8Text(options.name),
      parse({ bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, info: true }),
      () => {},
    );
    const problems = new Problems();
    const malformed: string[] = [];
    let batch: Row[] = [];
    let columns: string[] | null = null;
    let sources: Map<string, FieldSource> | null = null;
    let index: Map<string, number> | null = null;
    let endLine = 0;
    let emptyLines = 0;
    try {
      for await (const { record, info } of parser as AsyncIterable<{
        record: string[];
        info: { lines: number; empty_lines: number };
      }>) {
        // The line the record starts on: after the last record's and any empty lines between.
        const line = endLine + 1 + (info.empty_lines - emptyLines);
        endLine = info.lines;
        emptyLines = info.empty_lines;
        if (columns === null) {
          columns = record.map((c) => c.trim());
          const seen = new Set<string>();
          for (const column of columns) {
            if (column === '') malformed.push(`line ${line}: the header has an empty column name`);
            else if (seen.has(column)) malformed.push(`line ${line}: the header names "${column}" twice`);
            seen.add(column);
          }
          if (malformed.length > 0) break;
          sources = resolveSources(dataset, columns, { ...options, format: 'csv' }, nullTokens);
          index = new Map(columns.map((c, i) => [c, i]));
          const described = describeSources(sources, columns);
          this.sources = described.sources;
          this.ignoredColumns = described.ignoredColumns;
          continue;
        }
        if (record.length !== columns.length) {
          if (malformed.length < MAX_PROBLEMS)
            malformed.push(
              `line ${line}: ${record.length} cells, but the header has ${columns.length} columns`,
            );
          continue;
        }
        const at = index as Map<string, number>;
        const row = rowOf(
          dataset,
          sources as Map<string, FieldSource>,
          nullTokens,
          `line ${line}`,
          (c) => record[at.get(c) as number],
          problems,
        );
        this.rows++;
        // After the first refused record nothing more is handed on: the import fails at the end.
        if (problems.count === 0 && malformed.length === 0) {
          batch.push(row);
          if (batch.length >= batchRows) {
            yield batch;
            batch = [];
          }
        } else {
          batch = [];
        }
        if (options.onProgress && this.rows % every === 0) options.onProgress({ rows: this.rows, bytes });
      }
    } catch (error) {
      if (error instanceof ImportError) throw error;
      const code = (error as { code?: string }).code;
      if (typeof code === 'string' && code.startsWith('CSV_')) {
        const lines = (error as { lines?: number }).lines;
        throw new ImportError('The CSV file is malformed.', [
          `${lines === undefined ? '' : `line ${lines}: `}${(error as Error).message}`,
        ]);
      }
      throw error;
    } finally {
      input.destroy();
    }
    if (malformed.length > 0) throw new ImportError('The CSV file is malformed.', malformed);
    if (columns === null || sources === null) throw new ImportError('The file is empty: no header row.', []);
    if (this.rows === 0) throw new ImportError('The file holds no rows.', []);
    problems.throwIfAny();
    options.onProgress?.({ rows: this.rows, bytes });
    if (batch.length > 0) yield batch;
  }
}

/** A field -> column mapping file: a JSON object of strings. */
export function parseMapFile(text: string, path: string): Record<string, string> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ImportError(`The mapping file ${path} is not valid JSON.`, [(error as Error).message]);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ImportError(`The mapping file ${path} must be a JSON object of field -> column.`, []);
  }
  const out: Record<string, string> = {};
  const problems: string[] = [];
  for (const [field, column] of Object.entries(value)) {
    if (field.startsWith('$')) continue;
    if (typeof column !== 'string') problems.push(`"${field}": the column must be a string`);
    else out[field] = column;
  }
  if (problems.length > 0) throw new ImportError(`The mapping file ${path} is invalid.`, problems);
  return out;
}
