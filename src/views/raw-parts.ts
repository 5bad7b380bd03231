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
 * replaced by its JSON text. The answer is written straight into one buffer of its exact UTF-8 size, in
 * the order the placeholders appear.
 */
export function spliceRaw(serialized: string, raw: readonly RawPart[]): Buffer {
  const found = raw
    .map((part) => ({
      json: part.json,
      at: serialized.indexOf(`"${part.placeholder}"`),
      length: part.placeholder.length + 2,
    }))
    .filter((part) => part.at >= 0)
    .sort((a, b) => a.at - b.at);
  const pieces: string[] = [];
  let from = 0;
  for (const part of found) {
    pieces.push(serialized.slice(from, part.at), part.json);
    from = part.at + part.length;
  }
  pieces.push(serialized.slice(from));
  const out = Buffer.allocUnsafe(pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0));
  let offset = 0;
  for (const piece of pieces) offset += out.write(piece, offset);
  return out;
}
