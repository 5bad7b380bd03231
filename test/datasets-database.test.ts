/**
 * The two ports on two databases: DATASETS_DATABASE_URL holds the rows, DATABASE_URL the ledger. A read
 * finds its rows in the one and is charged in the other; neither holds what belongs to the other.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { parseEnv } from '../src/config.ts';
import { buildDeps } from '../src/deps.ts';
import { assertLedgerBalanced, bearer, startServer, walletAccount } from './helpers/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmd-rows-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function count(file: string, sql: string): number {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return Number((db.prepare(sql).get() as { n: number }).n);
  } finally {
    db.close();
  }
}

test('rows in DATASETS_DATABASE_URL, the charge in DATABASE_URL, an import into the rows database', async () => {
  const rowsFile = join(dir, 'rows.sqlite');
  const server = await startServer({ env: { DATASETS_DATABASE_URL: rowsFile } });
  try {
    const { key, account } = await walletAccount(server, 100);
    const res = await server.request('GET', '/api/v1/data/equities/stock-prices?symbol=AAPL&limit=3', {
      headers: bearer(key),
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.data.length, 3);
    assert.ok(res.json.data.every((r: { symbol: string }) => r.symbol === 'AAPL'));
    await server.deps.operator.importRows('equities/stock-prices', [
      { symbol: 'ZZZ', exchange: 'NYSE', mic: 'XNYS', date: '2026-01-02', close: 1 },
    ]);
    const ledgerFile = join(server.dir, 'tmd.sqlite');
    assert.ok(
      count(rowsFile, 'SELECT count(*) AS n FROM dataset_rows') >= 1,
      'the rows are in their database',
    );
    assert.equal(
      count(rowsFile, "SELECT count(*) AS n FROM dataset_rows WHERE k1 = 'ZZZ'"),
      1,
      'the import went there, keyed',
    );
    assert.equal(
      count(ledgerFile, 'SELECT count(*) AS n FROM dataset_rows'),
      0,
      'none in the ledger database',
    );
    assert.equal(
      count(rowsFile, 'SELECT count(*) AS n FROM ledger_entries'),
      0,
      'no money in the rows database',
    );
    const burns = (await server.deps.store.listEntries(account.walletId)).filter((e) => e.kind === 'burn');
    assert.equal(burns.length, 1);
    await assertLedgerBalanced(server);
    assert.equal((await server.request('GET', '/readyz')).status, 200);
  } finally {
    await server.close();
  }
});

test('DATASETS_READ_URL needs the datasets on PostgreSQL: a start with SQLite rows says so', async () => {
  const env = parseEnv({
    DATABASE_URL: join(dir, 'ledger.sqlite'),
    DATASETS_READ_URL: 'postgres://replica.invalid:5432/tmd',
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
    DATA_DIR: dir,
  });
  await assert.rejects(buildDeps({ env }), /DATASETS_READ_URL needs the datasets on PostgreSQL/);
});
