/**
 * A CSV file's bytes as batches of typed rows, piece by piece (CsvRowStream runs it on its own thread or
 * on a worker thread, csv-worker.ts).
 */
import { TextDecoder } from 'node:util';
import type { DatasetDef, Row } from '../types.ts';
import { CsvRecordReader } from './csv-reader.ts';
import { type ColumnSource, describeSources, type FieldSource, resolveSources, rowOf } from './fields.ts';
import type { ImportOptions } from './options.ts';
import { ImportError, MAX_PROBLEMS, Problems } from './problems.ts';
import { headerProblems } from './records.ts';

/**
 * Rows a streamed import hands on at a time: few enough that most die in V8's young generation before
 * they are loaded (5,000 cost twice the garbage collection per row).
 */
export const IMPORT_BATCH_ROWS = 1000;

export interface CsvRowOptions extends Omit<ImportOptions, 'format'> {
  /** The file's name, for messages. */
  name: string;
  /** Rows per batch (IMPORT_BATCH_ROWS). */
  batchRows?: number;
}

/**
 * The rows of a CSV file given in pieces: `push` takes the next bytes and returns the batches they
 * filled, `finish` the last batch, or throws the ImportError of every problem found. Once a record is
 * refused no further batch is returned, but every record is still checked, to count the problems.
 */
export class CsvRowBuilder {
  /** Records read so far (valid or not), the header excepted. */
  rows = 0;
  /** Where each field came from, known once the header is read (see ParsedImport). */
  sources: Record<string, string | null> = {};
  ignoredColumns: string[] = [];
  /** The header was refused: the rest of the file need not be read. */
  badHeader = false;
  readonly #dataset: DatasetDef;
  readonly #options: CsvRowOptions;
  readonly #reader = new CsvRecordReader();
  // Refusing bytes that are not UTF-8 rather than turning them into U+FFFD.
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });
  readonly #take: (cells: string[], line: number) => void;
  readonly #nullTokens: ReadonlySet<string>;
  #columns: string[] | null = null;
  #fieldSources: Map<string, FieldSource> | null = null;
  readonly #malformed: string[] = [];
  readonly #problems = new Problems();
  #batch: Row[] = [];
  #full: Row[][] = [];

  constructor(dataset: DatasetDef, options: CsvRowOptions) {
    this.#dataset = dataset;
    this.#options = options;
    this.#nullTokens = new Set(options.nullTokens ?? []);
    this.#take = (cells, line) => this.#record(cells, line);
  }

  push(bytes: Uint8Array): Row[][] {
    if (!this.badHeader) this.#reader.push(this.#decode(bytes), false, this.#take);
    return this.#full.splice(0);
  }

  /** The file ended: the batches left, or the ImportError of what was wrong with it. */
  finish(): Row[][] {
    if (!this.badHeader) this.#reader.push(this.#decode(undefined), true, this.#take);
    if (this.#malformed.length > 0) throw new ImportError('The CSV file is malformed.', this.#malformed);
    if (this.#columns === null) throw new ImportError('The file is empty: no header row.', []);
    if (this.rows === 0) throw new ImportError('The file holds no rows.', []);
    this.#problems.throwIfAny();
    const left = this.#full.splice(0);
    if (this.#batch.length > 0) left.push(this.#batch);
    this.#batch = [];
    return left;
  }

  #decode(bytes: Uint8Array | undefined): string {
    try {
      return this.#decoder.decode(bytes, { stream: bytes !== undefined });
    } catch {
      throw new ImportError(
        `${this.#options.name} is not UTF-8 text; convert it first (e.g. iconv -f latin1 -t utf-8).`,
        [],
      );
    }
  }

  /** One record: the header, a problem, or a row in the batch being filled. */
  #record(cells: string[], line: number): void {
    if (this.badHeader) return;
    const columns = this.#columns;
    if (columns === null) {
      this.#header(
        cells.map((c) => c.trim()),
        line,
      );
      return;
    }
    if (cells.length !== columns.length) {
      if (this.#malformed.length < MAX_PROBLEMS)
        this.#malformed.push(
          `line ${line}: ${cells.length} cells, but the header has ${columns.length} columns`,
        );
      return;
    }
    const problems = this.#problems;
    const sources = this.#fieldSources as Map<string, FieldSource>;
    const where = () => `line ${line}`;
    const cellOf = (source: ColumnSource) => cells[source.index];
    const row = rowOf(this.#dataset, sources, this.#nullTokens, where, cellOf, problems);
    this.rows++;
    // After the first refused record nothing more is handed on: the import fails at the end.
    if (problems.count > 0 || this.#malformed.length > 0) {
      this.#batch = [];
      this.#full = [];
      return;
    }
    this.#batch.push(row);
    if (this.#batch.length >= (this.#options.batchRows ?? IMPORT_BATCH_ROWS)) {
      this.#full.push(this.#batch);
      this.#batch = [];
    }
  }

  #header(columns: string[], line: number): void {
    this.#columns = columns;
    this.#malformed.push(...headerProblems(columns, line));
    if (this.#malformed.length > 0) {
      this.badHeader = true;
      return;
    }
    const options = { ...this.#options, format: 'csv' as const };
    this.#fieldSources = resolveSources(this.#dataset, columns, options, this.#nullTokens);
    const described = describeSources(this.#fieldSources, columns);
    this.sources = described.sources;
    this.ignoredColumns = described.ignoredColumns;
  }
}
