/**
 * Parts of an answer that are JSON text already (stored rows, a page's long text): the answer holds a
 * placeholder string for each, and the encoded message gets the text put back where it stands
 * (spliceRaw), so stored rows go out as stored and the long text is encoded once.
 */
import { randomUUID } from 'node:crypto';

export interface RawPart {
  /** The string that stands for the part in the answer before it is encoded. */
  placeholder: string;
  /** The part's JSON text. */
  json: string;
}

/**
 * A part for `json`. Placeholders are random per part, so no text of ours or of a dataset can be taken
 * for one.
 */
export function rawPart(json: string): RawPart {
  return { placeholder: `tmd-raw-${randomUUID()}`, json };
}

/**
 * Puts back the parts: each placeholder stands in the serialized message as a JSON string and is
 * replaced by its JSON text, in the order the placeholders appear. The answer stays a string: Node
 * encodes it as it writes it with the headers, in one write; a buffer of our own, sized and filled
 * first and then written beside the headers, cost about 20 µs more per read (npm run bench).
 */
export function spliceRaw(serialized: string, raw: readonly RawPart[]): string {
  const found = raw
    .map((part) => ({
      json: part.json,
      at: serialized.indexOf(`"${part.placeholder}"`),
      length: part.placeholder.length + 2,
    }))
    .filter((part) => part.at >= 0)
    .sort((a, b) => a.at - b.at);
  let out = '';
  let from = 0;
  for (const part of found) {
    out += serialized.slice(from, part.at) + part.json;
    from = part.at + part.length;
  }
  return out + serialized.slice(from);
}
