/** What the EDGAR importers share: CIKs and accession numbers as EDGAR writes them. */
import { ImportError } from '../import-file.ts';
import type { ImportContext } from './importer.ts';

/** What reading an EDGAR document needs: an imported file's name and digest, or a collector's fetch. */
export type SubmissionContext = Pick<ImportContext, 'set' | 'fileName' | 'sha256'>;

/** A CIK as ten digits with leading zeros (`1318605` -> `0001318605`), the form EDGAR's paths use. */
export function cik10(value: unknown): string | null {
  const text = value === null || value === undefined ? '' : String(value).trim();
  return /^\d{1,10}$/.test(text) ? text.padStart(10, '0') : text === '' ? null : text;
}

const accessionPattern = /(\d{10})-?(\d{2})-?(\d{6})/;

/** The accession number in a file name EDGAR gave it (`0001127602-22-026345.xml`), if any. */
export function accessionInName(fileName: string): string | null {
  const m = accessionPattern.exec(fileName);
  return m ? `${m[1]}-${m[2]}-${m[3]}` : null;
}

/**
 * What names one document's rows in their natural key: its accession number (given with --set, or in
 * the file name), else the file's SHA-256, so the same file imported twice replaces its own rows.
 */
export function documentKey(
  set: Readonly<Record<string, string>>,
  fileName: string,
  sha256: string,
): {
  accession: string | null;
  key: string;
} {
  const accession = set.accession_number ?? accessionInName(fileName);
  return { accession, key: accession ?? `sha256:${sha256}` };
}

/**
 * A full submission as EDGAR serves it (`0001894188-23-000007.txt`): an SGML header of `KEY: value`
 * lines, then each document between <DOCUMENT> and </DOCUMENT>, an XML one between <XML> and </XML>.
 */
export interface FullSubmission {
  /** Each header key's values in order (CENTRAL INDEX KEY appears once per party). */
  header: ReadonlyMap<string, readonly string[]>;
  documents: { type: string; fileName: string | null; xml: string | null }[];
}

/** The submission, or null when the text is not one (a bare XML document). */
export function fullSubmission(text: string): FullSubmission | null {
  if (!/^\s*<SEC-DOCUMENT>/.test(text.slice(0, 512))) return null;
  const header = new Map<string, string[]>();
  const headerEnd = text.indexOf('</SEC-HEADER>');
  for (const line of text.slice(0, Math.max(headerEnd, 0)).split(/\r?\n/)) {
    const m = /^\s*([A-Z][A-Z0-9 -]*[A-Z0-9]):\s*(.*?)\s*$/.exec(line);
    if (!m || m[2] === '') continue;
    const values = header.get(m[1] as string) ?? [];
    values.push(m[2] as string);
    header.set(m[1] as string, values);
  }
  const documents: FullSubmission['documents'] = [];
  for (const part of text.split('<DOCUMENT>').slice(1)) {
    const body = part.slice(0, Math.max(0, part.indexOf('</DOCUMENT>')) || part.length);
    const open = body.indexOf('<XML>');
    const close = body.lastIndexOf('</XML>');
    documents.push({
      type: /<TYPE>([^\r\n]*)/.exec(body)?.[1]?.trim() ?? '',
      fileName: /<FILENAME>([^\r\n]*)/.exec(body)?.[1]?.trim() ?? null,
      xml: open >= 0 && close > open ? body.slice(open + '<XML>'.length, close) : null,
    });
  }
  return { header, documents };
}

/** A header date (`20230930`) as a date (`2023-09-30`), or null. */
export function headerDate(value: string | undefined): string | null {
  const m = /^(\d{4})(\d{2})(\d{2})$/.exec(value ?? '');
  return m ? `${m[1]}-${m[2]}-${m[3]}` : null;
}

/** The submission's XML document of one of these types (`INFORMATION TABLE`, `4`), or a refusal. */
export function submissionXml(submission: FullSubmission, types: readonly string[], what: string): string {
  const found = submission.documents.find((d) => types.includes(d.type.toUpperCase()) && d.xml !== null);
  if (!found) {
    const seen = submission.documents.map((d) => d.type || '?').join(', ') || 'none';
    throw new ImportError(`This full submission holds no ${what}; nothing was imported.`, [
      `<DOCUMENT> of TYPE ${types.join(' or ')} with an <XML> part: not found (documents: ${seen})`,
    ]);
  }
  return found.xml as string;
}
