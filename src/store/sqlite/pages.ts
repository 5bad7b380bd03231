/** Pages of dataset rows on SQLite: by an index walk, or checked row by row on a read worker. */
import { importIdsOf } from '../import-port.ts';
import type { PageQuery, RowQuery, RowsPage, StoredPage, StoredRow } from '../port.ts';
import { planScan } from '../row-scan.ts';
import { num, optNum, optStr, pageOfRows, rowLimit, str } from '../rows.ts';
import type { SqliteDb } from './db.ts';
import { ROW_COLUMNS, runScan, type ScanJob, type ScanResult, scanJob, walk } from './row-sql.ts';

export class SqlitePages {
  readonly #db: SqliteDb;
  /** Each dataset's entity fields, the order of its key columns (SqliteLoads.syncLayouts). */
  readonly #layoutOf: (dataset: string) => readonly string[];

  constructor(db: SqliteDb, layoutOf: (dataset: string) => readonly string[]) {
    this.#db = db;
    this.#layoutOf = layoutOf;
  }

  /** Whether the stored CSV lines of a dataset were rendered over these columns. */
  #csvCounts(dataset: string, columns: string | undefined): boolean {
    if (columns === undefined) return false;
    return (
      optStr(
        this.#db.get('SELECT csv_columns FROM dataset_sources WHERE dataset = ?', dataset)?.csv_columns,
      ) === columns
    );
  }

  async queryRows(q: RowQuery): Promise<RowsPage> {
    rowLimit(q.limit);
    const plan = planScan(q, this.#layoutOf(q.dataset));
    const withCsv = q.csvColumns !== undefined;
    let found: ScanResult;
    if (plan.capped) {
      found = await this.#scan(scanJob(q, plan));
    } else {
      const page = (): ScanResult => {
        const csv = this.#csvCounts(q.dataset, q.csvColumns);
        const { sql, params } = walk(q, plan, ROW_COLUMNS, q.limit + 1);
        const rows = this.#db.stmt(sql, true).all(...params) as unknown as unknown[][];
        if (!csv) for (const row of rows) row[4] = null;
        const examined = rows.length;
        let next: RowsPage['next'] = null;
        if (rows.length > q.limit) {
          rows.length = q.limit;
          const last = rows.at(-1) as unknown[];
          next = q.limit > 0 ? { t: str(last[1]), id: num(last[0]) } : null;
        }
        return { rows, next, examined };
      };
      // The columns the lines were rendered over and the rows, from one snapshot; one statement alone
      // needs no transaction of its own.
      found = withCsv ? this.#db.tx(page, 'DEFERRED') : page();
    }
    const rows = found.rows.map(([id, t, data, importId, line]) => {
      const row: StoredRow = { id: num(id), t: str(t), json: str(data), importId: optNum(importId) };
      if (withCsv) row.csv = line === null || line === undefined ? null : str(line);
      return row;
    });
    return { rows, next: found.next, examined: found.examined };
  }

  /** A read that checks rows one by one: on a read worker for a file database, else here. */
  #scan(job: ScanJob): Promise<ScanResult> | ScanResult {
    if (this.#db.scans) return this.#db.scans.run(job);
    return this.#db.tx(() => runScan((sql) => this.#db.stmt(sql, true), job), 'DEFERRED');
  }

  /**
   * A page an index serves is one statement that aggregates it: SQLite hands back two strings instead of
   * a JSON text and a CSV line per row, and escapes the lines for JSON itself (`json_quote`) when the
   * page text goes out in a JSON answer. The aggregate takes the rows in the order the ordered walk
   * yields them (an ORDER BY inside group_concat would sort them again and double the statement's cost);
   * the store contract holds the page to queryRows's order. With csvColumns the statement also reads,
   * once, the columns the dataset's lines were rendered over; when they differ the joined lines are
   * dropped, as they are when a row lacks its line all the same (a database edited by hand). A full page
   * also looks past its end by position, in the same statement (one snapshot, and no BEGIN and COMMIT
   * around it). A page that checks rows one by one is built from its rows (`pageOfRows`).
   */
  async queryPage(q: PageQuery): Promise<StoredPage> {
    const plan = planScan(q, this.#layoutOf(q.dataset));
    if (plan.capped) return pageOfRows(q, (query) => this.queryRows(query));
    const withCsv = q.csvColumns !== undefined;
    const joined =
      q.csvJoin === 'json' ? 'json_quote(group_concat(csv, char(10)))' : 'group_concat(csv, char(13, 10))';
    const source = walk(q, plan, `data, import_id${withCsv ? ', csv' : ''}, t, id`, q.limit);
    // A full page looks past its end in the same statement, so in the same snapshot as its rows: the
    // keyset of its last row and whether one follows. Evaluated only when the page is full.
    const tail = q.limit > 0 ? walk(q, plan, 't, id', 2, q.limit - 1) : null;
    const [count, json, csv, lines, renderedOver, importIds, following] = this.#db
      .stmt(
        `SELECT count(*), group_concat(data, ','),
            ${withCsv ? `${joined}, count(csv), (SELECT csv_columns FROM dataset_sources WHERE dataset = ?)` : 'NULL, 0, NULL'},
            group_concat(DISTINCT import_id),
            ${tail ? `CASE WHEN count(*) = ${q.limit} THEN (SELECT json_group_array(json_array(t, id)) FROM (${tail.sql})) END` : 'NULL'}
          FROM (${source.sql})`,
        true,
      )
      .get(...(withCsv ? [q.dataset] : []), ...(tail?.params ?? []), ...source.params) as unknown as [
      number,
      string | null,
      string | null,
      number,
      string | null,
      string | null,
      string | null,
    ];
    let next: StoredPage['next'] = null;
    if (following !== null) {
      const [last, after] = JSON.parse(following) as [string, number][];
      if (last && after) next = { t: str(last[0]), id: num(last[1]) };
    }
    const imports = importIdsOf(importIds === null ? [] : importIds.split(',').map(Number));
    const page: StoredPage = { count, json: json ?? '', next, imports, examined: count + (next ? 1 : 0) };
    if (withCsv) {
      // An empty page has every line there is, whatever they were rendered over.
      const complete = count === 0 || (renderedOver === q.csvColumns && lines === count);
      const text = count === 0 ? '' : (csv ?? '');
      page.csv = !complete ? null : q.csvJoin === 'json' ? text.slice(1, -1) : text;
    }
    return page;
  }
}
