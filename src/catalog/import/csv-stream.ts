/** A CSV file read as a stream and handed on in batches of typed rows (see CsvRowStream). */
import type { Readable } from 'node:stream';
import type { DatasetDef, Row } from '../types.ts';
import { CsvRowBuilder, type CsvRowOptions } from './csv-rows.ts';

export { IMPORT_BATCH_ROWS } from './csv-rows.ts';

/** How far a streamed import has read. */
export interface ImportProgress {
  rows: number;
  bytes: number;
}

export interface CsvStreamOptions extends CsvRowOptions {
  /** Called after about every `progressEvery` rows (50,000) and once at the end. */
  onProgress?: (progress: ImportProgress) => void;
  progressEvery?: number;
}

/**
 * A CSV file read as a stream (RFC 4180, csv-reader.ts) and handed on in batches of rows, as the dataset's
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
  #bytes = 0;
  #told = 0;

  constructor(dataset: DatasetDef, input: Readable, options: CsvStreamOptions) {
    this.#dataset = dataset;
    this.#input = input;
    this.#options = options;
  }

  async *batches(): AsyncGenerator<Row[]> {
    const builder = new CsvRowBuilder(this.#dataset, this.#options);
    try {
      for await (const chunk of this.#input as AsyncIterable<Buffer>) {
        this.#bytes += chunk.length;
        const full = builder.push(chunk);
        this.#took(builder);
        yield* full;
        if (builder.badHeader) break;
      }
      const left = builder.finish();
      this.#took(builder);
      yield* left;
    } finally {
      this.#input.destroy();
    }
    this.#options.onProgress?.({ rows: this.rows, bytes: this.#bytes });
  }

  /** The rows read so far, told every `progressEvery`. */
  #took(state: { rows: number; sources: Record<string, string | null>; ignoredColumns: string[] }): void {
    this.rows = state.rows;
    this.sources = state.sources;
    this.ignoredColumns = state.ignoredColumns;
    const every = this.#options.progressEvery ?? 50_000;
    const onProgress = this.#options.onProgress;
    if (onProgress && Math.floor(this.rows / every) > Math.floor(this.#told / every)) {
      this.#told = this.rows;
      onProgress({ rows: this.rows, bytes: this.#bytes });
    }
  }
}
