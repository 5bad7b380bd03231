/**
 * EDGAR ownership documents (Forms 3, 4 and 5, schema X0306 and its predecessors): one row per
 * transaction of the non-derivative and derivative tables, with the issuer, the reporting owner (the
 * first, when several file together) and the texts of the footnotes the transaction cites.
 * Holdings without a transaction have no transaction date and are not rows of this dataset.
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
import { child, children, readXml, textAt, type XmlElement } from './xml.ts';

/** A whole number written with a zero fraction (`200000.0`) as the integer it is. */
const wholeNumber = (text: string | null) =>
  text !== null && /^\d+\.0+$/.test(text) ? text.replace(/\.0+$/, '') : text;

/** Every footnote id cited anywhere inside the element, in document order. */
function citedFootnotes(element: XmlElement, into: string[] = []): string[] {
  for (const c of element.children) {
    if (c.name === 'footnoteId' && c.attributes.id && !into.includes(c.attributes.id))
      into.push(c.attributes.id);
    else citedFootnotes(c, into);
  }
  return into;
}

/** An ownership document's rows, or its full submission's (the collector `sec-ownership` reads them too). */
export function* form4Records(text: string, context: SubmissionContext): Generator<SourceRecord> {
  // A full submission (.txt, as EDGAR serves it): the ownership document is one of its documents, and
  // its header says the accession number and the filing date.
  const submission = fullSubmission(text);
  const filed = submission?.header.get('ACCESSION NUMBER')?.[0];
  const set =
    filed !== undefined && context.set.accession_number === undefined
      ? { ...context.set, accession_number: filed }
      : context.set;
  const filingDate = submission ? headerDate(submission.header.get('FILED AS OF DATE')?.[0]) : null;
  const xml = submission
    ? submissionXml(submission, ['3', '4', '5', '3/A', '4/A', '5/A'], 'ownership document')
    : text;
  let root: XmlElement | undefined;
  readXml(
    xml,
    (_name, depth) => depth === 0,
    (element) => {
      root = element;
    },
  );
  if (root?.name !== 'ownershipDocument')
    throw new ImportError('This is not an EDGAR ownership document.', [
      `/${root?.name ?? ''}: the root element must be ownershipDocument`,
    ]);
  const doc = root;
  const issuer = child(doc, 'issuer');
  if (!issuer)
    throw new ImportError('The ownership document names no issuer.', ['/ownershipDocument/issuer: missing']);
  const owner = child(doc, 'reportingOwner');
  const relationship = child(owner, 'reportingOwnerRelationship');
  const footnotes = new Map(
    children(child(doc, 'footnotes'), 'footnote').map((f) => [
      f.attributes.id ?? '',
      f.text.replace(/\s+/g, ' '),
    ]),
  );
  const { accession, key } = documentKey(set, context.fileName, context.sha256);
  const common = {
    accession_number: accession,
    document_type: textAt(doc, 'documentType'),
    filing_date: filingDate,
    issuer_cik: cik10(textAt(issuer, 'issuerCik')),
    issuer_name: textAt(issuer, 'issuerName'),
    issuer_ticker: textAt(issuer, 'issuerTradingSymbol'),
    reporting_owner_cik: cik10(textAt(owner, 'reportingOwnerId', 'rptOwnerCik')),
    reporting_owner_name: textAt(owner, 'reportingOwnerId', 'rptOwnerName'),
    is_director: textAt(relationship, 'isDirector') ?? false,
    is_officer: textAt(relationship, 'isOfficer') ?? false,
    is_ten_percent_owner: textAt(relationship, 'isTenPercentOwner') ?? false,
    officer_title: textAt(relationship, 'officerTitle'),
  };
  const tables = [
    {
      table: 'non-derivative',
      transactions: children(child(doc, 'nonDerivativeTable'), 'nonDerivativeTransaction'),
    },
    { table: 'derivative', transactions: children(child(doc, 'derivativeTable'), 'derivativeTransaction') },
  ];
  let line = 0;
  for (const { table, transactions } of tables) {
    for (const t of transactions) {
      line++;
      const cited = citedFootnotes(t).map((id) => `${id}: ${footnotes.get(id) ?? '(not in the document)'}`);
      yield {
        where: t.path,
        key: `${key}#${line}`,
        values: {
          ...common,
          security_title: textAt(t, 'securityTitle', 'value'),
          transaction_date: textAt(t, 'transactionDate', 'value'),
          transaction_code: textAt(t, 'transactionCoding', 'transactionCode'),
          equity_swap_involved: textAt(t, 'transactionCoding', 'equitySwapInvolved'),
          shares: wholeNumber(textAt(t, 'transactionAmounts', 'transactionShares', 'value')),
          price_per_share: textAt(t, 'transactionAmounts', 'transactionPricePerShare', 'value'),
          acquired_disposed: textAt(t, 'transactionAmounts', 'transactionAcquiredDisposedCode', 'value'),
          shares_owned_following: wholeNumber(
            textAt(t, 'postTransactionAmounts', 'sharesOwnedFollowingTransaction', 'value'),
          ),
          direct_or_indirect: textAt(t, 'ownershipNature', 'directOrIndirectOwnership', 'value'),
          table,
          footnotes: cited.length > 0 ? cited.join(' | ') : null,
        },
      };
    }
  }
}

export const edgarForm4: Importer = {
  name: 'edgar-form4',
  title: 'EDGAR ownership document XML (Forms 3, 4, 5; schema X0306)',
  source: 'U.S. Securities and Exchange Commission, EDGAR',
  licence: 'Public domain (U.S. government data)',
  attribution: null,
  targets: [{ dataset: 'ownership/insider-transactions' }],
  detect: (head) =>
    /<ownershipDocument[\s>]/.test(head) ||
    (/^\s*<SEC-DOCUMENT>/.test(head) && /CONFORMED SUBMISSION TYPE:\s*[345](\/A)?\s*$/m.test(head)),
  records: form4Records,
};
