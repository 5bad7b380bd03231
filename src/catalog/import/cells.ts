/** One cell of a file as a value of its field's type, or the reason it is not one. */
import type { FieldDef, Scalar } from '../types.ts';

const integerText = /^[+-]?\d+$/;
const numberText = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const dateText = /^(\d{4})-(\d{2})-(\d{2})$/;
const dateTimeText = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * A calendar day, checked by arithmetic: a Date round trip per cell was an eighth of a CSV import's
 * CPU. Years before 100 stay refused, as the service's other date checks (Date.UTC) read them as 19xx.
 */
export function isRealDate(text: string): boolean {
  const m = dateText.exec(text);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 100 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number));
}

/** Why a cell is not a value of its field's type. */
export class CellRefusal {
  readonly error: string;
  constructor(error: string) {
    this.error = error;
  }
}

/** A cell as the field's type, or a reason it is not one. Strings are trimmed. */
export function convertCell(
  field: FieldDef,
  raw: unknown,
  nullTokens: ReadonlySet<string>,
): { value: Scalar } | { error: string } {
  const value = cellValue(field, raw, nullTokens);
  return value instanceof CellRefusal ? { error: value.error } : { value };
}

/** convertCell without a wrapper per cell: what a large file's import calls for each of its cells. */
export function cellValue(
  field: FieldDef,
  raw: unknown,
  nullTokens: ReadonlySet<string>,
): Scalar | CellRefusal {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'object') return new CellRefusal('is an object or array, not a single value');
  const text = typeof raw === 'string' ? raw.trim() : String(raw);
  // No stored value holds a control character (tab, CR and LF inside a quoted cell are text), and
  // PostgreSQL text cannot hold NUL at all.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text))
    return new CellRefusal(`${JSON.stringify(text)} holds a control character`);
  // A lone surrogate (a JSON file's "\ud800"): PostgreSQL stores the JSON text as given but cannot read
  // the value back out of it, so every filtered read of the dataset would fail there.
  if (!text.isWellFormed())
    return new CellRefusal(`${JSON.stringify(text)} is not valid Unicode (a lone surrogate)`);
  if (typeof raw === 'string' && (text === '' || (nullTokens.size > 0 && nullTokens.has(text)))) return null;
  switch (field.type) {
    case 'string':
      return text;
    case 'integer': {
      if (typeof raw === 'boolean' || !integerText.test(text)) return refusal(raw, text, 'is not an integer');
      const n = Number(text);
      return Number.isSafeInteger(n) ? n : refusal(raw, text, 'is too large for an integer');
    }
    case 'number': {
      if (typeof raw === 'boolean' || !numberText.test(text)) return refusal(raw, text, 'is not a number');
      const n = Number(text);
      return Number.isFinite(n) ? n : refusal(raw, text, 'is not a finite number');
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      if (lower === 'true' || lower === '1') return true;
      if (lower === 'false' || lower === '0') return false;
      return refusal(raw, text, 'is not a boolean (true/false/1/0)');
    }
    case 'date':
      return isRealDate(text) ? text : refusal(raw, text, 'is not a date (YYYY-MM-DD)');
    case 'datetime':
      return dateTimeOf(raw, text);
  }
}

/** A refused cell, shown as given. Built only then: not for every cell of a large file. */
function refusal(raw: unknown, text: string, why: string): CellRefusal {
  return new CellRefusal(`${JSON.stringify(typeof raw === 'string' ? text : raw)} ${why}`);
}

/** A date-time cell in the one stored form, UTC to the second. */
function dateTimeOf(raw: unknown, text: string): string | CellRefusal {
  const m = dateTimeText.exec(text);
  const ms = m ? Date.parse(text.replace(' ', 'T')) : Number.NaN;
  // Date.parse rolls 2024-02-30 and 24:00 over into the next day: the parts must be real ones.
  if (Number.isNaN(ms) || !isRealDate(text.slice(0, 10)) || Number(text.slice(11, 13)) > 23)
    return refusal(raw, text, 'is not a date-time (ISO 8601 with Z or an offset)');
  // One UTC form to the second, so the stored time column sorts as text and compares with the read
  // bounds; a fraction of a second would sort before the whole second.
  if (ms % 1000 !== 0)
    return refusal(raw, text, 'has a fraction of a second; times are stored to the second');
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}
