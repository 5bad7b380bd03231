/**
 * EDGAR ownership filings, each fetched as its full submission (`<accession>.txt`: the SGML header and
 * every document of the filing): Forms 3, 4 and 5 (and their amendments) into
 * `ownership/insider-transactions`, one row per transaction, and 13F-HR (and 13F-HR/A) information
 * tables into `ownership/holdings`, one row per holding. The submission is read as the `edgar-form4`
 * and `edgar-13f` importers read it, with the same keys (accession + line), so a filing imported as a
 * file and the same filing collected are the same rows.
 *
 * Which filings: option `filings`, each `CIK/ACCESSION` (`1750/0001127602-25-001055`, the CIK of any
 * party to the filing: EDGAR files the submission under each), or an ACCESSION alone when its first
 * ten digits are the CIK of a party (a filer that filed itself, as 13F managers often do). The cursor
 * keeps the accessions fetched; a run asks only for the others, `--backfill` for every one again.
 * EDGAR's fair-access rule: at most 10 requests a second, with a User-Agent naming the operator.
 */
import { createHash } from 'node:crypto';
import { ImportError } from '../import-file.ts';
import { fullSubmission, type SubmissionContext } from '../importers/edgar.ts';
import { thirteenFRecords } from '../importers/edgar-13f.ts';
import { form4Records } from '../importers/edgar-form4.ts';
import type { SourceRecord } from '../importers/importer.ts';
import { type Chunk, type RunContext, type Source, SourceError } from './source.ts';

/** What each submission type becomes: the reader of its documents and the dataset of its rows. */
const FORMS: readonly {
  types: readonly string[];
  dataset: string;
  records: (text: string, context: SubmissionContext) => Iterable<SourceRecord>;
}[] = [
  {
    types: ['3', '4', '5', '3/A', '4/A', '5/A'],
    dataset: 'ownership/insider-transactions',
    records: form4Records,
  },
  { types: ['13F-HR', '13F-HR/A'], dataset: 'ownership/holdings', records: thirteenFRecords },
];

interface Filing {
  cik: string;
  accession: string;
}

/** The option's filings, each once, in its order; a malformed entry is refused whole. */
export function filingsOf(option: unknown): Filing[] {
  if (option === undefined) return [];
  if (!Array.isArray(option))
    throw new SourceError('sec-ownership option "filings" is a list of "CIK/ACCESSION" (or "ACCESSION")');
  const filings = new Map<string, Filing>();
  for (const entry of option) {
    const m =
      typeof entry === 'string' ? /^\s*(?:(\d{1,10})\/)?((\d{10})-\d{2}-\d{6})\s*$/.exec(entry) : null;
    if (!m)
      throw new SourceError(
        `sec-ownership option "filings": ${JSON.stringify(entry)} is not "CIK/ACCESSION" (1750/0001127602-25-001055) or an accession number`,
      );
    const accession = m[2] as string;
    filings.set(accession, { cik: String(Number(m[1] ?? m[3])), accession });
  }
  return [...filings.values()];
}

/** The submission's rows and the dataset they go to, or a SourceError naming the filing. */
function read(text: string, filing: Filing, url: string): { dataset: string; records: SourceRecord[] } {
  const submission = fullSubmission(text);
  if (!submission) throw new SourceError(`${url}: not an EDGAR full submission (no <SEC-DOCUMENT>)`);
  const filed = submission.header.get('ACCESSION NUMBER')?.[0];
  if (filed !== filing.accession)
    throw new SourceError(`${url}: the submission is ${filed ?? 'unnamed'}, not ${filing.accession}`);
  const type = submission.header.get('CONFORMED SUBMISSION TYPE')?.[0] ?? '?';
  const form = FORMS.find((f) => f.types.includes(type.toUpperCase()));
  if (!form)
    throw new SourceError(
      `${filing.accession} is a ${type} filing: sec-ownership reads Forms 3, 4 and 5 and 13F-HR`,
    );
  const context: SubmissionContext = {
    set: {},
    fileName: `${filing.accession}.txt`,
    sha256: createHash('sha256').update(text).digest('hex'),
  };
  try {
    const records = [...form.records(text, context)].map((r) => ({ ...r, where: `${url} ${r.where}` }));
    return { dataset: form.dataset, records };
  } catch (error) {
    if (error instanceof ImportError) throw new SourceError(`${filing.accession}: ${error.message}`);
    throw error;
  }
}

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const filings = filingsOf(context.options.filings);
  const asked = new Set(filings.map((f) => f.accession));
  const before = typeof context.cursor.fetched === 'string' ? context.cursor.fetched.split(' ') : [];
  // Accessions taken off the list leave the cursor with it.
  const fetched = new Set(context.backfill ? [] : before.filter((a) => asked.has(a)));
  for (const filing of filings) {
    if (fetched.has(filing.accession)) continue;
    const url = `${context.baseUrl}/Archives/edgar/data/${filing.cik}/${filing.accession.replaceAll('-', '')}/${filing.accession}.txt`;
    const response = await context.http.get(url, { accept: [404] });
    if (response.status === 404)
      throw new SourceError(
        `${filing.accession}: EDGAR has no submission at ${url} (HTTP 404); check the CIK and the accession number`,
      );
    const { dataset, records } = read(response.body, filing, url);
    fetched.add(filing.accession);
    yield {
      dataset,
      // The records carry their keys (accession#line), as the importers key them.
      naturalKey: [],
      url,
      cursor: { ...context.cursor, fetched: [...fetched].join(' ') },
      records,
    };
  }
}

export const secOwnership: Source = {
  id: 'sec-ownership',
  title: 'SEC EDGAR ownership filings (Forms 3, 4, 5 and 13F-HR full submissions)',
  publisher: 'U.S. Securities and Exchange Commission',
  licence: 'Public domain (U.S. government work)',
  datasets: ['ownership/insider-transactions', 'ownership/holdings'],
  baseUrl: 'https://www.sec.gov',
  perSecond: 10,
  schedule: '20 * * * *',
  run,
};
