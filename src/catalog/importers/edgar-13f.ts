/**
 * EDGAR Form 13F information table XML (namespace .../thirteenf/informationtable): one row per
 * holding. The table does not carry the filer or the period (they are in the filing's primary
 * document): give them with --set report_period=YYYY-MM-DD (required), filer_cik, filer_name. Values are
 * in dollars, as filed since January 2023 (earlier tables gave thousands).
 */
import { ImportError } from '../import-file.ts';
import { cik10, documentKey } from './edgar.ts';
import type { ImportContext, Importer, SourceRecord } from './importer.ts';
import { readXml, textAt, type XmlElement } from './xml.ts';

const NAMESPACE = 'http://www.sec.gov/edgar/document/thirteenf/informationtable';

function* records(text: string, context: ImportContext): Generator<SourceRecord> {
  if (context.set.report_period === undefined)
    throw new ImportError('A 13F information table does not say which quarter it reports.', [
      'report_period: pass --set report_period=YYYY-MM-DD (the period of report of the 13F filing)',
    ]);
  const { accession, key } = documentKey(context.set, context.fileName, context.sha256);
  const tables: XmlElement[] = [];
  let root: string | null = null;
  readXml(
    text,
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
        filer_cik: cik10(context.set.filer_cik),
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
  detect: (head) => /<(\w+:)?informationTable[\s>]/.test(head) || /thirteenf\/informationtable/.test(head),
  records,
};
