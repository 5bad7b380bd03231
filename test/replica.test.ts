/**
 * DATASETS_DATABASE_URL naming a hot standby: pages are read from the standby, imports and debits go to
 * the primary (DATABASE_URL), and a read lags the primary by the standby's replay only. Against a real
 * primary and a real standby streaming from it (test/helpers/replica.ts).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { sqlOn } from './helpers/backends.ts';
import { replicatedPair } from './helpers/replica.ts';
import { stockPriceRow } from './helpers/rows.ts';
import { assertLedgerBalanced, bearer, startServer, walletAccount } from './helpers/server.ts';

const pair = replicatedPair();
const skip = 'skip' in pair ? pair.skip : false;
after(() => {
  if (!('skip' in pair)) pair.stop();
});

/** Waits until the standby has replayed everything the primary has written so far. */
async function caughtUp(primaryUrl: string, standbyUrl: string): Promise<void> {
  const [{ lsn }] = (await sqlOn(primaryUrl, 'SELECT pg_current_wal_lsn()::text AS lsn')) as [
    { lsn: string },
  ];
  for (let i = 0; i < 200; i++) {
    const [{ done }] = (await sqlOn(standbyUrl, 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [
      lsn,
    ])) as [{ done: boolean }];
    if (done) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the standby did not catch up in 10 s');
}

test('a hot standby as DATASETS_DATABASE_URL: reads from it, imports and debits on the primary', {
  skip,
}, async () => {
  if ('skip' in pair) return;
  const { primaryUrl, standbyUrl } = pair;
  const server = await startServer({ env: { DATABASE_URL: primaryUrl, DATASETS_DATABASE_URL: standbyUrl } });
  try {
    const { key, account } = await walletAccount(server, 100);
    await server.deps.operator.importRows(
      'equities/stock-prices',
      [stockPriceRow('AAPL', '2026-01-05', 10)],
      {
        mode: 'replace',
      },
    );
    await caughtUp(primaryUrl, standbyUrl);
    const read = () =>
      server.request('GET', '/api/v1/data/equities/stock-prices?symbol=AAPL&fields=date,close', {
        headers: bearer(key),
      });
    const first = await read();
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.json.data, [{ date: '2026-01-05', close: 10 }]);
    const sessions = await sqlOn(
      standbyUrl,
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'token-metered-data-reads'",
    );
    assert.ok((sessions[0]?.n as number) > 0, 'the page was read on the standby');

    // With the standby's replay paused, an import on the primary is not seen yet: the old rows, whole.
    await sqlOn(standbyUrl, 'SELECT pg_wal_replay_pause()');
    await server.deps.operator.importRows('equities/stock-prices', [
      stockPriceRow('AAPL', '2026-01-05', 11),
      stockPriceRow('AAPL', '2026-01-06', 12),
    ]);
    const lagging = await read();
    assert.deepEqual(lagging.json.data, [{ date: '2026-01-05', close: 10 }]);
    await sqlOn(standbyUrl, 'SELECT pg_wal_replay_resume()');
    await caughtUp(primaryUrl, standbyUrl);
    const current = await read();
    assert.deepEqual(current.json.data, [
      { date: '2026-01-06', close: 12 },
      { date: '2026-01-05', close: 11 },
    ]);

    // Every read was charged on the primary, where the standby cannot write.
    const burns = (await server.deps.store.listEntries(account.walletId)).filter((e) => e.kind === 'burn');
    assert.equal(burns.length, 3);
    await assertLedgerBalanced(server);
    const client = new pg.Client({ connectionString: standbyUrl });
    await client.connect();
    try {
      await assert.rejects(client.query("INSERT INTO import_runs (dataset) VALUES ('x')"), /read-only/);
    } finally {
      await client.end();
    }
  } finally {
    await server.close();
  }
});
