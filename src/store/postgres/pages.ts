/** Pages of dataset rows on PostgreSQL: by an index walk, or checked row by row in one snapshot. */
import { serviceUnavailable } from '../../errors.ts';
import type { PageQuery, RowQuery, RowsPage, StoredPage, StoredRow } from '../port.ts';
import { planScan, SCAN_CAP, type ScanPlan } from '../row-scan.ts';
import type { DbRow } from '../rows.ts';
import { num, optNum, pageOfRows, rowLimit, str } from '../rows.ts';
import type { PgDb } from './db.ts';
import { bindOf, walkSql } from './sql.ts';

export class PgPages {
  readonly #db: PgDb;
  /** Each dataset's entity fields, the order of its key columns (PgLoads.syncLayouts). */
  readonly #layoutOf: (dataset: string) => readonly string[];

  constructor(db: PgDb, layoutOf: (dataset: string) => readonly string[]) {
    this.#db = db;
    this.#layoutOf = layoutOf;
  }

  /** A page query that ran past readTimeoutMs is a 503 of its own: nothing was charged. */
  #translateRead(error: unknown): unknown {
    if ((error as { code?: unknown }).code === '57014')
      return serviceUnavailable(
        `The read took longer than ${this.#db.readTimeoutMs} ms and was stopped; nothing was charged. Narrow it (an entity filter, a date range) or retry.`,
      );
    return this.#db.translate(error);
  }

  /** One page as text, built from its rows. */
  queryPage(q: PageQuery): Promise<StoredPage> {
    return pageOfRows(q, (query) => this.queryRows(query));
  }

  async queryRows(q: RowQuery): Promise<RowsPage> {
    rowLimit(q.limit);
    const plan = planScan(q, this.#layoutOf(q.dataset));
    const withCsv = q.csvColumns !== undefined;
    let found: { rows: DbRow[]; next: RowsPage['next']; examined: number };
    if (plan.capped) {
      found = await this.#db.scans.run(() => this.#scan(q, plan));
    } else {
      const values: unknown[] = [q.dataset];
      const source = walkSql(q, plan, 'id, t, data, import_id, csv', q.limit + 1, values);
      // The stored lines count only if they were rendered over the columns asked for; one statement, so
      // the check and the rows come from the same snapshot.
      const csv = withCsv
        ? `CASE WHEN (SELECT csv_columns FROM dataset_sources WHERE dataset = $1) = ${bindOf(values, q.csvColumns)} THEN w.csv END`
        : 'NULL';
      const text = `SELECT w.id, w.t, w.data::text AS json, w.import_id, ${csv} AS csv FROM (${source}) w`;
      let rows: DbRow[];
      try {
        rows = (await this.#db.readPool.query<DbRow>(this.#db.pageStatement(text, values))).rows;
      } catch (error) {
        throw this.#translateRead(error);
      }
      this.#db.answered();
      const examined = rows.length;
      let next: RowsPage['next'] = null;
      if (rows.length > q.limit) {
        rows.length = q.limit;
        const last = rows.at(-1);
        if (last) next = { t: str(last.t), id: num(last.id) };
      }
      found = { rows, next, examined };
    }
    const rows = found.rows.map((r) => {
      const row: StoredRow = { id: num(r.id), t: str(r.t), json: str(r.json), importId: optNum(r.import_id) };
      if (withCsv) row.csv = r.csv === null || r.csv === undefined ? null : str(r.csv);
      return row;
    });
    return { rows, next: found.next, examined: found.examined };
  }

  /**
   * A read that checks rows one by one, in one read-only snapshot: the first limit + 1 matches among the
   * first SCAN_CAP rows the index yields, then how far the walk went (see sqlite/row-sql.ts's runScan).
   */
  async #scan(
    q: RowQuery,
    plan: ScanPlan,
  ): Promise<{ rows: DbRow[]; next: RowsPage['next']; examined: number }> {
    return this.#db.tx(
      async (client) => {
        const values: unknown[] = [q.dataset];
        const cols = ['id, t, data, import_id, csv', ...plan.keyed.map((f) => f.column)].join(', ');
        const source = walkSql(q, plan, cols, SCAN_CAP, values);
        const check: string[] = [];
        for (const { column, keys } of plan.keyed)
          check.push(`s.${column} = ANY(${bindOf(values, keys)}::text[])`);
        for (const { field, values: accepted } of plan.json) {
          // The field name is a bound parameter of -> and ->>, never spliced into SQL. Text values (and
          // booleans, as true/false) compare with the stored JSON text.
          const name = bindOf(values, field);
          // A number matches by its JSON text: the stores write rows with JSON.stringify, whose text of a
          // double is unique to it, so equal text is equal value, and the row's JSON is parsed once, not
          // three times (the type is looked at only when the text matched; CASE keeps that order).
          check.push(
            typeof accepted[0] === 'number'
              ? `CASE WHEN s.data ->> ${name} = ANY(${bindOf(
                  values,
                  (accepted as number[]).map((n) => JSON.stringify(n)),
                )}::text[])
                     THEN json_typeof(s.data -> ${name}) = 'number' ELSE false END`
              : `s.data ->> ${name} = ANY(${bindOf(values, accepted)}::text[])`,
          );
        }
        const csv =
          q.csvColumns === undefined
            ? 'NULL'
            : `CASE WHEN (SELECT csv_columns FROM dataset_sources WHERE dataset = $1) = ${bindOf(values, q.csvColumns)} THEN s.csv END`;
        const hits = (
          await client.query<DbRow>(
            this.#db.pageStatement(
              `SELECT s.id, s.t, s.data::text AS json, s.import_id, ${csv} AS csv FROM (${source}) s
                  WHERE ${check.join(' AND ')} LIMIT ${rowLimit(q.limit) + 1}`,
              values,
            ),
          )
        ).rows;
        const keysetValues: unknown[] = [q.dataset];
        const keyset = walkSql(q, plan, 't, id', SCAN_CAP, keysetValues);
        let result: { rows: DbRow[]; next: RowsPage['next']; examined: number };
        if (q.limit > 0 && hits.length > q.limit) {
          const probe = hits[q.limit] as DbRow;
          const t = bindOf(keysetValues, str(probe.t));
          const id = bindOf(keysetValues, num(probe.id));
          const counted = await client.query<DbRow>(
            `SELECT count(*) AS n FROM (${keyset}) k WHERE (k.t, k.id) ${q.descending ? '>=' : '<='} (${t}, ${id}::int)`,
            keysetValues,
          );
          hits.length = q.limit;
          const last = hits.at(-1) as DbRow;
          result = {
            rows: hits,
            next: { t: str(last.t), id: num(last.id) },
            examined: num(counted.rows[0]?.n),
          };
        } else {
          const counted = await client.query<DbRow>(`SELECT count(*) AS n FROM (${keyset}) k`, keysetValues);
          const examined = num(counted.rows[0]?.n);
          let next: RowsPage['next'] = null;
          if (examined >= SCAN_CAP) {
            const lastValues: unknown[] = [q.dataset];
            const lastSql = walkSql(q, plan, 't, id', 1, lastValues, SCAN_CAP - 1);
            const last = (await client.query<DbRow>(lastSql, lastValues)).rows[0];
            if (last) next = { t: str(last.t), id: num(last.id) };
          }
          result = { rows: q.limit > 0 ? hits : [], next, examined: q.limit > 0 ? examined : 0 };
        }
        return result;
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
      { pool: this.#db.readPool, translate: (error) => this.#translateRead(error) },
    );
  }
}
