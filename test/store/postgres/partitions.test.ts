/**
 * Dataset rows in a partition per dataset: the migration that moves existing rows into partitions, a
 * replacing load that swaps a new partition in, what a reader sees across the swap, and COPY's text cells.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { postgresMigrations } from '../../../src/store/postgres/migrations.ts';
import { partitionIndexes } from '../../../src/store/postgres/partitions.ts';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.ts';
import { copyText } from '../../../src/store/postgres/sql.ts';
import { freshDatabase, sqlOn } from '../../helpers/backends.ts';

const db = await freshDatabase();
const skip = 'skip' in db ? db.skip : false;
const url = (db as { url: string }).url;
after(async () => {
  if (!('skip' in db)) await db.drop();
});

test('copyText escapes backslash, tab and line ends, and leaves other text as it is', () => {
  assert.equal(copyText('plain "text", é'), 'plain "text", é');
  assert.equal(copyText('a\\b\tc\nd\re'), 'a\\\\b\\tc\\nd\\re');
});

test('a partition is indexed by id, time, natural key and only its layout key columns', () => {
  const statements = partitionIndexes('dataset_rows_p7', 2).join('\n');
  assert.match(statements, /PRIMARY KEY \(id\)/);
  assert.match(statements, /dataset_rows_p7_time ON dataset_rows_p7 \(t, id\)/);
  assert.match(statements, /UNIQUE INDEX IF NOT EXISTS dataset_rows_p7_nk .* WHERE nk IS NOT NULL/);
  assert.match(statements, /\(k2, t, id\) WHERE k2 IS NOT NULL/);
  assert.doesNotMatch(statements, /k3/);
});

describe('PostgreSQL: a partition per dataset', { skip }, () => {
  test('migration 18 moves the rows of every dataset into a partition of its own', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('CREATE SCHEMA before_18; SET search_path = before_18');
      for (const migration of postgresMigrations.filter((m) => m.version < 18))
        await client.query(migration.sql);
      await client.query(`INSERT INTO dataset_rows (dataset, id, t, data, nk, k1)
        SELECT 'a/b', g, '2026-01-0' || g, '{}', 'n' || g, 'S' || g FROM generate_series(1, 5) g`);
      await client.query(`INSERT INTO dataset_rows (dataset, id, t, data) VALUES ('it''s', 1, '2026', '{}')`);
      await client.query((postgresMigrations.find((m) => m.version === 18) as { sql: string }).sql);
      const parts = await client.query('SELECT dataset, relname FROM dataset_partitions ORDER BY dataset');
      assert.deepEqual(
        parts.rows.map((r) => r.dataset),
        ['a/b', "it's"],
      );
      const counted = await client.query(
        `SELECT tableoid::regclass::text AS part, count(*)::int AS n, count(nk)::int AS keyed
           FROM dataset_rows GROUP BY 1 ORDER BY 1`,
      );
      assert.deepEqual(counted.rows, [
        { part: parts.rows[0].relname, n: 5, keyed: 5 },
        { part: parts.rows[1].relname, n: 1, keyed: 0 },
      ]);
      // A dataset's read touches its partition only, through its key column's index.
      const plan = await client.query(
        `EXPLAIN (FORMAT JSON) SELECT * FROM dataset_rows WHERE dataset = 'a/b' AND k1 = 'S2' ORDER BY t DESC LIMIT 1`,
      );
      const text = JSON.stringify(plan.rows[0]);
      assert.ok(text.includes(parts.rows[0].relname));
      assert.ok(!text.includes(parts.rows[1].relname));
    } finally {
      await client.end();
    }
  });

  test('a replacing load swaps a new partition in; a snapshot older than the swap reads the new rows', async () => {
    const store = new PostgresStore(url);
    await store.migrate();
    const rows = (n: number, tag: string) =>
      Array.from({ length: n }, (_, i) => ({ date: `2026-01-${String(i + 1).padStart(2, '0')}`, tag }));
    try {
      await store.loadRows('test/swap', 'date', rows(3, 'old'), 'import');
      const first = await sqlOn(url, "SELECT relname FROM dataset_partitions WHERE dataset = 'test/swap'");
      // A reader whose snapshot is taken before the next load commits, reading after it.
      const reader = new pg.Client({ connectionString: url });
      await reader.connect();
      try {
        await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        await reader.query('SELECT 1');
        await store.loadRows('test/swap', 'date', rows(4, 'new'), 'import');
        const seen = await reader.query(
          "SELECT data->>'tag' AS tag, count(*)::int AS n FROM dataset_rows WHERE dataset = 'test/swap' GROUP BY 1",
        );
        assert.deepEqual(seen.rows, [{ tag: 'new', n: 4 }]);
        await reader.query('COMMIT');
      } finally {
        await reader.end();
      }
      const second = await sqlOn(url, "SELECT relname FROM dataset_partitions WHERE dataset = 'test/swap'");
      assert.notEqual(second[0]?.relname, first[0]?.relname);
      // The replaced partition is gone, not left beside the new one.
      const left = await sqlOn(url, 'SELECT to_regclass($1)::text AS r', [`public.${first[0]?.relname}`]);
      assert.deepEqual(left, [{ r: null }]);
      const page = await store.queryPage({ dataset: 'test/swap', filters: {}, descending: true, limit: 10 });
      assert.equal(page.count, 4);
    } finally {
      await store.close();
    }
  });

  test('a swap held back by another transaction steps aside for readers, then goes through', async () => {
    const store = new PostgresStore(url);
    await store.migrate();
    const rows = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ date: `2026-02-${String(i + 1).padStart(2, '0')}` }));
    const holder = new pg.Client({ connectionString: url });
    const reader = new pg.Client({ connectionString: url });
    await Promise.all([holder.connect(), reader.connect()]);
    try {
      await store.loadRows('test/held', 'date', rows(2), 'import');
      await store.loadRows('test/other', 'date', rows(3), 'import');
      // A long read of another dataset: the swap cannot drop the old partition until it ends.
      await holder.query('BEGIN');
      await holder.query("SELECT count(*) FROM dataset_rows WHERE dataset = 'test/other'");
      let released = 0;
      const load = store.loadRows('test/held', 'date', rows(5), 'import').then(() => Date.now());
      await new Promise((resolve) => setTimeout(resolve, 700));
      // Meanwhile a reader is served: the waiting swap does not keep it queued behind the holder.
      const read = await reader.query(
        "SELECT count(*)::int AS n FROM dataset_rows WHERE dataset = 'test/held'",
      );
      const readAt = Date.now();
      assert.deepEqual(read.rows, [{ n: 2 }]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      released = Date.now();
      await holder.query('COMMIT');
      const loadedAt = await load;
      assert.ok(readAt < released, 'the reader was answered while the holder still held the table');
      assert.ok(loadedAt >= released, 'the swap waited for the holder');
      const after = await reader.query(
        "SELECT count(*)::int AS n FROM dataset_rows WHERE dataset = 'test/held'",
      );
      assert.deepEqual(after.rows, [{ n: 5 }]);
    } finally {
      await Promise.all([holder.end(), reader.end()]);
      await store.close();
    }
  });
});
