/**
 * EDGAR Form 13F information table XML (namespace .../thirteenf/informationtable): one row per
 * holding. A full submission (`0001894188-23-000007.txt`, as EDGAR serves it) carries the period of
 * report, the filer and the accession number in its header, and the table as one of its documents. A
 * table on its own does not: give them with --set report_period=YYYY-MM-DD (required), filer_cik,
 * filer_name. --set wins over the header. Values are in dollars, as filed since January 2023 (earlier
 * tables gave thousands).
 */
import { ImportError } from '../import-file.ts';
import {
  cik10,
  documentKey,
  fullSubmission,
  headerDate,
  type SubmissionContext,
  submissionXml,
} from './edgar.ts';
import type { Importer, SourceRecord } from './importer.ts';
import { readXml, textAt, type XmlElement } from './xml.ts';

const NAMESPACE = 'http://www.sec.gov/edgar/document/thirteenf/informationtable';

/** An information table's rows, or its 13F-HR full submission's (the collector `sec-ownership` too). */
export function* thirteenFRecords(text: string, context: SubmissionContext): Generator<SourceRecord> {
  const submission = fullSubmission(text);
  // What the submission's header says, where --set does not say it.
  const filing: Record<string, string> = {};
  if (submission) {
    const first = (key: string) => submission.header.get(key)?.[0];
    const period = headerDate(first('CONFORMED PERIOD OF REPORT'));
    if (period) filing.report_period = period;
    for (const [field, key] of [
      ['filer_cik', 'CENTRAL INDEX KEY'],
      ['filer_name', 'COMPANY CONFORMED NAME'],
      ['accession_number', 'ACCESSION NUMBER'],
    ] as const) {
      const value = first(key);
      if (value !== undefined) filing[field] = value;
    }
  }
  const set = { ...filing, ...context.set };
  if (set.report_period === undefined)
    throw new ImportError('A 13F information table does not say which quarter it reports.', [
      'report_period: pass --set report_period=YYYY-MM-DD (the period of report of the 13F filing), or import the full submission (.txt), whose header says it',
    ]);
  const xml = submission ? submissionXml(submission, ['INFORMATION TABLE'], 'information table') : text;
  const { accession, key } = documentKey(set, context.fileName, context.sha256);
  const tables: XmlElement[] = [];
  let root: string | null = null;
  readXml(
    xml,
    (name, depth) => {
      if (depth === 0) root = name;
      return depth === 1 && name === 'infoTable';
    },
    (element) => {
      tables.push(element);
    },
  );
  if (root !== 'informationTable')
    throw new ImportError('This is not a 13F information table.', [
      `/${root ?? ''}: the root element must be informationTable`,
    ]);
  let line = 0;
  for (const t of tables) {
    line++;
    if (t.uri !== NAMESPACE && t.uri !== '') {
      yield { where: t.path, values: {}, problem: `infoTable is in namespace "${t.uri}", not ${NAMESPACE}` };
      continue;
    }
    yield {
      where: t.path,
      key: `${key}#${line}`,
      values: {
        report_period: set.report_period,
        filer_name: set.filer_name ?? null,
        filer_cik: cik10(set.filer_cik),
        accession_number: accession,
        name_of_issuer: textAt(t, 'nameOfIssuer'),
        title_of_class: textAt(t, 'titleOfClass'),
        cusip: textAt(t, 'cusip'),
        value: textAt(t, 'value'),
        shares: textAt(t, 'shrsOrPrnAmt', 'sshPrnamt'),
        sh_prn: textAt(t, 'shrsOrPrnAmt', 'sshPrnamtType'),
        put_call: textAt(t, 'putCall'),
        investment_discretion: textAt(t, 'investmentDiscretion'),
        voting_sole: textAt(t, 'votingAuthority', 'Sole'),
        voting_shared: textAt(t, 'votingAuthority', 'Shared'),
        voting_none: textAt(t, 'votingAuthority', 'None'),
      },
    };
  }
}

export const edgar13f: Importer = {
  name: 'edgar-13f',
  title: 'EDGAR Form 13F information table XML',
  source: 'U.S. Securities and Exchange Commission, EDGAR',
  licence: 'Public domain (U.S. government data)',
  attribution: null,
  targets: [{ dataset: 'ownership/holdings' }],
  detect: (head) =>
    /<(\w+:)?informationTable[\s>]/.test(head) ||
    /thirteenf\/informationtable/.test(head) ||
    (/^\s*<SEC-DOCUMENT>/.test(head) && /CONFORMED SUBMISSION TYPE:\s*13F-HR/.test(head)),
  records: thirteenFRecords,
};
