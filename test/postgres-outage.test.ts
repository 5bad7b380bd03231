/**
 * PostgreSQL stopped mid-run: reads fail closed with 503 service_unavailable and nothing is served
 * unmetered; when it is back, reads succeed again without a restart. The database is taken away by a
 * proxy the test controls (connections reset, new ones refused: what a stopped server looks like to a
 * client), and separately by the server ending the node's sessions (what `pg_ctl stop` sends).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { freshDatabase, freshRedis, sqlOn, type TestDatabase, type TestRedis } from './helpers/backends.ts';
import { type Cluster, get, type Reply, startCluster } from './helpers/cluster.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';

const db = await freshDatabase();
const redis = await freshRedis();
const skip = 'skip' in db ? db.skip : 'skip' in redis ? redis.skip : false;

describe('PostgreSQL unreachable: fail closed, recover without a restart', { skip }, () => {
  let cluster: Cluster;
  let key: string;
  let walletId: string;
  before(async () => {
    cluster = await startCluster({
      db: db as TestDatabase,
      redis: redis as TestRedis,
      nodes: 1,
      env: { LOG_LEVEL: 'info' },
      config: (c) => {
        for (const tier of c.pricing.loyalty_tiers) tier.rate_limit = 100_000;
      },
    });
    await cluster.deps.dataReads.ensureRows(cluster.deps.reads.resolve('equities/stock-prices'));
    ({ key, walletId } = await cluster.walletKey(1000));
  });
  after(async () => {
    await cluster?.close();
    if (!('skip' in db)) await db.drop();
    if (!('skip' in redis)) await redis.cleanup();
  });

  const read = () => get(`${cluster.nodes[0]?.url}/api/v1/data/equities/stock-prices?limit=1`, key);
  const ready = () => fetch(`${cluster.nodes[0]?.url}/readyz`);

  /** The node's store metrics (its gauge and counter) and how often it logged each transition. */
  async function health() {
    const text = await (await fetch(`${cluster.nodes[0]?.url}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
    const output = cluster.nodes[0]?.output() ?? '';
    return {
      down: value('tmd_store_unreachable'),
      refused: value('tmd_store_unavailable_total'),
      lost: output.match(/PostgreSQL unreachable/g)?.length ?? 0,
      back: output.match(/PostgreSQL reachable again/g)?.length ?? 0,
    };
  }

  async function burns(): Promise<number> {
    return (await cluster.deps.store.listEntries(walletId)).filter((e) => e.kind === 'burn').length;
  }

  test('stopped mid-run: reads get 503 and nothing is served; restarted: reads succeed again', async () => {
    const before = await Promise.all(Array.from({ length: 5 }, read));
    assert.deepEqual(
      before.map((r) => r.status),
      [200, 200, 200, 200, 200],
    );
    assert.equal(await burns(), 5);
    assert.equal((await ready()).status, 200);
    const start = await health();
    assert.equal(start.down, 0);

    await cluster.pgProxy.cut();
    const during = await Promise.all(Array.from({ length: 10 }, read));
    assert.deepEqual(
      during.map((r) => [r.status, r.code, r.headers.get('retry-after')]),
      Array.from({ length: 10 }, () => [503, 'service_unavailable', '1']),
    );
    const probe = await ready();
    assert.equal(probe.status, 503);
    assert.equal(((await probe.json()) as { code: string }).code, 'service_unavailable');
    assert.equal(
      (await fetch(`${cluster.nodes[0]?.url}/healthz`)).status,
      200,
      'the process itself is alive',
    );
    const outage = await health();
    assert.equal(outage.down, 1, 'the gauge is up while the database is away');
    assert.ok(outage.refused - start.refused >= 10, `each refused read counted: ${JSON.stringify(outage)}`);
    assert.equal(outage.lost - start.lost, 1, 'one warning for the outage, not one per request');

    await cluster.pgProxy.restore();
    let after = await read();
    for (let i = 0; i < 20 && after.status !== 200; i++) {
      await sleep(100);
      after = await read();
    }
    assert.equal(after.status, 200, 'reads succeed again without a restart');
    assert.equal((await ready()).status, 200);
    assert.equal(await burns(), 6, 'exactly the served reads were charged: none during the outage');
    const recovered = await health();
    assert.equal(recovered.down, 0);
    assert.equal(recovered.back - start.back, 1, 'one line when it is back');
    assert.deepEqual((await cluster.deps.store.auditLedger()).mismatches, []);
  });

  test('the server ending the sessions (as a shutdown does) mid-read gives 503, never 500, and recovers', async () => {
    const beforeBurns = await burns();
    // Each read now waits on slowed round trips, so the sessions are ended while reads are in flight.
    cluster.pgProxy.setDelay(100);
    let replies: Reply[];
    try {
      const load = Promise.all(Array.from({ length: 20 }, () => read()));
      await sleep(50);
      // 57P01 admin_shutdown on every session of the node: what a stopping server sends its clients.
      const ended = await sqlOn(
        (db as TestDatabase).url,
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
          WHERE application_name LIKE 'token-metered-data%' AND datname = current_database()`,
      );
      assert.ok(
        ended.some((row) => row.ended === true),
        'the node had sessions, and they were ended',
      );
      replies = await load;
    } finally {
      cluster.pgProxy.setDelay(0);
    }
    for (const reply of replies) assert.ok([200, 503].includes(reply.status), `status ${reply.status}`);
    assert.ok(
      replies.some((r) => r.status === 503 && r.code === 'service_unavailable'),
      'reads in flight when their sessions ended got 503',
    );
    const served = replies.filter((r) => r.status === 200).length;
    assert.equal(await burns(), beforeBurns + served, 'every served read charged once, no other');
    assert.equal((await read()).status, 200);
    assert.deepEqual((await cluster.deps.store.auditLedger()).mismatches, []);
  });

  test('the data is read but the debit fails (a standby after a failover refuses writes): 503, nothing served, nothing recorded', async () => {
    const url = (db as TestDatabase).url;
    const beforeBurns = await burns();
    const balance = (await cluster.deps.store.getWallet(walletId))?.balanceMicros;
    // Reads of the rows work; every write of a ledger entry fails as on a read-only standby.
    await sqlOn(
      url,
      `CREATE FUNCTION tmd_test_read_only() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'cannot execute INSERT in a read-only transaction' USING ERRCODE = '25006'; END $$`,
    );
    await sqlOn(
      url,
      'CREATE TRIGGER tmd_test_read_only BEFORE INSERT ON ledger_entries FOR EACH STATEMENT EXECUTE FUNCTION tmd_test_read_only()',
    );
    let replies: Reply[];
    let texts: string[];
    try {
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          fetch(`${cluster.nodes[0]?.url}/api/v1/data/equities/stock-prices?limit=5`, {
            headers: { authorization: `Bearer ${key}`, 'x-request-id': `standby-${i}` },
          }),
        ),
      );
      texts = await Promise.all(responses.map((r) => r.text()));
      replies = responses.map((r, i) => ({
        status: r.status,
        code: JSON.parse(texts[i] as string).code,
        requestId: `standby-${i}`,
        headers: r.headers,
      }));
    } finally {
      await sqlOn(url, 'DROP TRIGGER tmd_test_read_only ON ledger_entries');
    }
    assert.deepEqual(
      replies.map((r) => [r.status, r.code]),
      Array.from({ length: 6 }, () => [503, 'service_unavailable']),
    );
    for (const text of texts) assert.doesNotMatch(text, /"data"|AAPL|MSFT/, 'no row in the answer');
    assert.equal(await burns(), beforeBurns, 'no burn');
    assert.equal((await cluster.deps.store.getWallet(walletId))?.balanceMicros, balance);
    const usage = await sqlOn(
      url,
      `SELECT count(*)::int AS n FROM usage_events WHERE request_id LIKE 'standby-%'`,
    );
    assert.equal(usage[0]?.n, 0, 'no usage event: the failed debit took its record with it');
    assert.equal((await read()).status, 200, 'writable again: reads are served and charged');
    assert.equal(await burns(), beforeBurns + 1);
    assert.deepEqual((await cluster.deps.store.auditLedger()).mismatches, []);
  });
});

const silentDb = await freshDatabase();

describe('PostgreSQL silent: a connection whose packets are dropped gives 503 in bounded time', {
  skip: 'skip' in silentDb ? silentDb.skip : false,
}, () => {
  after(async () => {
    if (!('skip' in silentDb)) await silentDb.drop();
  });

  test('the debit on it fails with service_unavailable, the wallet is not held, new connections serve', async () => {
    const url = new URL((silentDb as TestDatabase).url);
    const proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    // Timeouts short for the test; the defaults are 15 s (statement) and 20 s (no answer at all).
    const store = new PostgresStore(url.toString(), { statementTimeoutMs: 300, queryTimeoutMs: 800 });
    try {
      await store.migrate();
      for (const wallet of ['wal_silent_a', 'wal_silent_b']) {
        await store.createWallet(wallet, null, '2026-11');
        await store.credit({ walletId: wallet, kind: 'topup', amountMicros: 100n, at: 1 });
      }
      const debit = (walletId: string, requestId: string) =>
        store.debit({
          walletId,
          amountMicros: 1n,
          month: '2026-11',
          usage: {
            requestId,
            keyId: null,
            accountId: null,
            walletId,
            dataset: 'equities/stock-prices',
            channel: 'rest',
            listCostMicros: 1n,
            costMicros: 1n,
            burnedMicros: 1n,
            outcome: 'charged',
            rows: 1,
            at: 1,
          },
        });
      // Every pooled connection (the migration's and the credits') goes silent.
      proxy.blackhole();
      const started = Date.now();
      const first = debit('wal_silent_a', 'req_silent_1').then(
        () => 'served',
        (error: { code?: string }) => error.code,
      );
      await sleep(50);
      // Queued behind the first (same wallet): must not wait for TCP to give up on it.
      const second = debit('wal_silent_a', 'req_silent_2').then(
        () => 'served',
        (error: { code?: string }) => error.code,
      );
      const other = debit('wal_silent_b', 'req_silent_3').then(
        () => 'served',
        (error: { code?: string }) => error.code,
      );
      const outcomes = await Promise.all([first, second, other]);
      const elapsed = Date.now() - started;
      assert.ok(elapsed < 5000, `answered in ${elapsed} ms`);
      for (const outcome of outcomes)
        assert.ok(['served', 'service_unavailable'].includes(outcome as string));
      assert.equal(outcomes[0], 'service_unavailable', 'the debit on a silent connection is refused');
      // The silent connection was given up: the next debits run on new connections and succeed.
      assert.equal(await debit('wal_silent_a', 'req_silent_4').then(() => 'served'), 'served');
      const audit = await store.auditLedger();
      assert.deepEqual(audit.mismatches, []);
      const burnsOf = async (walletId: string) =>
        (await store.listEntries(walletId)).filter((e) => e.kind === 'burn').length;
      // What reached the database is what was charged: the refused first debit never did.
      assert.equal(
        await burnsOf('wal_silent_a'),
        1 + (outcomes[1] === 'served' ? 1 : 0),
        'only the debits that succeeded are in the ledger',
      );
    } finally {
      await store.close();
      await proxy.close();
    }
  });
  test('a database that answers but refuses (a statement timeout on a held lock) is counted, not raised as an outage', async () => {
    const url = (silentDb as TestDatabase).url;
    const events: string[] = [];
    const store = new PostgresStore(url, {
      statementTimeoutMs: 300,
      health: {
        refused: () => events.push('refused'),
        unreachable: () => events.push('unreachable'),
        reachable: () => events.push('reachable'),
      },
    });
    const other = new pg.Client({ connectionString: url });
    try {
      await store.migrate();
      await store.createWallet('wal_locked', null, '2026-11');
      // Another session holds the wallet row: the database is up and answering.
      await other.connect();
      await other.query('BEGIN');
      await other.query(`SELECT * FROM wallets WHERE id = 'wal_locked' FOR UPDATE`);
      for (let i = 0; i < 3; i++) {
        const credit = await store
          .credit({ walletId: 'wal_locked', kind: 'topup', amountMicros: 1n, at: 1 })
          .then(
            () => 'credited',
            (error: { code?: string }) => error.code,
          );
        assert.equal(credit, 'service_unavailable', 'the statement timeout is a 503');
        assert.ok(await store.getWallet('wal_locked'), 'other statements are answered');
      }
      assert.deepEqual(events, ['refused', 'refused', 'refused'], 'counted, and no outage raised or cleared');
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      await other.end();
      await store.close();
    }
  });
});

test('a Unix socket with no server behind it (a stopped server removes its socket) is an outage: 503, raised once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tmd-nosocket-'));
  const events: string[] = [];
  const store = new PostgresStore(`postgres://postgres@/postgres?host=${join(dir, 'gone')}`, {
    health: {
      refused: () => events.push('refused'),
      unreachable: () => events.push('unreachable'),
      reachable: () => events.push('reachable'),
    },
  });
  try {
    for (let i = 0; i < 2; i++) {
      const outcome = await store.ping().then(
        () => 'answered',
        (error: { code?: string; status?: number }) => `${error.status} ${error.code}`,
      );
      assert.equal(outcome, '503 service_unavailable');
    }
    assert.deepEqual(events, ['refused', 'unreachable', 'refused']);
    // A file the URL names that does not exist is a fault to fix, not an outage: not a 503.
    const misnamed = new PostgresStore(
      `postgres://postgres@/postgres?host=${dir}&sslrootcert=${join(dir, 'no.crt')}&sslmode=verify-full`,
    );
    const fault = await misnamed.ping().then(
      () => 'answered',
      (error: { code?: string; status?: number }) => `${error.status} ${error.code}`,
    );
    await misnamed.close();
    assert.equal(fault, 'undefined ENOENT');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
