/**
 * Several service processes on loopback sharing PostgreSQL (ledger) and Redis (limits): the ledger
 * stays exact, limits hold across nodes, a node killed with -9 loses nothing that was served and its
 * in-flight slots come back after the lease, and a stopping node finishes what it started.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshDatabase, freshRedis, type TestDatabase, type TestRedis } from './helpers/backends.ts';
import { type Cluster, count, get, type Reply, startCluster } from './helpers/cluster.ts';

const db = await freshDatabase();
const redis = await freshRedis();
const skip = 'skip' in db ? db.skip : 'skip' in redis ? redis.skip : false;

const COST_1 = 'system/api-usage';
const P0 = 'equities/stock-prices';
const LEASE_S = 5;

describe('three nodes sharing PostgreSQL and Redis', { skip }, () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster({
      db: db as TestDatabase,
      redis: redis as TestRedis,
      nodes: 3,
      config: (c) => {
        // A package with no practical per-minute limit, for the tests that are about money, not rates.
        c.pricing.commercial_skus.push({
          ...(c.pricing.commercial_skus[0] as (typeof c.pricing.commercial_skus)[number]),
          id: 'loadtest',
          name: 'Load test',
          rate_limit_per_minute: 1_000_000,
        });
        // A cost-1 read costs exactly 1 token at every tier (no loyalty discount as the wallet burns).
        for (const tier of c.pricing.loyalty_tiers) tier.discount_pct = 0;
        c.limits.wallet.concurrent = 200;
        // Public-test reads are limited here by their 10 slots only.
        c.limits.public_test.per_minute = 1_000_000;
        c.limits.public_test.per_day = 1_000_000;
        c.limits.slot_lease_seconds = LEASE_S;
      },
      // Keys stay cached on each node, so (c) can slow the database down without slowing auth.
      env: { KEY_CACHE_TTL_MS: '60000' },
    });
    for (const dataset of [COST_1, P0])
      await cluster.deps.dataReads.ensureRows(cluster.deps.reads.resolve(dataset));
  });
  after(async () => {
    await cluster?.close();
    if (!('skip' in db)) await db.drop();
    if (!('skip' in redis)) await redis.cleanup();
  });

  const url = (node: number, dataset = COST_1) =>
    `${cluster.nodes[node]?.url}/api/v1/data/${dataset}?limit=1`;

  test('(a) one 1000-token wallet, 3 x 64 concurrent clients on a cost-1 dataset: exactly 1000 served, the rest 402, balance 0', async () => {
    const { key, walletId } = await cluster.walletKey(1000, 'loadtest');
    const replies: Reply[] = [];
    const client = async (node: number) => {
      for (let i = 0; i < 100; i++) {
        const reply = await get(url(node), key);
        replies.push(reply);
        if (reply.status !== 200) return;
      }
    };
    await Promise.all([0, 1, 2].flatMap((node) => Array.from({ length: 64 }, () => client(node))));
    assert.equal(count(replies, 200), 1000, 'exactly the wallet: 1000 reads of 1 token');
    assert.equal(count(replies, 402, 'insufficient_tokens'), 192, 'every client stopped at its first 402');
    assert.equal(replies.length, 1192, 'nothing else: no 5xx, no 429');
    const wallet = await cluster.deps.store.getWallet(walletId);
    assert.equal(wallet?.balanceMicros, 0n);
    const entries = await cluster.deps.store.listEntries(walletId);
    const burns = entries.filter((e) => e.kind === 'burn');
    assert.equal(burns.length, 1000);
    assert.ok(
      entries.every((e) => e.balanceAfterMicros >= 0n),
      'never negative',
    );
    assert.equal(await cluster.deps.store.sumEntries(walletId), 0n);
    assert.deepEqual((await cluster.deps.store.auditLedger()).mismatches, []);
  });

  test('(b) a 60/min key hit through all three nodes: exactly 60 admitted in the window', async () => {
    const { key, keyId } = await cluster.walletKey(1000);
    // Uneven on purpose: of every 12 requests, 10 go to node 0 and one each to nodes 1 and 2. Counted in
    // Redis that is 60 of 120 whatever the split; nodes each enforcing their own third (the fallback)
    // would admit 20 + 10 + 10 = 40.
    const target = (i: number) => (i % 12 < 10 ? 0 : (i % 12) - 9);
    const replies = await Promise.all(Array.from({ length: 120 }, (_, i) => get(url(target(i)), key)));
    assert.equal(count(replies, 200), 60);
    assert.equal(count(replies, 429, 'rate_limited'), 60);
    for (const node of [0, 1, 2]) {
      assert.ok(
        replies.some((r, i) => target(i) === node && r.status === 200),
        `node ${node} admitted some of the 60`,
      );
    }
    const refused = replies.find((r) => r.status === 429);
    assert.ok(Number(refused?.headers.get('retry-after')) >= 1);
    assert.match(refused?.headers.get('ratelimit-policy') ?? '', /q=60/);
    assert.equal(
      await (redis as TestRedis).client.zcard(`${(redis as TestRedis).prefix}min:key:${keyId}`),
      60,
      'the 60 admissions are the one shared window in Redis',
    );
    for (const node of cluster.nodes.slice(0, 3)) {
      const metrics = await (await fetch(`${node.url}/metrics`)).text();
      assert.match(metrics, /^tmd_limiter_local_decisions_total 0$/m, 'no node decided on its own');
    }
  });

  test('(c) a public-test key: never more than 10 in flight across the nodes', async () => {
    const registered = await cluster.deps.credentials.registerPublicTest(
      `fpt-${Date.now()}@example.com`,
      'a long passphrase',
      '203.0.113.7',
    );
    const key = registered.secret;
    const slotKey = `${(redis as TestRedis).prefix}slot:acct:${registered.account.id}`;
    for (const node of [0, 1, 2]) assert.equal((await get(url(node, P0), key)).status, 200, 'warm-up');
    // Each read now takes at least two slowed database round trips: all 24 requests below are
    // admitted or refused while the first ten are still in flight.
    cluster.pgProxy.setDelay(150);
    let maxInFlight = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const held = await (redis as TestRedis).client.zcount(slotKey, `(${Date.now()}`, '+inf');
        maxInFlight = Math.max(maxInFlight, held);
        await sleep(2);
      }
    })();
    try {
      const replies = await Promise.all(Array.from({ length: 24 }, (_, i) => get(url(i % 3, P0), key)));
      assert.equal(count(replies, 200), 10, 'ten slots, shared by the three nodes');
      assert.equal(count(replies, 429, 'concurrency_limit'), 14);
    } finally {
      polling = false;
      await poller;
      cluster.pgProxy.setDelay(0);
    }
    assert.equal(maxInFlight, 10, 'Redis never held more than 10 slots for the key');
    // A node releases a slot once it has sent the response, a moment after the client has it: wait for
    // that (well within the 5 s lease, which would free a forgotten slot too) rather than race it.
    let held = -1;
    for (const deadline = Date.now() + 500; Date.now() < deadline; await sleep(5)) {
      held = await (redis as TestRedis).client.zcount(slotKey, `(${Date.now()}`, '+inf');
      if (held === 0) break;
    }
    assert.equal(held, 0, 'all released');
  });

  test('(d) kill -9 one node during load: every 2xx read has its ledger entry, the ledger balances, its slots come back after the lease', async () => {
    const victim = await cluster.startNode();
    const victimIndex = cluster.nodes.indexOf(victim);
    const account = await cluster.walletKey(100_000, 'loadtest');
    // The victim gets a key of its own on the same wallet: its slots are exactly that key's slots.
    const owner = await cluster.deps.store.getAccount(account.accountId);
    assert.ok(owner);
    const victimKeyRecord = await cluster.deps.credentials.createLiveKey(owner, 'victim', null);
    const slotKey = `${(redis as TestRedis).prefix}slot:key:${victimKeyRecord.record.id}`;
    const keys = [account.key, account.key, victimKeyRecord.secret];
    const targets = [0, 1, victimIndex];
    // A public-test account reads through the victim too: its 10 slots are all its clients can hold,
    // so a slot the dead node kept is a read refused until the lease frees it.
    const fpt = await cluster.deps.credentials.registerPublicTest(
      `fpt-kill-${Date.now()}@example.com`,
      'a long passphrase',
      '203.0.113.8',
    );
    const fptSlots = `${(redis as TestRedis).prefix}slot:acct:${fpt.account.id}`;
    const held = (slotKey: string) => (redis as TestRedis).client.zcount(slotKey, `(${Date.now()}`, '+inf');
    cluster.pgProxy.setDelay(20);
    const replies: Reply[] = [];
    const fptReplies: Reply[] = [];
    const failures = [0, 0, 0];
    let running = true;
    // Until the kill, a failed call to the victim (a reset socket on a loaded machine) is retried: a
    // client that gave up would leave the victim with none of its slots to strand.
    let killed = false;
    let n = 0;
    const client = async (slot: number) => {
      while (running) {
        const requestId = `kill-${slot}-${n++}`;
        try {
          replies.push(await get(url(targets[slot] as number), keys[slot] as string, requestId));
        } catch {
          failures[slot] = (failures[slot] ?? 0) + 1;
          if (slot === 2 && killed) return;
        }
      }
    };
    let fptErrors = 0;
    const fptClient = async () => {
      while (running) {
        try {
          fptReplies.push(await get(url(victimIndex, P0), fpt.secret));
        } catch {
          fptErrors += 1;
          if (killed) return;
        }
      }
    };
    const load = Promise.all([
      ...[0, 1, 2].flatMap((slot) => Array.from({ length: 12 }, () => client(slot))),
      ...Array.from({ length: 10 }, fptClient),
    ]);
    let strandedFpt = 0;
    try {
      await sleep(1500);
      // Killed at a moment it holds slots of both keys (a loaded machine can leave a gap between reads).
      for (
        let tries = 0;
        tries < 50 && ((await held(slotKey)) === 0 || (await held(fptSlots)) === 0);
        tries++
      ) {
        await sleep(20);
      }
      killed = true;
      victim.child.kill('SIGKILL');
      await victim.exited;
      const heldAtKill = await held(slotKey);
      strandedFpt = await held(fptSlots);
      assert.ok(
        heldAtKill > 0,
        `the killed node held slots (${heldAtKill}; ${failures[2]} calls to it failed)`,
      );
      assert.ok(
        strandedFpt > 0,
        `the killed node held public-test slots (${strandedFpt}; ${count(fptReplies, 200)} of ${fptReplies.length} public-test reads served, ${fptErrors} failed)`,
      );
      await sleep(500);
    } finally {
      running = false;
      await load;
      cluster.pgProxy.setDelay(0);
    }
    const served = replies.filter((r) => r.status === 200);
    assert.ok(served.length > 100, `load was served (${served.length})`);
    assert.ok((failures[2] ?? 0) > 0, 'requests to the killed node failed');
    assert.deepEqual(failures.slice(0, 2), [0, 0], 'no request to a surviving node failed');
    for (const node of [0, 1])
      assert.equal(cluster.nodes[node]?.child.exitCode, null, `node ${node} still up`);
    assert.ok(
      fptReplies.some((r) => r.status === 200),
      'the public-test load was served before the kill',
    );
    assert.equal(
      replies.filter((r) => r.status !== 200).length,
      0,
      'no refusal or 5xx from the surviving nodes',
    );
    const entries = await cluster.deps.store.listEntries(account.walletId);
    const charged = new Set(entries.filter((e) => e.kind === 'burn').map((e) => e.requestId));
    const missing = served.filter((r) => !charged.has(r.requestId));
    assert.deepEqual(
      missing.map((r) => r.requestId),
      [],
      'every read that returned 2xx has its ledger entry',
    );
    assert.ok(charged.size >= served.length);
    assert.deepEqual(
      (await cluster.deps.store.auditLedger()).mismatches,
      [],
      'balances equal the sum of entries',
    );
    // Within the lease the stranded slots still count: ten concurrent reads (each slowed, so all ten are
    // in flight together) find only the slots the dead node did not hold.
    const burst = async () => {
      cluster.pgProxy.setDelay(150);
      try {
        return await Promise.all(Array.from({ length: 10 }, (_, i) => get(url(i % 2, P0), fpt.secret)));
      } finally {
        cluster.pgProxy.setDelay(0);
      }
    };
    const stranded = await held(fptSlots);
    assert.equal(stranded, strandedFpt, 'no lease of the dead node has run out yet');
    const during = await burst();
    assert.equal(count(during, 429, 'concurrency_limit'), stranded, 'a stranded slot is a slot taken');
    assert.equal(count(during, 200), 10 - stranded);
    await sleep(LEASE_S * 1000 + 200);
    assert.equal(await held(slotKey), 0, 'the dead node’s slots came back after the lease');
    assert.equal(await held(fptSlots), 0);
    const afterLease = await burst();
    assert.equal(count(afterLease, 200), 10, 'all ten slots are free again');
    const again = await get(url(0), victimKeyRecord.secret);
    assert.equal(again.status, 200);
  });

  test('graceful shutdown: SIGTERM finishes in-flight reads, releases their slots, then exits 0', async () => {
    const node = await cluster.startNode({ LOG_LEVEL: 'info' });
    const index = cluster.nodes.indexOf(node);
    const { key, keyId } = await cluster.walletKey(100);
    const slotKey = `${(redis as TestRedis).prefix}slot:key:${keyId}`;
    assert.equal((await get(url(index), key)).status, 200, 'warm-up');
    cluster.pgProxy.setDelay(200);
    try {
      const inFlight = Promise.all(Array.from({ length: 5 }, () => get(url(index), key)));
      await sleep(150);
      assert.equal(await (redis as TestRedis).client.zcount(slotKey, `(${Date.now()}`, '+inf'), 5);
      node.child.kill('SIGTERM');
      await sleep(50);
      const late = await get(url(index), key).catch(() => null);
      assert.ok(late === null || late.status === 503, 'no new request is served once stopping');
      const replies = await inFlight;
      assert.deepEqual(
        replies.map((r) => r.status),
        [200, 200, 200, 200, 200],
        'every in-flight read completed',
      );
      assert.equal(await node.exited, 0, node.output());
    } finally {
      cluster.pgProxy.setDelay(0);
    }
    assert.equal(
      await (redis as TestRedis).client.zcount(slotKey, `(${Date.now()}`, '+inf'),
      0,
      `slots released at once, not left to their lease\n${node.output()}`,
    );
    assert.match(node.output(), /shut down cleanly/);
  });
});
