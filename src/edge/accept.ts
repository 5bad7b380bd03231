/**
 * Accept on metered routes: a read the client says it cannot take is refused with 406 before it is
 * charged, rather than charged and answered in a type it did not ask for. No Accept admits everything.
 * As in RFC 9110 12.5.1, the most specific range that matches a type gives its weight (so
 * `text/csv;q=0, text/*` refuses CSV), and of the offered types the heaviest wins, ties going to the
 * first offered.
 */
import { AppError } from '../errors.ts';

interface Range {
  type: string;
  subtype: string;
  q: number;
}

function parse(accept: string): Range[] {
  const ranges: Range[] = [];
  for (const part of accept.split(',')) {
    const [name = '', ...params] = part.split(';');
    const [type = '', subtype = ''] = name.trim().toLowerCase().split('/');
    if (type === '' || subtype === '') continue;
    let q = 1;
    for (const param of params) {
      const match = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(param);
      if (match) q = Number(match[1]);
    }
    ranges.push({ type, subtype, q: Number.isFinite(q) ? q : 0 });
  }
  return ranges;
}

/** The weight Accept gives `mediaType`: that of the most specific matching range, 0 if none matches. */
function weight(ranges: readonly Range[], mediaType: string): number {
  const [type, subtype] = mediaType.split('/');
  let best = -1;
  let q = 0;
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype
        ? 2
        : range.type === type && range.subtype === '*'
          ? 1
          : range.type === '*' && range.subtype === '*'
            ? 0
            : -1;
    if (specificity > best) {
      best = specificity;
      q = range.q;
    }
  }
  return q;
}

/** The offered type the client prefers, or null when Accept admits none of them. */
function negotiate(accept: string | undefined, offered: readonly string[]): string | null {
  if (accept === undefined || accept.trim() === '') return offered[0] ?? null;
  const ranges = parse(accept);
  let chosen: string | null = null;
  let chosenQ = 0;
  for (const type of offered) {
    const q = weight(ranges, type);
    if (q > chosenQ) {
      chosen = type;
      chosenQ = q;
    }
  }
  return chosen;
}

/** Whether Accept admits `mediaType` at all. */
export function admits(accept: string | undefined, mediaType: string): boolean {
  return negotiate(accept, [mediaType]) !== null;
}

/** The type to answer in, of those offered (server preference first); 406 when Accept admits none. */
export function chooseType(accept: string | undefined, offered: readonly string[]): string {
  const chosen = negotiate(accept, offered);
  if (chosen !== null) return chosen;
  throw new AppError(
    'not_acceptable',
    `This endpoint answers ${offered.join(' or ')}, and the Accept header admits ${offered.length === 1 ? 'no such type' : 'none of them'}; nothing was charged.`,
    { available: offered },
  );
}
