/**
 * RFC 4180 records with the line each starts on, from a whole text or from pieces of a stream. Written
 * here rather than taken from csv-parse: a streamed import spent more on csv-parse's record by record
 * iteration (its line info, an async step per record) than on splitting lines, and the in-memory and
 * streamed imports now read a file by one set of rules.
 */
import { ImportError } from './problems.ts';

/** The longest record taken (in characters): beyond it a quoted cell is taken as never closed. */
export const MAX_RECORD_CHARS = 4 * 1024 * 1024;

/**
 * Records from text given in pieces; quoted cells may hold commas, quotes and line ends (a quote opens
 * a cell only at its start, blanks aside). A line without a quote is split as it is, as most lines of
 * a large file are; only quoted ones are walked cell by cell. Lines of blanks are skipped.
 */
export class CsvRecordReader {
  /** Text of a record not yet ended, carried to the next piece. */
  #rest = '';
  /** The line #rest starts on. */
  #line = 1;
  #started = false;

  /**
   * Calls `onRecord` for each record that ends in `text` (after what earlier pieces left); with `last`,
   * the text ends the file, so its final record needs no line end. Throws on a quoted cell never closed.
   */
  push(text: string, last: boolean, onRecord: (cells: string[], line: number) => void): void {
    let s = this.#rest === '' ? text : this.#rest + text;
    if (!this.#started && s.length > 0) {
      this.#started = true;
      if (s.charCodeAt(0) === 0xfeff) s = s.slice(1);
    }
    let i = 0;
    let line = this.#line;
    // The next quote and carriage return at or after i, looked for again only once passed.
    let quote = -2;
    let cr = -2;
    while (i < s.length) {
      const nl = s.indexOf('\n', i);
      if (quote !== -1 && quote < i) quote = s.indexOf('"', i);
      if (cr !== -1 && cr < i) cr = s.indexOf('\r', i);
      if (nl === -1 && !last && cr === -1) break;
      const end = nl === -1 ? s.length : nl;
      const plain = (nl !== -1 || last) && (quote === -1 || quote > end) && (cr === -1 || cr >= end - 1);
      if (plain) {
        const record = cr !== -1 && cr === end - 1 ? s.slice(i, end - 1) : s.slice(i, end);
        if (record.trim() !== '') onRecord(record.split(','), line);
        line++;
        i = end + 1;
        continue;
      }
      const walked = walkRecord(s, i, line, last);
      if (walked === null) break;
      const { cells } = walked;
      if (!(cells.length === 1 && cells[0]?.trim() === '')) onRecord(cells, line);
      line = walked.line;
      i = walked.next;
    }
    this.#rest = i < s.length ? s.slice(i) : '';
    this.#line = line;
    if (this.#rest.length > MAX_RECORD_CHARS)
      throw new ImportError('The CSV file is malformed.', [
        `line ${line}: a record longer than ${MAX_RECORD_CHARS / 1024 / 1024} MB (a quoted cell never closed?)`,
      ]);
  }
}

/**
 * The record from `start`, cell by cell: where the next begins (after its line end) and its line; null
 * when the text ends first and more is to come.
 */
function walkRecord(
  s: string,
  start: number,
  firstLine: number,
  last: boolean,
): { cells: string[]; next: number; line: number } | null {
  const cells: string[] = [];
  let line = firstLine;
  let cell = '';
  let quoted = false;
  let i = start;
  while (i < s.length) {
    if (quoted) {
      // Everything up to the next quote is the cell's, line ends included: taken in one slice.
      const quote = s.indexOf('"', i);
      const end = quote === -1 ? s.length : quote;
      for (let nl = s.indexOf('\n', i); nl !== -1 && nl < end; nl = s.indexOf('\n', nl + 1)) line++;
      cell += s.slice(i, end);
      i = end;
      if (quote === -1) continue;
      if (i + 1 >= s.length && !last) return null;
      if (s[i + 1] === '"') {
        cell += '"';
        i += 2;
        continue;
      }
      quoted = false;
      i++;
      continue;
    }
    const ch = s[i] as string;
    if (ch === '"' && cell.trim() === '') {
      quoted = true;
      cell = '';
    } else if (ch === ',') {
      cells.push(cell);
      cell = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && i + 1 >= s.length && !last) return null;
      if (ch === '\r' && s[i + 1] === '\n') i++;
      cells.push(cell);
      return { cells, next: i + 1, line: line + 1 };
    } else {
      cell += ch;
    }
    i++;
  }
  if (!last) return null;
  if (quoted)
    throw new ImportError('The CSV file is malformed.', [`line ${firstLine}: a quoted cell is never closed`]);
  cells.push(cell);
  return { cells, next: i, line };
}

/** The records of a whole text. */
export function* csvRecords(text: string): Generator<{ line: number; cells: string[] }> {
  const records: { line: number; cells: string[] }[] = [];
  new CsvRecordReader().push(text, true, (cells, line) => {
    records.push({ line, cells });
  });
  yield* records;
}
