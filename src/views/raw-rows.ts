/**
 * Stored rows are JSON text already (flat objects of scalars, as JSON.stringify wrote them). The MCP read
 * turns them into CSV and into the structured `data` without parsing them into objects and printing the
 * numbers back: on a 100-row page that parse and re-print would be most of the cost of the call. A row
 * that is not such a flat object falls back to JSON.parse.
 */
import { csvCell } from '../catalog/csv.ts';

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN = 123;
const CLOSE = 125;

/** Index of the quote that closes the JSON string opening at `start`, or -1. */
function stringEnd(json: string, start: number): number {
  let quote = json.indexOf('"', start + 1);
  while (quote > 0 && json.charCodeAt(quote - 1) === BACKSLASH) {
    let slashes = 0;
    for (let i = quote - 1; json.charCodeAt(i) === BACKSLASH; i--) slashes++;
    if (slashes % 2 === 0) break;
    quote = json.indexOf('"', quote + 1);
  }
  return quote;
}

/** `-`, a digit, or the first letter of true, false, null. */
const unquotedStart = (c: number) => c === 45 || (c >= 48 && c <= 57) || c === 116 || c === 102 || c === 110;
/** A digit, or the last letter of true, false, null. */
const unquotedEnd = (c: number) => (c >= 48 && c <= 57) || c === 101 || c === 108;

/**
 * The raw JSON token of each column in a flat row (`{"k":1.5,"s":"x","n":null}`), in column order;
 * undefined where the row lacks the column. Null when the text is not a flat object as JSON.stringify
 * writes it (whitespace, nesting): the caller then parses it.
 */
function scan(
  json: string,
  columns: ReadonlyMap<string, number>,
  width: number,
): (string | undefined)[] | null {
  const tokens = new Array<string | undefined>(width).fill(undefined);
  const last = json.length - 1;
  if (json.charCodeAt(0) !== OPEN || json.charCodeAt(last) !== CLOSE) return null;
  if (last === 1) return tokens;
  let i = 1;
  for (;;) {
    if (json.charCodeAt(i) !== QUOTE) return null;
    const keyEnd = stringEnd(json, i);
    if (keyEnd < 0 || json.charCodeAt(keyEnd + 1) !== 58 /* : */) return null;
    const key = json.slice(i + 1, keyEnd);
    i = keyEnd + 2;
    let end: number;
    const first = json.charCodeAt(i);
    if (first === QUOTE) {
      end = stringEnd(json, i) + 1;
      if (end <= 0) return null;
    } else {
      end = json.indexOf(',', i);
      if (end < 0) end = last;
      // A number, true, false or null, written without whitespace; anything else is left to the parser.
      if (!(unquotedStart(first) && unquotedEnd(json.charCodeAt(end - 1)))) return null;
    }
    if (end <= i) return null;
    // An escaped key is rare enough to leave to the parser.
    if (key.includes('\\')) return null;
    const at = columns.get(key);
    if (at !== undefined) tokens[at] = json.slice(i, end);
    if (end === last) return tokens;
    if (json.charCodeAt(end) !== 44 /* , */) return null;
    i = end + 1;
  }
}

/** Rows as raw tokens aligned to `columns`, scanned or, failing that, parsed and re-printed. */
export function rowTokens(rows: readonly string[], columns: readonly string[]): (string | undefined)[][] {
  const index = new Map(columns.map((c, i) => [c, i]));
  return rows.map((json) => scan(json, index, columns.length) ?? tokensOf(JSON.parse(json), columns));
}

/** The tokens of a parsed object, aligned to `columns`: the fallback for odd rows, and recipe answers. */
export function tokensOf(value: Record<string, unknown>, columns: readonly string[]): (string | undefined)[] {
  return columns.map((c) => (value[c] === undefined ? undefined : JSON.stringify(value[c])));
}

/** A cell that needs none of csvCell's quoting or formula guard (the common case, one regex). */
const plainCell = /^[=+\-@\s]|[",\r\n]|\s$/;

/** The CSV cell of a raw token, as the REST CSV writes the parsed value (csvCell). */
function cellOf(token: string | undefined): string {
  if (token === undefined || token === 'null') return '';
  if (token.charCodeAt(0) !== QUOTE) return token; // numbers and booleans print as stored
  const text = token.includes('\\') ? (JSON.parse(token) as string) : token.slice(1, -1);
  return plainCell.test(text) ? csvCell(text) : text;
}

/**
 * One CSV line straight from a row whose members are exactly `columns`, in order (how rows are stored):
 * no token array, one slice per cell. Null for any other row, which then goes through `rowTokens`.
 */
function directLine(json: string, keys: readonly string[]): string | null {
  const last = json.length - 1;
  if (json.charCodeAt(0) !== OPEN || json.charCodeAt(last) !== CLOSE) return null;
  let line = '';
  let i = 1;
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k] as string;
    if (!json.startsWith(key, i)) return null;
    i += key.length;
    let end: number;
    let cell: string;
    if (json.charCodeAt(i) === QUOTE) {
      const close = stringEnd(json, i);
      if (close < 0) return null;
      end = close + 1;
      const text = json.slice(i + 1, close);
      cell = text.includes('\\')
        ? csvCell(JSON.parse(json.slice(i, end)) as string)
        : plainCell.test(text)
          ? csvCell(text)
          : text;
    } else {
      end = json.indexOf(',', i);
      if (end < 0) end = last;
      if (!(unquotedStart(json.charCodeAt(i)) && unquotedEnd(json.charCodeAt(end - 1)))) return null;
      cell = end - i === 4 && json.startsWith('null', i) ? '' : json.slice(i, end);
    }
    line += k === 0 ? cell : `,${cell}`;
    const after = json.charCodeAt(end);
    if (k === keys.length - 1) return end === last ? line : null;
    if (after !== 44 /* , */) return null;
    i = end + 1;
  }
  return null;
}

/** The header line of a CSV over `columns`, without its line end. */
const csvHeader = (columns: readonly string[]) => columns.map((c) => csvCell(c)).join(',');

/** Stored rows as CSV over `columns`, with a header and LF line ends: the compact form a model reads. */
export function csvOfRows(rows: readonly string[], columns: readonly string[]): string {
  const keys = columns.map((c) => `${JSON.stringify(c)}:`);
  let index: Map<string, number> | null = null;
  let out = `${csvHeader(columns)}\n`;
  for (const json of rows) {
    let line = columns.length > 0 ? directLine(json, keys) : null;
    if (line === null) {
      index ??= new Map(columns.map((c, i) => [c, i]));
      const tokens = scan(json, index, columns.length) ?? tokensOf(JSON.parse(json), columns);
      line = tokens.map(cellOf).join(',');
    }
    out += `${line}\n`;
  }
  return out;
}

/**
 * A page text as a JSON string literal, around stored CSV lines the store joined by LF and escaped for
 * JSON (`csvJoin: 'json'`): `before`, a header over `columns`, the lines, then `after` on its own line,
 * with LF line ends. The lines are neither decoded nor encoded again; the escaped header is kept per
 * column list (a catalog entry's, never changed), as every page of a dataset starts with it.
 */
export function csvTextJson(
  before: string,
  columns: readonly string[],
  escapedLines: string,
  after: string,
): string {
  let header = escapedHeaders.get(columns);
  if (header === undefined) {
    header = jsonContent(`${csvHeader(columns)}\n`);
    escapedHeaders.set(columns, header);
  }
  return `"${jsonContent(before)}${header}${escapedLines}${jsonContent(`\n${after}`)}"`;
}

const jsonContent = (text: string) => JSON.stringify(text).slice(1, -1);
/** The escaped header line of each column list a page was rendered over (a catalog entry's, reused). */
const escapedHeaders = new WeakMap<readonly string[], string>();

/** Header and rows as CSV with LF line ends: the compact form a model reads. */
export function csvOf(columns: readonly string[], rows: readonly (string | undefined)[][]): string {
  let out = `${csvHeader(columns)}\n`;
  for (const row of rows) {
    let line = cellOf(row[0]);
    for (let i = 1; i < row.length; i++) line += `,${cellOf(row[i])}`;
    out += `${line}\n`;
  }
  return out;
}

/** The JSON array of the rows as objects of `columns` (an absent column is null, as on REST). */
export function jsonOf(columns: readonly string[], rows: readonly (string | undefined)[][]): string {
  const keys = columns.map((c) => `${JSON.stringify(c)}:`);
  let out = '[';
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as (string | undefined)[];
    out += r === 0 ? '{' : ',{';
    for (let i = 0; i < keys.length; i++) out += `${i === 0 ? '' : ','}${keys[i]}${row[i] ?? 'null'}`;
    out += '}';
  }
  return `${out}]`;
}
