/** The Ledger and Datasets contracts against the embedded default: SqliteStore on a real file. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { csvColumnsKey } from '../src/catalog/csv.ts';
import { sqliteMigrations } from '../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { runDatasetsContract } from './contracts/datasets-contract.ts';
import { runLedgerContract } from './contracts/ledger-contract.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmd-contract-'));
after(() => rmSync(dir, { recursive: true, force: true }));

runLedgerContract('SqliteStore', async () => new SqliteStore(join(dir, 'contract.sqlite')), {
  async tamper(walletId, deltaMicros) {
    const db = new DatabaseSync(join(dir, 'contract.sqlite'));
    try {
      db.prepare('UPDATE wallets SET balance_micros = balance_micros + ? WHERE id = ?').run(
        deltaMicros,
        walletId,
      );
    } finally {
      db.close();
    }
  },
});

runDatasetsContract('SqliteStore', async () => new SqliteStore(join(dir, 'contract.sqlite')));

test('a database at schema version 2 upgrades in place: rows kept, read in order, rendered until reloaded', async () => {
  const path = join(dir, 'v2.sqlite');
  const old = new DatabaseSync(path);
  old.exec(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
  );
  for (const migration of sqliteMigrations.filter((m) => m.version <= 2)) {
    old.exec(migration.sql);
    old.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(migration.version, migration.name);
  }
  const insert = old.prepare('INSERT INTO dataset_rows (dataset, id, t, data) VALUES (?, ?, ?, ?)');
  for (let id = 1; id <= 5; id++)
    insert.run('x/y', id, `2026-01-0${6 - id}`, JSON.stringify({ id, d: 6 - id }));
  old
    .prepare('INSERT INTO dataset_sources (dataset, source, row_count, loaded_at) VALUES (?, ?, ?, ?)')
    .run('x/y', 'import', 5, 0);
  old.close();

  const store = new SqliteStore(path);
  await store.migrate();
  await store.migrate();
  const rows = (
    await store.queryRows({
      dataset: 'x/y',
      filters: {},
      descending: false,
      limit: 10,
      csvColumns: csvColumnsKey(['id', 'd']),
    })
  ).rows;
  assert.deepEqual(
    rows.map((r) => [r.t, r.id, r.csv]),
    [1, 2, 3, 4, 5].map((d) => [`2026-01-0${d}`, 6 - d, null]),
  );
  const page = await store.queryPage({
    dataset: 'x/y',
    filters: {},
    descending: false,
    limit: 10,
    csvColumns: csvColumnsKey(['id', 'd']),
    csvJoin: 'json',
  });
  assert.deepEqual([page.count, page.csv], [5, null], 'a page of rows loaded before lines were stored');
  assert.deepEqual((await store.datasetSource('x/y'))?.rows, 5);
  await store.loadRows('x/y', 'd', [{ id: 1, d: 'a' }], 'import', ['id', 'd']);
  const reloaded = (
    await store.queryRows({
      dataset: 'x/y',
      filters: {},
      descending: false,
      limit: 10,
      csvColumns: csvColumnsKey(['id', 'd']),
    })
  ).rows;
  assert.deepEqual(
    reloaded.map((r) => r.csv),
    ['1,a'],
  );
  await store.close();
});

test('entries and usage events keep their ids through migration 14, and new ones follow them', async () => {
  const path = join(dir, 'v13.sqlite');
  const old = new DatabaseSync(path);
  old.exec(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
  );
  for (const migration of sqliteMigrations.filter((m) => m.version <= 13)) {
    old.exec(migration.sql);
    old.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(migration.version, migration.name);
  }
  old.exec(
    `INSERT INTO wallets (id, account_id, burn_month, balance_micros) VALUES ('wal_old', NULL, '2026-11', 7000)`,
  );
  // Ids with a gap, as AUTOINCREMENT leaves after a rolled-back insert.
  old.exec(`INSERT INTO ledger_entries (id, wallet_id, kind, amount_micros, balance_after_micros, created_at)
    VALUES (4, 'wal_old', 'grant', 10000, 10000, 1), (9, 'wal_old', 'burn', -3000, 7000, 2)`);
  old.exec(`INSERT INTO usage_events (id, request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros,
      cost_micros, burned_micros, outcome, rows, at)
    VALUES (6, 'req_old', 'key_old', NULL, 'wal_old', 'x/y', 'rest', 3000, 3000, 3000, 'charged', 1, 2)`);
  old.close();

  const store = new SqliteStore(path);
  await store.migrate();
  try {
    const debit = await store.debit({
      walletId: 'wal_old',
      amountMicros: 1000n,
      month: '2026-11',
      usage: {
        requestId: 'req_new',
        keyId: 'key_old',
        accountId: null,
        walletId: 'wal_old',
        dataset: 'x/y',
        channel: 'rest',
        listCostMicros: 1000n,
        costMicros: 1000n,
        burnedMicros: 1000n,
        outcome: 'charged',
        rows: 1,
        at: 3,
      },
    });
    assert.deepEqual(debit.ok && [debit.entryId, debit.balanceMicros], ['10', 6000n]);
    const entries = await store.listEntries('wal_old');
    assert.deepEqual(
      entries.map((e) => [e.id, e.kind, e.amountMicros, e.balanceAfterMicros]),
      [
        ['4', 'grant', 10000n, 10000n],
        ['9', 'burn', -3000n, 7000n],
        ['10', 'burn', -1000n, 6000n],
      ],
    );
    const usage = await store.listUsage({ keyId: 'key_old' }, null, 10);
    assert.deepEqual(
      usage.map((u) => [u.id, u.requestId, u.burnedMicros]),
      [
        ['7', 'req_new', 1000n],
        ['6', 'req_old', 3000n],
      ],
    );
    assert.equal(await store.keyBurnedSince('key_old', 0), 4000n);
    assert.deepEqual((await store.auditLedger()).mismatches, []);
  } finally {
    await store.close();
  }
  const after14 = new DatabaseSync(path);
  try {
    const tables = after14
      .prepare("SELECT name, sql FROM sqlite_master WHERE name IN ('ledger_entries', 'usage_events')")
      .all() as { name: string; sql: string }[];
    assert.deepEqual(tables.map((t) => [t.name, /AUTOINCREMENT/.test(t.sql)]).sort(), [
      ['ledger_entries', false],
      ['usage_events', false],
    ]);
    assert.throws(() => after14.exec('DELETE FROM ledger_entries WHERE id = 4'), /append-only/);
  } finally {
    after14.close();
  }
});

test('debits of one group commit (past one statement of rows) answer their own entries, in arrival order', async () => {
  const store = new SqliteStore(join(dir, 'batch.sqlite'));
  await store.migrate();
  try {
    await store.createWallet('wal_batch', null, '2026-11');
    await store.credit({ walletId: 'wal_batch', kind: 'grant', amountMicros: 1000n, at: 1 });
    const debits = Array.from({ length: 45 }, (_, i) =>
      store.debit({
        walletId: 'wal_batch',
        amountMicros: BigInt(i + 1),
        month: '2026-11',
        usage: {
          requestId: `req_${i}`,
          keyId: 'key_batch',
          accountId: null,
          walletId: 'wal_batch',
          dataset: 'x/y',
          channel: 'rest',
          listCostMicros: BigInt(i + 1),
          costMicros: BigInt(i + 1),
          burnedMicros: BigInt(i + 1),
          outcome: 'charged',
          rows: 1,
          at: 2,
        },
      }),
    );
    // 1 + 2 + ... + 44 = 990: the 45th is refused, and writes nothing.
    const results = await Promise.all(debits);
    assert.equal(results.at(-1)?.ok, false);
    const entries = await store.listEntries('wal_batch');
    const burns = entries.filter((e) => e.kind === 'burn');
    assert.deepEqual(
      results.slice(0, 44).map((r) => r.ok && [r.entryId, r.balanceMicros]),
      burns.map((e) => [e.id, e.balanceAfterMicros]),
    );
    assert.deepEqual(
      burns.map((e) => [e.requestId, e.amountMicros]),
      Array.from({ length: 44 }, (_, i) => [`req_${i}`, -BigInt(i + 1)]),
    );
    const usage = await store.listUsage({ keyId: 'key_batch' }, null, 100);
    assert.deepEqual(
      usage.map((u) => u.requestId).reverse(),
      Array.from({ length: 44 }, (_, i) => `req_${i}`),
    );
    assert.deepEqual((await store.auditLedger()).mismatches, []);
  } finally {
    await store.close();
  }
});

test('a page whose rows lack a line all the same (a database edited by hand) offers no lines', async () => {
  const path = join(dir, 'edited.sqlite');
  const store = new SqliteStore(path);
  await store.migrate();
  const columns = ['id', 'd'];
  await store.loadRows(
    'x/y',
    'd',
    [1, 2, 3].map((id) => ({ id, d: `2026-01-0${id}` })),
    'import',
    columns,
  );
  const query = {
    dataset: 'x/y',
    filters: {},
    descending: false,
    limit: 10,
    csvColumns: csvColumnsKey(columns),
  };
  assert.equal(
    (await store.queryPage({ ...query, csvJoin: 'crlf' })).csv,
    '1,2026-01-01\r\n2,2026-01-02\r\n3,2026-01-03',
  );
  const db = new DatabaseSync(path);
  try {
    db.prepare('UPDATE dataset_rows SET csv = NULL WHERE id = 2').run();
    for (const csvJoin of ['json', 'crlf'] as const) {
      assert.equal((await store.queryPage({ ...query, csvJoin })).csv, null, `one line missing, ${csvJoin}`);
    }
    db.prepare('UPDATE dataset_rows SET csv = NULL').run();
    for (const csvJoin of ['json', 'crlf'] as const) {
      assert.equal(
        (await store.queryPage({ ...query, csvJoin })).csv,
        null,
        `every line missing, ${csvJoin}`,
      );
    }
  } finally {
    db.close();
    await store.close();
  }
});

test('WAL checkpoints run on a worker and the serving connection: the WAL stays bounded under writes', async () => {
  const path = join(dir, 'checkpoints.sqlite');
  const store = new SqliteStore(path);
  await store.migrate();
  assert.equal(store.checkpoints?.running, false, 'no worker before the first checkpoint is due');
  const created = await store.createAccount(
    {
      id: 'acc_ckpt',
      email: null,
      passwordHash: 'scrypt$hash',
      walletId: 'wal_ckpt',
      createdAt: 0,
      publicTestStartedAt: null,
    },
    '2026-11',
  );
  await store.credit({ walletId: created.walletId, kind: 'topup', amountMicros: 10n ** 12n, at: 0 });
  const debit = (n: number) =>
    store.debit({
      walletId: created.walletId,
      amountMicros: 1000n,
      month: '2026-11',
      usage: {
        requestId: `req_ckpt_${n}`,
        keyId: null,
        accountId: created.id,
        walletId: created.walletId,
        dataset: 'equities/stock-prices',
        channel: 'rest',
        listCostMicros: 1000n,
        costMicros: 1000n,
        burnedMicros: 1000n,
        outcome: 'charged',
        rows: 10,
        at: 0,
      },
    });
  const commits = 64 * 60;
  // One debit per commit, each awaited: the worker copies while the writer keeps committing.
  for (let n = 0; n < commits; n++) await debit(n);
  const stats = store.checkpoints;
  assert.equal(stats?.running, true);
  // Checkpoints that copied every frame, each letting the WAL start over.
  assert.ok((stats?.checkpoints ?? 0) >= 20, `complete checkpoints: ${stats?.checkpoints}`);
  // The WAL file keeps the largest size it reached: with no checkpoint, or a worker's alone (which never
  // copies every frame while the writer commits, so the WAL never starts over), it holds every commit,
  // over 100 MB here; the cycle keeps it to a few MB, more while a slow disk holds the worker's copy.
  const walBytes = statSync(`${path}-wal`).size;
  assert.ok(walBytes < 32 * 1024 * 1024, `WAL: ${walBytes} bytes`);
  await store.close();
  assert.equal(store.checkpoints?.running, false, 'close stops the worker');
  const reopened = new DatabaseSync(path);
  assert.equal(reopened.prepare('SELECT COUNT(*) AS n FROM ledger_entries').get()?.n, commits + 1);
  reopened.close();
});

test('an in-memory store has no checkpointer', async () => {
  const store = new SqliteStore(':memory:');
  await store.migrate();
  assert.equal(store.checkpoints, null);
  await store.close();
});

test('where no worker may start (the permission model), the store checkpoints as SQLite does', () => {
  const path = join(dir, 'no-worker.sqlite');
  const store = new URL('../src/store/sqlite/sqlite-store.ts', import.meta.url).href;
  const script = `
    import { statSync } from 'node:fs';
    const { SqliteStore } = await import(${JSON.stringify(store)});
    const store = new SqliteStore(${JSON.stringify(path)});
    await store.migrate();
    for (let n = 0; n < 64 * 40; n++) await store.createWallet('wal_' + n, null, '2026-11');
    const stats = store.checkpoints;
    const walBytes = statSync(${JSON.stringify(`${path}-wal`)}).size;
    await store.close();
    console.log(JSON.stringify({ ...stats, walBytes }));`;
  const child = spawnSync(
    process.execPath,
    [
      '--permission',
      '--allow-fs-read=*',
      '--allow-fs-write=*',
      '--disable-warning=ExperimentalWarning',
      '--input-type=module',
      '--eval',
      script,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(child.status, 0, child.stderr);
  const result = JSON.parse(child.stdout) as { running: boolean; checkpoints: number; walBytes: number };
  assert.equal(result.running, false, 'no worker');
  // 2560 commits with no checkpoint at all would hold over 10 MB; SQLite's own keeps about 4 MB.
  assert.ok(result.walBytes < 6 * 1024 * 1024, `WAL: ${result.walBytes} bytes`);
});
