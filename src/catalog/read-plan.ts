/**
 * Read parameters, validated against one dataset and turned into a store query. The zod shapes here feed
 * the REST querystring, the OpenAPI document and the MCP tool schemas alike.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import type { CatalogEntry } from './catalog.ts';
import type { FieldType, RowQuery } from './types.ts';

export const MAX_LIMIT = 1000;
/**
 * The most stored rows one read examines for a filter that no index serves (store/row-scan.ts): set so
 * that the worst accepted read costs about ten times a median one (docs/benchmarks.md).
 */
export const SCAN_CAP = 2_000;
export const DEFAULT_LIMIT = 100;
const MAX_FILTER_VALUES = 100;

/**
 * A time bound as given: a date, or a date and time in UTC (seconds and the Z optional: a time without
 * a zone is UTC, never the server's local time). The instant it names, in ms; NaN if it names none
 * (2024-02-30, 25:00): a date that does not print back the same is not a real one.
 */
function instantOf(bound: string): number {
  const [date, time = '00:00:00'] = bound.replace(/Z$/, '').split('T') as [string, string?];
  const iso = `${date}T${time.length === 5 ? `${time}:00` : time}Z`;
  const ms = Date.parse(iso);
  return !Number.isNaN(ms) && new Date(ms).toISOString().replace('.000Z', 'Z') === iso ? ms : Number.NaN;
}

/** Times as rows store them: YYYY-MM-DDTHH:MM:SSZ (a date alone stays a date, the start of its day). */
const storedTime = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

const timeBound = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?Z?)?$/, 'must be YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ')
  .refine((v) => !Number.isNaN(instantOf(v)), 'is not a real date');

/** The parameters every read takes, besides entity filters (which are named by each dataset). */
export const readOptionsShape = {
  from: timeBound.optional().describe('Earliest time, inclusive (alias: start_date).'),
  to: timeBound.optional().describe('Latest time, inclusive for a date (alias: end_date).'),
  fields: z
    .string()
    .max(2000)
    .optional()
    .describe('Comma-separated field names to return; all fields when absent.'),
  limit: z
    .int('must be a whole number')
    .min(1)
    .max(MAX_LIMIT)
    .optional()
    .describe(
      `Rows per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}). One request is one read, whatever the page size.`,
    ),
  cursor: z
    .string()
    .max(1024)
    .optional()
    .describe('Opaque cursor from meta.next_cursor of the previous page.'),
  sort: z
    .enum(['asc', 'desc'])
    .optional()
    .describe('Order by the time field: desc (newest first, default) or asc.'),
};

/** A filter value as given: text (REST, or MCP text, a list when it holds commas) or a JSON number or boolean (MCP). */
export type FilterValue = string | number | boolean;

export interface ReadParams {
  filters: Record<string, FilterValue[]>;
  from?: string | undefined;
  to?: string | undefined;
  fields?: string[] | undefined;
  limit: number;
  cursor?: string | undefined;
  sort: 'asc' | 'desc';
}

export interface ReadPlan {
  query: RowQuery;
  /** Fields to project, or null for the whole stored row. */
  fields: string[] | null;
  fingerprint: string;
}

/**
 * The values of one filter as written: comma-separated, each trimmed; a value that holds a comma or a
 * quote is written in double quotes, a quote inside doubled, as in CSV (`"Tesla, Inc.",AAPL`).
 */
export function splitValues(text: string): string[] {
  const values: string[] = [];
  let at = 0;
  for (;;) {
    while (text[at] === ' ') at++;
    if (text[at] === '"') {
      let value = '';
      let end = at + 1;
      for (;;) {
        const quote = text.indexOf('"', end);
        if (quote < 0) throw invalid(`A quoted filter value is not closed: ${text}`, 'filters');
        value += text.slice(end, quote);
        if (text[quote + 1] !== '"') {
          end = quote + 1;
          break;
        }
        value += '"';
        end = quote + 2;
      }
      values.push(value);
      const comma = text.indexOf(',', end);
      if (text.slice(end, comma < 0 ? undefined : comma).trim() !== '')
        throw invalid(`Text after a quoted filter value: ${text}`, 'filters');
      if (comma < 0) return values;
      at = comma + 1;
    } else {
      const comma = text.indexOf(',', at);
      values.push(text.slice(at, comma < 0 ? undefined : comma).trim());
      if (comma < 0) return values;
      at = comma + 1;
    }
  }
}

/** One filter value as splitValues reads it back: quoted when it holds a comma or a quote. */
export function quoteValue(value: string): string {
  return /[,"]/.test(value) || value.trim() !== value ? `"${value.replaceAll('"', '""')}"` : value;
}

function invalid(detail: string, path: string): AppError {
  return new AppError('invalid_request', detail, { errors: [{ path, message: detail }] });
}

const DAY_MS = 86_400_000;
/** SHA-256's block size, in bytes. */
const HMAC_BLOCK = 64;
/** The first instant after every bound a read can name (10000-01-01T00:00:00Z). */
const END_OF_TIME = Date.UTC(10000, 0, 1);

/** Cursors kept by CursorCodec.encode, and the longest fingerprint it keeps one for (a few KB in all). */
const MAX_CACHED_CURSORS = 1024;
const MAX_CACHED_FINGERPRINT = 256;

/**
 * Cursors are signed and bound to their query: the MAC covers the position and the query's fingerprint,
 * so a forged cursor and a cursor reused with other filters are both refused.
 */
export class CursorCodec {
  /** The key XORed with HMAC's inner and outer pads (RFC 2104), computed once. */
  readonly #inner: Buffer;
  readonly #outer: Buffer;
  /**
   * Cursors encoded lately, by query and position: the same page read again (a busy first page) ends
   * at the same row, and its cursor is the same string. Emptied when full; short fingerprints only.
   */
  readonly #encoded = new Map<string, string>();

  constructor(secret: Buffer) {
    // HMAC-SHA-256 as RFC 2104 defines it, over two one-shot hashes: createHmac builds a stream and an
    // OpenSSL context per call, 1.7 times the cost in profiles under load (a test checks it against createHmac).
    const key = secret.length > HMAC_BLOCK ? hash('sha256', secret, 'buffer') : secret;
    this.#inner = Buffer.alloc(HMAC_BLOCK, 0x36);
    this.#outer = Buffer.alloc(HMAC_BLOCK, 0x5c);
    for (let i = 0; i < key.length; i++) {
      this.#inner[i] = (this.#inner[i] as number) ^ (key[i] as number);
      this.#outer[i] = (this.#outer[i] as number) ^ (key[i] as number);
    }
  }

  #mac(payload: string, fingerprint: string): Buffer {
    const message = Buffer.from(`${payload}\n${fingerprint}`);
    const inner = hash('sha256', Buffer.concat([this.#inner, message]), 'buffer');
    return hash('sha256', Buffer.concat([this.#outer, inner]), 'buffer').subarray(0, 16);
  }

  encode(fingerprint: string, position: { t: string; id: number }): string {
    const key =
      fingerprint.length <= MAX_CACHED_FINGERPRINT ? `${position.id}\n${position.t}\n${fingerprint}` : null;
    const known = key === null ? undefined : this.#encoded.get(key);
    if (known !== undefined) return known;
    const payload = Buffer.from(JSON.stringify([position.t, position.id])).toString('base64url');
    const cursor = `${payload}.${this.#mac(payload, fingerprint).toString('base64url')}`;
    if (key !== null) {
      if (this.#encoded.size >= MAX_CACHED_CURSORS) this.#encoded.clear();
      this.#encoded.set(key, cursor);
    }
    return cursor;
  }

  decode(cursor: string, fingerprint: string): { t: string; id: number } {
    const [payload, mac, extra] = cursor.split('.');
    const refuse = () =>
      new AppError(
        'invalid_cursor',
        'The cursor is not valid for this query: pass meta.next_cursor unchanged, with the same dataset, filters, from, to and sort as the first page.',
      );
    if (!payload || !mac || extra !== undefined) throw refuse();
    const given = Buffer.from(mac, 'base64url');
    const expected = this.#mac(payload, fingerprint);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refuse();
    const [t, id] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [string, number];
    return { t, id };
  }
}

const integerText = /^[+-]?\d+$/;
const numberText = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const booleanText: Record<string, 'true' | 'false'> = {
  true: 'true',
  '1': 'true',
  false: 'false',
  '0': 'false',
};

/**
 * A filter's values as the field's type compares them, distinct and sorted: numbers for integer and
 * number fields (a row matches by value, so 01 finds 1 and every digit of a stored coordinate counts),
 * true/false for booleans (also written 1/0, in any case), text otherwise. A value that is not of the
 * field's type is refused rather than matched against nothing; so is a JSON number or boolean on a text
 * field, which would lose what makes it that text (067651 is not 67651).
 */
function typedValues(name: string, type: FieldType | undefined, values: FilterValue[]): string[] | number[] {
  if (type === 'integer' || type === 'number') {
    const numbers = values.map((value) => {
      const pattern = type === 'integer' ? integerText : numberText;
      const n =
        typeof value === 'number'
          ? value
          : typeof value === 'string' && pattern.test(value)
            ? Number(value)
            : Number.NaN;
      if (!Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n))) {
        throw invalid(
          `Filter "${name}" takes ${type === 'integer' ? 'whole numbers' : 'numbers'}: ${JSON.stringify(value)} is not one.`,
          name,
        );
      }
      if (type === 'integer' && !Number.isSafeInteger(n)) {
        throw invalid(
          `Filter "${name}": ${value} is out of range (whole numbers up to ${Number.MAX_SAFE_INTEGER} either way).`,
          name,
        );
      }
      return n;
    });
    return [...new Set(numbers)].sort((a, b) => a - b);
  }
  if (type === 'boolean') {
    const booleans = values.map((value) => {
      const b = booleanText[String(value).toLowerCase()];
      if (b === undefined)
        throw invalid(`Filter "${name}" takes true or false: ${JSON.stringify(value)} is neither.`, name);
      return b;
    });
    return [...new Set(booleans)].sort();
  }
  const texts = values.map((value) => {
    if (typeof value === 'string') return value;
    throw invalid(
      `Filter "${name}" is a ${type ?? 'text'} field: pass ${JSON.stringify(String(value))} as a string, exactly as the field holds it.`,
      name,
    );
  });
  return [...new Set(texts)].sort();
}

interface FieldIndex {
  entityFields: Set<string>;
  fieldNames: Set<string>;
  fieldTypes: Map<string, FieldType>;
}

/** Each dataset's field lookups, built once per definition rather than on every read. */
const fieldIndexes = new WeakMap<CatalogEntry['dataset'], FieldIndex>();

function fieldIndexOf(dataset: CatalogEntry['dataset']): FieldIndex {
  let index = fieldIndexes.get(dataset);
  if (!index) {
    index = {
      entityFields: new Set(dataset.entity_fields),
      fieldNames: new Set(dataset.fields.map((f) => f.name)),
      fieldTypes: new Map(dataset.fields.map((f) => [f.name, f.type])),
    };
    fieldIndexes.set(dataset, index);
  }
  return index;
}

export function planRead(entry: CatalogEntry, params: ReadParams, cursors: CursorCodec): ReadPlan {
  const dataset = entry.dataset;
  const { entityFields, fieldNames, fieldTypes } = fieldIndexOf(dataset);

  const filters: RowQuery['filters'] = {};
  for (const [name, values] of Object.entries(params.filters)) {
    if (!fieldNames.has(name)) {
      const indexed = [...entityFields].join(', ') || 'none';
      throw invalid(
        `Unknown parameter or filter "${name}". This dataset filters by any of its fields; its entity fields (${indexed}) are indexed, others are checked on at most ${SCAN_CAP} rows per read. See GET /api/v1/catalog/${entry.key}.`,
        name,
      );
    }
    const cleaned = values
      .flatMap((v): FilterValue[] => (typeof v === 'string' ? splitValues(v) : [v]))
      .filter((v) => v !== '');
    const texts = cleaned.filter((v): v is string => typeof v === 'string');
    if (cleaned.length === 0) throw invalid(`Filter "${name}" needs at least one value.`, name);
    if (cleaned.length > MAX_FILTER_VALUES)
      throw invalid(`Filter "${name}" takes at most ${MAX_FILTER_VALUES} values.`, name);
    if (texts.some((v) => v.length > 128))
      throw invalid(`Filter "${name}" has a value longer than 128 characters.`, name);
    // PostgreSQL text cannot hold NUL at all, and a C0 control or DEL in an entity value (a code, a name) is a
    // client mistake far more often than a value: refused rather than read for an empty page.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
    if (texts.some((v) => /[\u0000-\u001f\u007f]/.test(v)))
      throw invalid(`Filter "${name}" has a control character in a value.`, name);
    filters[name] = typedValues(name, fieldTypes.get(name), cleaned);
  }

  let fields: string[] | null = null;
  if (params.fields !== undefined) {
    fields = [...new Set(params.fields.map((f) => f.trim()).filter((f) => f.length > 0))];
    const unknown = fields.filter((f) => !fieldNames.has(f));
    if (unknown.length > 0)
      throw invalid(
        `Unknown field(s): ${unknown.join(', ')}. See GET /api/v1/catalog/${entry.key}.`,
        'fields',
      );
    if (fields.length === 0) throw invalid('"fields" names no field.', 'fields');
  }

  // Bounds compare with the stored times as text, so they are written as the rows are. `from` is
  // inclusive: a date is the start of its day, so a time at midnight is written as its date (a stored
  // date sorts before any time of its day: as a time, 2024-01-09T00:00:00Z would leave out the day
  // 2024-01-09). `to` is inclusive too, of its whole day for a date and of its second for a time: rows
  // before the next day, or the next second. A `to` at the end of 9999 sets no upper bound.
  const from =
    params.from === undefined || params.from.length === 10
      ? params.from
      : instantOf(params.from) % DAY_MS === 0
        ? params.from.slice(0, 10)
        : storedTime(instantOf(params.from));
  const toEnd =
    params.to === undefined ? undefined : instantOf(params.to) + (params.to.length === 10 ? DAY_MS : 1000);
  if (params.from !== undefined && toEnd !== undefined && instantOf(params.from) >= toEnd) {
    throw invalid('"from" is after "to".', 'from');
  }
  // An exclusive bound at midnight is written as its date, for the same reason as `from`: as a time,
  // 2024-01-10T00:00:00Z would let in the day 2024-01-10, which sorts before it.
  const toExclusive =
    toEnd === undefined || params.to === undefined || toEnd >= END_OF_TIME
      ? undefined
      : toEnd % DAY_MS === 0
        ? storedTime(toEnd).slice(0, 10)
        : storedTime(toEnd);

  const descending = params.sort === 'desc';
  const fingerprint = JSON.stringify([dataset.key, filters, from ?? null, toExclusive ?? null, params.sort]);
  const after = params.cursor === undefined ? undefined : cursors.decode(params.cursor, fingerprint);

  const query: RowQuery = { dataset: dataset.key, filters, descending, limit: params.limit };
  if (from !== undefined) query.from = from;
  if (toExclusive !== undefined) query.toExclusive = toExclusive;
  if (after !== undefined) query.after = after;
  return { query, fields, fingerprint };
}
