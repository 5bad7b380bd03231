/**
 * EDGAR submissions JSON (data.sec.gov/submissions/CIK##########.json): the filer's details and its
 * recent filings as parallel column arrays under `filings.recent`. The overflow files
 * (CIK##########-submissions-001.json) hold the same arrays at the top level, without the filer.
 */
import { ImportError } from '../import-file.ts';
import { cik10 } from './edgar.ts';
import type { ImportContext, Importer, SourceRecord } from './importer.ts';

type Columns = Record<string, unknown[]>;

function parse(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text.replace(/^\uFEFF/, ''));
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch (error) {
    throw new ImportError('The JSON file is malformed; nothing was imported.', [(error as Error).message]);
  }
  throw new ImportError('An EDGAR submissions file is a JSON object.', []);
}

function* records(text: string, context: ImportContext): Generator<SourceRecord> {
  const doc = parse(text);
  const filings = doc.filings as { recent?: unknown } | undefined;
  const recent = (filings?.recent ?? (Array.isArray(doc.accessionNumber) ? doc : undefined)) as
    | Columns
    | undefined;
  const base = filings?.recent ? 'filings.recent' : '';
  if (!recent || !Array.isArray(recent.accessionNumber))
    throw new ImportError('The file has no filings: neither filings.recent nor top-level column arrays.', [
      `${base || '(top level)'}.accessionNumber: missing`,
    ]);
  const count = recent.accessionNumber.length;
  const ragged = Object.entries(recent)
    .filter(([, column]) => !Array.isArray(column) || column.length !== count)
    .map(
      ([name, column]) =>
        `${base}.${name}: ${Array.isArray(column) ? column.length : 'not an array'}, but accessionNumber has ${count}`,
    );
  if (ragged.length > 0) throw new ImportError('The filings columns are not of one length.', ragged);
  const nameCik = /CIK(\d{10})/i.exec(context.fileName)?.[1];
  const cik = cik10(doc.cik ?? nameCik);
  if (cik === null && context.set.cik === undefined)
    throw new ImportError('The file does not name its filer.', [
      'cik: absent; name the file CIK##########-submissions-###.json or pass --set cik=<CIK>',
    ]);
  const addresses = doc.addresses as { business?: Record<string, unknown> } | undefined;
  const tickers = Array.isArray(doc.tickers) ? doc.tickers : [];
  const column = (name: string, i: number) => {
    const value = recent[name]?.[i];
    return value === '' ? null : value;
  };
  const headers = context.dataset.key === 'filings/headers';
  for (let i = 0; i < count; i++) {
    const where = `${base ? `${base}` : ''}[${i}]`;
    const filer = {
      cik,
      company_name: doc.name ?? null,
      ticker: tickers[0] ?? null,
      sic: doc.sic === '' ? null : (doc.sic ?? null),
    };
    if (headers) {
      yield {
        where,
        values: {
          accession_number: column('accessionNumber', i),
          filed_as_of_date: column('filingDate', i),
          acceptance_datetime: column('acceptanceDateTime', i),
          conformed_submission_type: column('form', i),
          conformed_period_of_report: column('reportDate', i),
          cik,
          company_conformed_name: filer.company_name,
          sic: filer.sic,
          irs_number: doc.ein === '' ? null : (doc.ein ?? null),
          state_of_incorporation: doc.stateOfIncorporation === '' ? null : (doc.stateOfIncorporation ?? null),
          fiscal_year_end: doc.fiscalYearEnd ?? null,
          business_city: addresses?.business?.city ?? null,
          business_state: addresses?.business?.stateOrCountry ?? null,
        },
      };
      continue;
    }
    yield {
      where,
      values: {
        ...filer,
        file_number: column('fileNumber', i),
        accession_number: column('accessionNumber', i),
        filing_date: column('filingDate', i),
        report_date: column('reportDate', i),
        acceptance_datetime: column('acceptanceDateTime', i),
        act: column('act', i),
        form: column('form', i),
        items: column('items', i),
        size: column('size', i),
        is_xbrl: column('isXBRL', i),
        is_inline_xbrl: column('isInlineXBRL', i),
        primary_document: column('primaryDocument', i),
        primary_doc_description: column('primaryDocDescription', i),
      },
    };
  }
}

export const edgarSubmissions: Importer = {
  name: 'edgar-submissions',
  title: 'EDGAR submissions JSON (filings as column arrays)',
  source: 'U.S. Securities and Exchange Commission, EDGAR',
  licence: 'Public domain (U.S. government data)',
  attribution: null,
  targets: [
    { dataset: 'filings/submissions', naturalKey: ['accession_number'] },
    { dataset: 'filings/headers', naturalKey: ['accession_number'] },
  ],
  detect: (head) =>
    (/^\s*\{/.test(head) && /"accessionNumber"\s*:\s*\[/.test(head)) ||
    (/"filings"\s*:/.test(head) && /"cik"\s*:/.test(head)),
  records,
};
