/**
 * SEC EDGAR's filings index into `filings/submissions`, one row per accession number:
 *
 * - the daily form index (`Archives/edgar/daily-index/<year>/QTR<q>/form.<yyyymmdd>.idx`) for each
 *   business day after the cursor, within the current quarter or the last 31 days;
 * - for older days (a backfill), the quarter's full form index (`full-index/<year>/QTR<q>/form.idx`),
 *   asked again with the validators of its last answer, so an unchanged quarter is a 304 and nothing is
 *   re-read; a quarter EDGAR does not have (its S3 store answers 403 AccessDenied) is nothing there;
 * - with option `ciks`, each filer's submissions JSON (`data.sec.gov/submissions/CIK##########.json`
 *   and the older pages its `filings.files` names), also asked conditionally, which adds what the
 *   indexes lack: ticker, SIC, file number, report date, acceptance time, act, items, size, XBRL flags.
 *
 * An index lists a filing once per entity it concerns (a Form 4 under its issuer and its reporting
 * owner): the first line of an accession number names the row, as EDGAR's order has it; a filer's
 * submissions, read after the indexes, name the row by that filer (and are read whole, not
 * conditionally, in a run whose index rows replaced the richer ones). CIKs are stored as ten digits, as
 * the `edgar-submissions` importer stores them. EDGAR's fair-access rule: at most 10 requests a
 * second, with a User-Agent naming the operator.
 */
import { cik10 } from '../importers/edgar.ts';
import type { SourceRecord } from '../importers/importer.ts';
import {
  addDays,
  type Chunk,
  type Cursor,
  json,
  minDate,
  type RunContext,
  type Source,
  SourceError,
  type SourceResponse,
} from './source.ts';

const DATASET = 'filings/submissions';
const NATURAL_KEY = ['accession_number'] as const;
/** EDGAR's first quarter online. */
const EARLIEST = '1993-01-01';
/** Days a daily index is asked for even when they fall in the previous quarter. */
const DAILY_DAYS = 31;
/** Records a chunk at most: a quarter's full index is a few hundred thousand lines. */
const CHUNK = 50_000;
/** An index or page that is not there: S3 answers 403 AccessDenied, the web server 404. */
const MISSING = [403, 404] as const;

export interface IndexLine {
  form: string;
  companyName: string;
  cik: string;
  dateFiled: string;
  fileName: string;
  accession: string;
  line: number;
}

/** A line's right-hand columns: CIK, date filed (YYYYMMDD or YYYY-MM-DD), file name. */
const TAIL = /^(.*?)\s+(\d{1,10})\s+(\d{8}|\d{4}-\d{2}-\d{2})\s+(\S+)\s*$/;
const ACCESSION = /(\d{10})-?(\d{2})-?(\d{6})\.txt$/;

/**
 * An EDGAR index file (form.idx or company.idx, daily or full): each line below the dashes. The
 * columns are fixed-width, but a form type longer than its column (`SCHEDULE 13G/A`) pushes the rest
 * right, so the CIK, date and file name are read from the right and the first two columns split at the
 * header's position, or at the first space after it when the first column overflows.
 */
export function parseIndex(text: string): {
  lines: IndexLine[];
  problems: { line: number; problem: string }[];
} {
  const rows = text.split(/\r?\n/);
  const dashes = rows.findIndex((row) => /^-{20,}\s*$/.test(row));
  if (dashes < 0) throw new SourceError('not an EDGAR index: no line of dashes under the header');
  const header = rows.slice(0, dashes).find((row) => /Form Type/.test(row) && /Company Name/.test(row)) ?? '';
  const formFirst = header.indexOf('Form Type') < header.indexOf('Company Name');
  const split = formFirst ? header.indexOf('Company Name') : header.indexOf('Form Type');
  if (split <= 0) throw new SourceError('not an EDGAR index: no "Form Type" and "Company Name" header');
  const lines: IndexLine[] = [];
  const problems: { line: number; problem: string }[] = [];
  for (let i = dashes + 1; i < rows.length; i++) {
    const row = rows[i] ?? '';
    if (row.trim() === '') continue;
    const tail = TAIL.exec(row);
    const accession = tail ? ACCESSION.exec(tail[4] ?? '') : null;
    if (!tail || !accession) {
      problems.push({ line: i + 1, problem: 'not a line of the index (CIK, date filed, file name)' });
      continue;
    }
    const head = tail[1] ?? '';
    let at = split;
    if (head.length > split && head[split - 1] !== ' ') {
      const space = head.indexOf(' ', split - 1);
      at = space < 0 ? head.length : space;
    }
    const first = head.slice(0, at).trim();
    const second = head.slice(at).trim();
    const date = tail[3] ?? '';
    lines.push({
      form: formFirst ? first : second,
      companyName: formFirst ? second : first,
      cik: tail[2] ?? '',
      dateFiled: date.length === 8 ? `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6)}` : date,
      fileName: tail[4] ?? '',
      accession: `${accession[1]}-${accession[2]}-${accession[3]}`,
      line: i + 1,
    });
  }
  return { lines, problems };
}

/**
 * The first line of each accession number, as rows of `filings/submissions`. Every line is kept: an
 * index lists what EDGAR disseminated that day (or quarter), with some filings dated days or months
 * before.
 */
function indexRecords(text: string, url: string): SourceRecord[] {
  const { lines, problems } = parseIndex(text);
  const seen = new Set<string>();
  const records: SourceRecord[] = problems.map((p) => ({
    where: `${url} line ${p.line}`,
    values: {},
    problem: p.problem,
  }));
  for (const line of lines) {
    if (seen.has(line.accession)) continue;
    seen.add(line.accession);
    records.push({
      where: `${url} line ${line.line}`,
      values: {
        cik: cik10(line.cik),
        company_name: line.companyName,
        accession_number: line.accession,
        filing_date: line.dateFiled,
        form: line.form,
      },
    });
  }
  return records;
}

const quarterOf = (date: string) => Math.floor((Number(date.slice(5, 7)) - 1) / 3) + 1;
const quarterStart = (date: string) =>
  `${date.slice(0, 4)}-${String((quarterOf(date) - 1) * 3 + 1).padStart(2, '0')}-01`;
/** The first day of the next quarter. */
const nextQuarter = (date: string) => {
  const q = quarterOf(date);
  return q === 4
    ? `${Number(date.slice(0, 4)) + 1}-01-01`
    : `${date.slice(0, 4)}-${String(q * 3 + 1).padStart(2, '0')}-01`;
};
const isWeekday = (date: string) => {
  const day = new Date(`${date}T00:00:00Z`).getUTCDay();
  return day !== 0 && day !== 6;
};
const maxDate = (a: string, b: string) => (a > b ? a : b);

interface Validators {
  etag?: string;
  modified?: string;
}

function validatorsOf(cursor: Cursor, key: string): Validators {
  const value = cursor[key];
  return typeof value === 'string' ? (JSON.parse(value) as Validators) : {};
}

function validatorsFrom(response: SourceResponse): string {
  return JSON.stringify({
    ...(response.etag ? { etag: response.etag } : {}),
    ...(response.lastModified ? { modified: response.lastModified } : {}),
  });
}

/** Chunks of at most CHUNK records; only the last carries the new cursor (a broken run asks again). */
function* chunks(records: SourceRecord[], url: string, before: Cursor, after: Cursor): Generator<Chunk> {
  for (let at = 0; at === 0 || at < records.length; at += CHUNK) {
    const last = at + CHUNK >= records.length;
    yield {
      dataset: DATASET,
      naturalKey: NATURAL_KEY,
      url,
      cursor: last ? after : before,
      records: records.slice(at, at + CHUNK),
    };
  }
}

type Columns = Record<string, unknown[] | undefined>;

interface Submissions {
  cik?: string;
  name?: string;
  tickers?: string[];
  sic?: string;
  filings?: { recent?: Columns; files?: { name: string }[] };
}

/** A submissions page's filings (filings.recent, or the top-level columns of an older page) as rows. */
function submissionRecords(filer: Submissions, columns: Columns, url: string, base: string): SourceRecord[] {
  const accessions = columns.accessionNumber ?? [];
  const at = (name: string, i: number) => {
    const value = columns[name]?.[i];
    return value === '' ? null : (value ?? null);
  };
  return accessions.map((_, i) => ({
    where: `${url} ${base}[${i}]`,
    values: {
      cik: cik10(filer.cik),
      company_name: filer.name ?? null,
      ticker: filer.tickers?.[0] ?? null,
      sic: filer.sic === '' ? null : (filer.sic ?? null),
      file_number: at('fileNumber', i),
      accession_number: at('accessionNumber', i),
      filing_date: at('filingDate', i),
      report_date: at('reportDate', i),
      acceptance_datetime: at('acceptanceDateTime', i),
      act: at('act', i),
      form: at('form', i),
      items: at('items', i),
      size: at('size', i),
      is_xbrl: at('isXBRL', i),
      is_inline_xbrl: at('isInlineXBRL', i),
      primary_document: at('primaryDocument', i),
      primary_doc_description: at('primaryDocDescription', i),
    },
  }));
}

function ciksOption(options: RunContext['options']): string[] {
  const ciks = options.ciks ?? [];
  if (!Array.isArray(ciks) || ciks.some((c) => !/^\d{1,10}$/.test(String(c))))
    throw new SourceError('sec-index option "ciks": a list of CIKs (digits, e.g. "320193" or "0000320193")');
  return ciks.map((c) => cik10(c) as string);
}

async function* run(context: RunContext): AsyncIterable<Chunk> {
  const ciks = ciksOption(context.options);
  const dataUrl =
    typeof context.options.data_url === 'string'
      ? context.options.data_url.replace(/\/$/, '')
      : context.baseUrl === 'https://www.sec.gov'
        ? 'https://data.sec.gov'
        : context.baseUrl;
  const archives = `${context.baseUrl}/Archives/edgar`;
  const day = typeof context.cursor.day === 'string' ? context.cursor.day : null;
  const from =
    context.since ??
    (context.backfill ? EARLIEST : day !== null ? addDays(day, 1) : addDays(context.today, -30));
  // Days of the current quarter, and at least the last 31, from the daily indexes; older ones from the full.
  const dailyFrom = maxDate(from, minDate(quarterStart(context.today), addDays(context.today, -DAILY_DAYS)));
  let cursor: Cursor = { ...context.cursor };
  /**
   * Whether this run wrote index rows: they replace a filer's richer rows from its submissions, so the
   * submissions are then read whole again (not asked conditionally) to put them back.
   */
  let indexed = false;

  // Quarters with days before the daily indexes': each read whole, from its full index.
  for (let q = quarterStart(from); from < dailyFrom && q < dailyFrom; q = nextQuarter(q)) {
    const key = `full:${q.slice(0, 4)}Q${quarterOf(q)}`;
    const url = `${archives}/full-index/${q.slice(0, 4)}/QTR${quarterOf(q)}/form.idx`;
    const seen = validatorsOf(cursor, key);
    const response = await context.http.get(url, {
      etag: seen.etag ?? null,
      lastModified: seen.modified ?? null,
      accept: MISSING,
    });
    // A quarter EDGAR does not have is nothing there: no rows, the cursor stays.
    if ((MISSING as readonly number[]).includes(response.status)) continue;
    const through = minDate(addDays(nextQuarter(q), -1), addDays(dailyFrom, -1));
    const before = cursor;
    cursor = {
      ...cursor,
      day: maxDate(typeof cursor.day === 'string' ? cursor.day : '', through),
      [key]: response.status === 304 ? (cursor[key] ?? null) : validatorsFrom(response),
    };
    // Unchanged since it was last read: nothing to read again.
    if (response.status === 304) {
      yield { dataset: DATASET, naturalKey: NATURAL_KEY, url, cursor, records: [] };
      continue;
    }
    const records = indexRecords(response.body, url);
    indexed ||= records.length > 0;
    yield* chunks(records, url, before, cursor);
  }

  for (let date = dailyFrom; date <= context.today; date = addDays(date, 1)) {
    if (!isWeekday(date)) continue;
    const compact = date.replaceAll('-', '');
    const url = `${archives}/daily-index/${date.slice(0, 4)}/QTR${quarterOf(date)}/form.${compact}.idx`;
    const response = await context.http.get(url, { accept: MISSING });
    // A holiday, or a day EDGAR has not published yet: asked again next run until a later day is read.
    if ((MISSING as readonly number[]).includes(response.status)) continue;
    cursor = { ...cursor, day: maxDate(typeof cursor.day === 'string' ? cursor.day : '', date) };
    const records = indexRecords(response.body, url);
    indexed ||= records.length > 0;
    yield { dataset: DATASET, naturalKey: NATURAL_KEY, url, cursor, records };
  }

  for (const cik of ciks) {
    const url = `${dataUrl}/submissions/CIK${cik}.json`;
    const key = `submissions:${cik}`;
    const seen: Validators = indexed ? {} : validatorsOf(cursor, key);
    const response = await context.http.get(url, {
      etag: seen.etag ?? null,
      lastModified: seen.modified ?? null,
    });
    // Unchanged since it was last read: its older pages are too.
    if (response.status === 304) continue;
    const filer = json<Submissions>(response);
    if (!Array.isArray(filer.filings?.recent?.accessionNumber))
      throw new SourceError(`${url}: no filings.recent in the answer`);
    // The filer's validators are stored with its last page: a run broken off reads them all again.
    yield {
      dataset: DATASET,
      naturalKey: NATURAL_KEY,
      url,
      cursor,
      records: submissionRecords(filer, filer.filings?.recent ?? {}, url, 'filings.recent'),
    };
    for (const file of filer.filings?.files ?? []) {
      if (!/^CIK\d{10}-submissions-\d{3}\.json$/.test(file.name))
        throw new SourceError(`${url}: filings.files names "${file.name}", not a submissions page`);
      const pageUrl = `${dataUrl}/submissions/${file.name}`;
      const pageKey = `submissions:${file.name.replace(/^CIK|\.json$/g, '')}`;
      const pageSeen: Validators = indexed ? {} : validatorsOf(cursor, pageKey);
      const page = await context.http.get(pageUrl, {
        etag: pageSeen.etag ?? null,
        lastModified: pageSeen.modified ?? null,
      });
      if (page.status === 304) continue;
      const columns = json<Columns>(page);
      if (!Array.isArray(columns.accessionNumber))
        throw new SourceError(`${pageUrl}: no accessionNumber column in the page`);
      cursor = { ...cursor, [pageKey]: validatorsFrom(page) };
      yield {
        dataset: DATASET,
        naturalKey: NATURAL_KEY,
        url: pageUrl,
        cursor,
        records: submissionRecords(filer, columns, pageUrl, ''),
      };
    }
    cursor = { ...cursor, [key]: validatorsFrom(response) };
    yield { dataset: DATASET, naturalKey: NATURAL_KEY, url, cursor, records: [] };
  }
}

export const secIndex: Source = {
  id: 'sec-index',
  title: 'SEC EDGAR filings index (daily and full form indexes, submissions JSON)',
  publisher: 'U.S. Securities and Exchange Commission',
  licence: 'Public domain (U.S. government work)',
  datasets: [DATASET],
  baseUrl: 'https://www.sec.gov',
  perSecond: 10,
  // EDGAR publishes a day's index in the evening (Eastern time); read it the next morning.
  schedule: '30 6 * * 2-6',
  run,
};
