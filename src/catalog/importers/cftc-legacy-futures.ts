/**
 * CFTC Commitments of Traders, legacy report, futures only: the annual CSV (one row per market and
 * report week, 129 quoted columns). Columns reach fields through the shipped maps in config/import-maps/.
 */
import cotMap from '../../../config/import-maps/cftc-legacy-futures.json' with { type: 'json' };
import factsMap from '../../../config/import-maps/cftc-legacy-futures-facts.json' with { type: 'json' };
import { cellCountProblem, columnsOf, csvTable, fieldColumns } from './csv-table.ts';
import type { ImportContext, Importer, SourceRecord } from './importer.ts';

const maps: Record<string, { columns: Record<string, string>; constants: Record<string, string> }> = {
  'cftc/legacy_futures-facts': { columns: fieldColumns(factsMap), constants: factsMap.$set },
  'cot/legacy-futures': { columns: fieldColumns(cotMap), constants: {} },
};
/** The CFTC writes "." where a figure does not exist (a change for a market's first report). */
const nullCells = new Set(factsMap.$null);

/** "WHEAT-SRW - CHICAGO BOARD OF TRADE" -> "WHEAT-SRW": the contract, as the CFTC's own API names it. */
function contractName(marketAndExchange: string): string | null {
  const at = marketAndExchange.lastIndexOf(' - ');
  return at > 0 ? marketAndExchange.slice(0, at).trim() : null;
}

function* records(text: string, context: ImportContext): Generator<SourceRecord> {
  const map = maps[context.dataset.key];
  if (!map) throw new Error(`cftc-legacy-futures has no map for ${context.dataset.key}`);
  const table = csvTable(text);
  const columns = columnsOf(table, map.columns);
  for (const { line, cells } of table.rows) {
    const bad = cellCountProblem(line, cells, table.header.length);
    if (bad) {
      yield bad;
      continue;
    }
    const values: Record<string, unknown> = { ...map.constants };
    for (const [field, at] of columns) {
      const cell = cells[at];
      values[field] = cell !== undefined && nullCells.has(cell.trim()) ? null : cell;
    }
    if (context.dataset.fields.some((f) => f.name === 'contract_market_name'))
      values.contract_market_name = contractName(String(values.market_and_exchange_names ?? ''));
    yield { where: `line ${line}`, values };
  }
}

export const cftcLegacyFutures: Importer = {
  name: 'cftc-legacy-futures',
  title: 'CFTC Commitments of Traders, legacy futures-only CSV',
  source: 'U.S. Commodity Futures Trading Commission (CFTC), Commitments of Traders',
  licence: 'Public domain (U.S. government work)',
  attribution: null,
  targets: [
    { dataset: 'cftc/legacy_futures-facts', naturalKey: ['cftc_contract_market_code', 'report_date'] },
    { dataset: 'cot/legacy-futures', naturalKey: ['cftc_contract_market_code', 'report_date'] },
  ],
  detect: (head) =>
    /Market and Exchange Names/i.test(head) && /Noncommercial Positions-Long \(All\)/i.test(head),
  records,
};
