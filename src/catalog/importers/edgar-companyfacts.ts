/**
 * EDGAR companyfacts JSON (data.sec.gov/api/xbrl/companyfacts/CIK##########.json): every XBRL fact a
 * company filed, as taxonomy -> concept -> unit -> facts. One row per fact: concept, unit, period,
 * value, and the filing that reported it (accession, form, fiscal year and period, filing date).
 */
import { ImportError } from '../import-file.ts';
import { cik10 } from './edgar.ts';
import type { Importer, SourceRecord } from './importer.ts';

type Obj = Record<string, unknown>;
const isObject = (value: unknown): value is Obj =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function* records(text: string): Generator<SourceRecord> {
  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ImportError('The JSON file is malformed; nothing was imported.', [(error as Error).message]);
  }
  if (!isObject(doc) || !isObject(doc.facts))
    throw new ImportError('This is not an EDGAR companyfacts document.', ['facts: missing or not an object']);
  const cik = cik10(doc.cik);
  const entityName = typeof doc.entityName === 'string' ? doc.entityName : null;
  for (const [taxonomy, concepts] of Object.entries(doc.facts)) {
    if (!isObject(concepts)) {
      yield { where: `facts.${taxonomy}`, values: {}, problem: 'not an object of concepts' };
      continue;
    }
    for (const [concept, body] of Object.entries(concepts)) {
      const at = `facts.${taxonomy}.${concept}`;
      if (!isObject(body) || !isObject(body.units)) {
        yield { where: at, values: {}, problem: 'has no units' };
        continue;
      }
      for (const [unit, facts] of Object.entries(body.units)) {
        if (!Array.isArray(facts)) {
          yield { where: `${at}.units.${unit}`, values: {}, problem: 'not an array of facts' };
          continue;
        }
        for (const [i, fact] of facts.entries()) {
          const where = `${at}.units.${unit}[${i}]`;
          if (!isObject(fact)) {
            yield { where, values: {}, problem: 'not a fact object' };
            continue;
          }
          const values = {
            cik,
            entity_name: entityName,
            taxonomy,
            concept,
            label: typeof body.label === 'string' ? body.label : null,
            unit,
            period_start: fact.start ?? null,
            period_end: fact.end,
            value: fact.val,
            accession_number: fact.accn,
            fiscal_year: fact.fy ?? null,
            fiscal_period: fact.fp ?? null,
            form: fact.form ?? null,
            filed_date: fact.filed ?? null,
            frame: fact.frame ?? null,
          };
          // One filing reports a fact for one period once: accession, concept, unit and period name it.
          const key = JSON.stringify([fact.accn, taxonomy, concept, unit, values.period_start, fact.end]);
          yield { where, values, key };
        }
      }
    }
  }
}

export const edgarCompanyfacts: Importer = {
  name: 'edgar-companyfacts',
  title: 'EDGAR companyfacts JSON (XBRL facts by taxonomy, concept and unit)',
  source: 'U.S. Securities and Exchange Commission, EDGAR XBRL API',
  licence: 'Public domain (U.S. government data)',
  attribution: null,
  targets: [{ dataset: 'corporate/financial-statements' }],
  detect: (head) => /"facts"\s*:\s*\{/.test(head) && /"entityName"/.test(head),
  records,
};
