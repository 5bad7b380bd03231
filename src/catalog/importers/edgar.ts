/** What the EDGAR importers share: CIKs and accession numbers as EDGAR writes them. */

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
