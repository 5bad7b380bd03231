/** A CSV file read as a stream and handed on in batches of typed rows (see CsvRowStream). */
import { pipeline, type Readable, Transform } from 'node:stream';
import { parse } from 'csv-parse';
import type { DatasetDef, Row } from '../types.ts';
import { describeSources, type FieldSource, resolveSources, rowOf } from './fields.ts';
import type { ImportOptions } from './options.ts';
import { ImportError, MAX_PROBLEMS, Problems } from './problems.ts';
import { headerProblems } from './records.ts';

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
          malformed.push(...headerProblems(columns, line));
          if (malformed.length > 0) break;
          sources = this.#resolveHeader(columns, nullTokens);
          index = new Map(columns.map((c, i) => [c, i]));
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
      throw asImportError(error);
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

  /** The fields' sources from the header, described on the stream for the summary. */
  #resolveHeader(columns: readonly string[], nullTokens: ReadonlySet<string>): Map<string, FieldSource> {
    const sources = resolveSources(this.#dataset, columns, { ...this.#options, format: 'csv' }, nullTokens);
    const described = describeSources(sources, columns);
    this.sources = described.sources;
    this.ignoredColumns = described.ignoredColumns;
    return sources;
  }
}

/** csv-parse's own errors (CSV_*) as an ImportError naming the line; any other error as it is. */
function asImportError(error: unknown): unknown {
  if (error instanceof ImportError) return error;
  const code = (error as { code?: string }).code;
  if (typeof code === 'string' && code.startsWith('CSV_')) {
    const lines = (error as { lines?: number }).lines;
    return new ImportError('The CSV file is malformed.', [
      `${lines === undefined ? '' : `line ${lines}: `}${(error as Error).message}`,
    ]);
  }
  return error;
}
