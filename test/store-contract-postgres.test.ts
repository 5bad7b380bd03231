/**
 * The Store contract against PostgresStore on a fresh database, plus what only PostgreSQL can show:
 * the database itself refuses an overdraft and any change to a ledger entry, and several processes
 * may migrate at once.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { AppError } from '../src/errors.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { runDatasetsContract } from './contracts/datasets-contract.ts';
import { runLedgerContract } from './contracts/ledger-contract.ts';
import { freshDatabase, sqlOn } from './helpers/backends.ts';

const db = await freshDatabase();
const skip = 'skip' in db ? db.skip : false;
after(async () => {
  if (!('skip' in db)) await db.drop();
});

runLedgerContract('PostgresStore', async () => new PostgresStore((db as { url: string }).url), {
  skip,
  async tamper(walletId, deltaMicros) {
    await sqlOn(
      (db as { url: string }).url,
      'UPDATE wallets SET balance_micros = balance_micros + $1 WHERE id = $2',
      [deltaMicros.toString(), walletId],
    );
  },
});

runDatasetsContract('PostgresStore', async () => new PostgresStore((db as { url: string }).url), { skip });

describe('PostgresStore: what the database itself guarantees', { skip }, () => {
  test('five stores migrating one empty database at once apply each migration exactly once', async () => {
    const url = (db as { url: string }).url;
    const stores = Array.from({ length: 5 }, () => new PostgresStore(url));
    await Promise.all(stores.map((s) => s.migrate()));
    await Promise.all(stores.map((s) => s.close()));
    const rows = await sqlOn(
      url,
      'SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version',
    );
    assert.ok(rows.length >= 1);
    assert.ok(rows.every((r) => r.n === 1));
  });

  test('the batch function of migration 6 answers nodes of the previous version with figures they can read', async () => {
    const url = (db as { url: string }).url;
    const store = new PostgresStore(url);
    await store.migrate();
    await store.createWallet('wal_roll', null, '2026-12');
    await store.credit({ walletId: 'wal_roll', kind: 'topup', amountMicros: 100n, at: 1 });
    await store.close();
    // As a node of the previous version calls it: a wallet already in December, two November debits.
    const rows = await sqlOn(
      url,
      `SELECT o_index, o_balance::text AS balance, o_month_micros::text AS month
         FROM tmd_debit_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        ['wal_roll', 'wal_roll'],
        ['2', '3'],
        ['2026-11', '2026-11'],
        ['1', '2'],
        ['r1', 'r2'],
        [null, null],
        [null, null],
        ['x/y', 'x/y'],
        ['rest', 'rest'],
        ['2', '3'],
        ['2', '3'],
        ['2', '3'],
        ['charged', 'charged'],
        [1, 1],
      ],
    );
    assert.deepEqual(
      rows.map((r) => [r.o_index, r.balance, r.month]),
      [
        [1, '98', '0'],
        [2, '95', '0'],
      ],
      'no null a previous version would fail to read after the charge; 0 for "not the wallet month"',
    );
    const wallet = await sqlOn(
      url,
      "SELECT burn_month, burn_month_micros::text AS m FROM wallets WHERE id = 'wal_roll'",
    );
    assert.deepEqual(wallet[0], { burn_month: '2026-12', m: '0' }, 'December is left as it was');
  });

  test('the CHECK constraint refuses a negative balance; ledger entries cannot be updated or deleted', async () => {
    const url = (db as { url: string }).url;
    const store = new PostgresStore(url);
    await store.migrate();
    await store.createWallet('wal_check', null, '2026-11');
    await store.credit({ walletId: 'wal_check', kind: 'topup', amountMicros: 5n, at: 1 });
    await store.close();
    await assert.rejects(
      sqlOn(url, "UPDATE wallets SET balance_micros = -1 WHERE id = 'wal_check'"),
      /check constraint/,
    );
    await assert.rejects(
      sqlOn(url, "UPDATE ledger_entries SET amount_micros = 6 WHERE wallet_id = 'wal_check'"),
      /append-only/,
    );
    await assert.rejects(
      sqlOn(url, "DELETE FROM ledger_entries WHERE wallet_id = 'wal_check'"),
      /append-only/,
    );
    const types = await sqlOn(
      url,
      `SELECT column_name, data_type FROM information_schema.columns
        WHERE column_name LIKE '%micros' AND table_schema = 'public'`,
    );
    assert.ok(types.length >= 8);
    assert.ok(
      types.every((t) => t.data_type === 'bigint'),
      'money is bigint, never float',
    );
  });
});

describe('PostgresStore: page queries are bounded in time', { skip }, () => {
  test('a page query past readTimeoutMs is a 503 that names the read, and the next one is served', async () => {
    const url = (db as { url: string }).url;
    const store = new PostgresStore(url, { readTimeoutMs: 200 });
    await store.migrate();
    await store.loadRows('test/slow', 'date', [{ date: '2026-01-01', symbol: 'A' }], 'import');
    // Another session holds the rows table: the page query waits on its lock until its timeout.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE dataset_rows IN ACCESS EXCLUSIVE MODE');
      const query = { dataset: 'test/slow', filters: {}, descending: true, limit: 5 };
      await assert.rejects(store.queryPage(query), (error: unknown) => {
        assert.ok(error instanceof AppError);
        assert.equal(error.code, 'service_unavailable');
        assert.match(error.message, /took longer than 200 ms and was stopped; nothing was charged/);
        return true;
      });
      await assert.rejects(store.queryRows({ ...query, filters: { symbol: ['A'] } }), {
        code: 'service_unavailable',
      });
      await holder.query('ROLLBACK');
      assert.equal((await store.queryPage(query)).count, 1);
      // The ledger's own statements are not on the read pool: they keep their own timeout.
      await store.createWallet('wal_slow', null, '2026-01');
      assert.ok(await store.getWallet('wal_slow'));
    } finally {
      await holder.end();
      await store.close();
    }
  });
});
