/**
 * XML for the EDGAR importers, read with saxes (a streaming, namespace-aware parser). Elements are named
 * by their local name, so `<ns1:infoTable>` and a default-namespace `<infoTable>` read alike; the
 * namespace URI is kept for the importer to check.
 */
import { SaxesParser } from 'saxes';
import { ImportError } from '../import-file.ts';

export interface XmlElement {
  /** The local name (no prefix). */
  name: string;
  uri: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text, trimmed (character data directly inside it). */
  text: string;
  /** Where it starts: `/informationTable/infoTable[3]`, counting siblings of the same name from 1. */
  path: string;
  line: number;
}

/** The first child with this local name. */
export function child(element: XmlElement | undefined, name: string): XmlElement | undefined {
  return element?.children.find((c) => c.name === name);
}

export function children(element: XmlElement | undefined, name: string): XmlElement[] {
  return element?.children.filter((c) => c.name === name) ?? [];
}

/** The text at a path of child names (`transactionAmounts`, `transactionShares`, `value`), or null. */
export function textAt(element: XmlElement | undefined, ...names: string[]): string | null {
  let at = element;
  for (const name of names) at = child(at, name);
  return at === undefined || at.text === '' ? null : at.text;
}

/**
 * How deep elements may nest. saxes resolves namespaces through every open element, so each tag costs
 * time in its depth and a deeply nested file takes quadratic time; the EDGAR documents nest a handful deep.
 */
export const MAX_XML_DEPTH = 64;

/**
 * Parses the document, handing each element `collect` accepts to `onElement` once it closes, whole
 * (with its descendants). Elements outside a collected one are not kept. A malformed document throws
 * ImportError naming the line, column and the path of the element being read.
 */
export function readXml(
  text: string,
  collect: (name: string, depth: number) => boolean,
  onElement: (element: XmlElement) => void,
): void {
  // Documents cut from a full submission begin with a line end before the XML declaration, which must
  // come first: the whitespace is dropped, and the lines it held still count in every position told.
  const lead = /^\s*/.exec(text)?.[0] ?? '';
  const skipped = lead.split('\n').length - 1;
  const body = lead === '' ? text : text.slice(lead.length);
  const parser = new SaxesParser({ xmlns: true, position: true });
  const stack: { element: XmlElement; kept: boolean; counts: Map<string, number> }[] = [];
  const rootCounts = new Map<string, number>();
  let failure: ImportError | null = null;
  const where = () =>
    `line ${parser.line + skipped}, column ${parser.column}${stack.length ? ` (in ${stack.at(-1)?.element.path})` : ''}`;
  parser.on('error', (error) => {
    // saxes prefixes its message with the position; the path says which element it was in.
    const message = error.message.replace(/^[^:]*:\d+:\d+: /, '').replace(/^\d+:\d+: /, '');
    failure ??= new ImportError('The XML file is malformed; nothing was imported.', [
      `${where()}: ${message}`,
    ]);
  });
  parser.on('opentag', (tag) => {
    if (stack.length >= MAX_XML_DEPTH) {
      throw new ImportError('The XML file nests elements too deeply; nothing was imported.', [
        `${where()}: elements nested more than ${MAX_XML_DEPTH} deep`,
      ]);
    }
    const parent = stack.at(-1);
    const counts = parent?.counts ?? rootCounts;
    const local = tag.local ?? tag.name;
    const n = (counts.get(local) ?? 0) + 1;
    counts.set(local, n);
    const attributes: Record<string, string> = {};
    for (const attribute of Object.values(tag.attributes)) {
      if (typeof attribute === 'object' && attribute.prefix !== 'xmlns' && attribute.name !== 'xmlns')
        attributes[attribute.local] = attribute.value;
    }
    const element: XmlElement = {
      name: local,
      uri: tag.uri ?? '',
      attributes,
      children: [],
      text: '',
      path: `${parent?.element.path ?? ''}/${local}${n > 1 ? `[${n}]` : ''}`,
      line: parser.line + skipped,
    };
    const kept = (parent?.kept ?? false) || collect(local, stack.length);
    if (kept && parent?.kept) parent.element.children.push(element);
    stack.push({ element, kept, counts: new Map() });
  });
  const onText = (data: string) => {
    const top = stack.at(-1);
    if (top?.kept) top.element.text += data;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', () => {
    const top = stack.pop();
    if (!top?.kept) return;
    top.element.text = top.element.text.trim();
    const parent = stack.at(-1);
    if (!parent?.kept) onElement(top.element);
  });
  try {
    parser.write(body);
    if (failure === null) parser.close();
  } catch (error) {
    if (error instanceof ImportError) throw error;
    failure ??= new ImportError('The XML file is malformed; nothing was imported.', [
      `${where()}: ${(error as Error).message}`,
    ]);
  }
  if (failure !== null) throw failure;
}
