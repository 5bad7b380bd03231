/**
 * Graceful shutdown (what SIGTERM does), in process with the exit injected: requests arriving while the
 * node stops get a problem+json 503; an export still streaming when the grace period runs out, or when
 * a second signal comes, is cut and refunded before the process exits.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { afterEach, test } from 'node:test';
import { closeDeps } from '../src/deps.ts';
import { gracefulShutdown } from '../src/edge/shutdown.ts';
import type { LedgerEntry, RowQuery, RowsPage } from '../src/store/port.ts';
import { H15, h15Rows } from './helpers/h15.ts';
import { operatorAccount } from './helpers/operator.ts';
import { bearer, startServer, TestClock, type TestServer } from './helpers/server.ts';

/** 2001 rows: an export of three pages, charged 3 x 5 tokens on Pro (15). */
const rows = h15Rows(2001);

interface Stopping {
  server: TestServer;
  /** Holds every export page after the first until opened (a slow database). */
  hold(): void;
  release(): void;
  /** The signal handler, with exit recorded. */
  signal(name?: string): Promise<void>;
  exited: Promise<{ code: number; entries: Promise<LedgerEntry[]> }>;
  walletId?: string;
}

let current: Stopping | undefined;
afterEach(async () => {
  current?.release();
  // The node closed its store itself on a clean stop; after a cut it did not.
  await current?.server.deps.store.close().catch(() => undefined);
  if (current) rmSync(current.server.dir, { recursive: true, force: true });
  current = undefined;
});

/** Milliseconds the store takes for a refund (credit), a debit, or the lookup before an export's charge. */
const slow = { credit: 0, debit: 0, source: 0 };
/** How many calls of each slowed method have begun. */
const begun = { credit: 0, debit: 0, source: 0 };
const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until `count()` reaches `n` (a request has got that far), however loaded the machine is. */
async function reached(count: () => number, n: number): Promise<void> {
  for (let i = 0; i < 2000 && count() < n; i++) await after(5);
  assert.ok(count() >= n, 'the request got there');
}

async function stoppingServer(
  graceMs: number,
  walletOf: () => string | undefined,
  stopNowWaitMs?: number,
): Promise<Stopping> {
  let gate: Promise<void> | null = null;
  let open: () => void = () => undefined;
  Object.assign(slow, { credit: 0, debit: 0, source: 0 });
  Object.assign(begun, { credit: 0, debit: 0, source: 0 });
  const server = await startServer({
    listen: true,
    clock: new TestClock(Date.parse('2025-12-15T10:00:00Z')),
    wrapStore: (store) =>
      new Proxy(store, {
        get(target, property, receiver) {
          if (property === 'queryRows') {
            return async (query: RowQuery): Promise<RowsPage> => {
              if (gate && query.after !== undefined) await gate;
              return target.queryRows(query);
            };
          }
          // A store farther away than SQLite (PostgreSQL): these take time.
          for (const [name, ms] of Object.entries(slow)) {
            const method = name === 'source' ? 'datasetSource' : name;
            if (property === method && ms > 0) {
              const real = Reflect.get(target, property, receiver) as (...args: unknown[]) => unknown;
              return async (...args: unknown[]) => {
                begun[name as keyof typeof begun]++;
                await after(ms);
                return real.apply(target, args);
              };
            }
          }
          const value = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
  });
  await server.deps.store.loadRows(H15, 'date', rows, 'import');
  let exit: (value: { code: number; entries: Promise<LedgerEntry[]> }) => void = () => undefined;
  const exited = new Promise<{ code: number; entries: Promise<LedgerEntry[]> }>((resolve) => {
    exit = resolve;
  });
  const handler = gracefulShutdown(server.app, server.deps, {
    graceMs,
    ...(stopNowWaitMs !== undefined && { stopNowWaitMs }),
    stopJobs: () => undefined,
    close: () => closeDeps(server.deps),
    exit: (code) => {
      const wallet = walletOf();
      // What the ledger holds at the moment of exit: SQLite answers at once, before anything else runs.
      exit({ code, entries: wallet ? server.deps.store.listEntries(wallet) : Promise.resolve([]) });
    },
  });
  const stopping: Stopping = {
    server,
    hold() {
      gate = new Promise((resolve) => {
        open = resolve;
      });
    },
    release() {
      open();
      gate = null;
    },
    signal: (name = 'SIGTERM') => handler(name),
    exited,
  };
  current = stopping;
  return stopping;
}

/** An export that has sent its first page and now waits on the database for the second. */
async function stalledExport(s: Stopping, key: string) {
  s.hold();
  const response = await fetch(`${s.server.url}/api/v1/export/${H15}`, { headers: bearer(key) });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-request-tokens'), '15');
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const first = await reader.read();
  assert.ok(first.value && first.value.length > 0, 'the first page arrived');
  const rest = (async () => {
    for (;;) {
      const { done } = await reader.read();
      if (done) return 'ended';
    }
  })().catch(() => 'broken');
  return { rest };
}

/**
 * An export read to its end: 'ended', or 'broken' if it was cut, before its headers were out or after.
 * Settled as it happens, so a cut before the test looks is not an unhandled rejection.
 */
const exportOutcome = (s: Stopping, key: string) =>
  fetch(`${s.server.url}/api/v1/export/${H15}`, { headers: bearer(key) })
    .then((response) => response.text())
    .then(
      () => 'ended',
      () => 'broken',
    );

const burnsAndRefunds = (entries: LedgerEntry[]) =>
  entries
    .filter((e) => e.kind === 'burn' || e.kind === 'refund')
    .map((e) => [e.kind, e.amountMicros, e.memo]);

test('an export still streaming when the grace period runs out is refunded before the process exits', async () => {
  let wallet: string | undefined;
  const s = await stoppingServer(300, () => wallet);
  const pro = await operatorAccount(s.server, { pkg: 'pro' });
  wallet = pro.walletId;
  // One export delivered whole before the stop: served, so it stays charged.
  const whole = await fetch(`${s.server.url}/api/v1/export/${H15}`, { headers: bearer(pro.key) });
  assert.equal((await whole.text()).split('\n').length, 2002);
  const { rest } = await stalledExport(s, pro.key);
  const stopped = s.signal();
  const { code, entries } = await s.exited;
  assert.equal(code, 1, 'the grace ran out: exit 1');
  assert.deepEqual(
    burnsAndRefunds(await entries),
    [
      ['burn', -15_000_000n, null],
      ['burn', -15_000_000n, null],
      ['refund', 15_000_000n, `refund: export of ${H15} cut by a shutdown after 1000 rows`],
    ],
    'the cut export was refunded before exit; the whole one was not',
  );
  assert.equal(await rest, 'broken', 'the client sees a broken stream, not a clean end');
  s.release();
  await stopped;
  const audit = await s.server.deps.store.auditLedger().catch(() => null);
  if (audit) assert.deepEqual(audit.mismatches, []);
});

test('a second signal cuts open exports (refunded) and exits at once, without waiting for the grace', async () => {
  let wallet: string | undefined;
  const s = await stoppingServer(600_000, () => wallet);
  const pro = await operatorAccount(s.server, { pkg: 'pro' });
  wallet = pro.walletId;
  const { rest } = await stalledExport(s, pro.key);
  const started = Date.now();
  void s.signal('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 100));
  await s.signal('SIGTERM');
  const { code, entries } = await s.exited;
  assert.equal(code, 1);
  assert.ok(Date.now() - started < 5_000, 'exited long before the ten-minute grace');
  assert.deepEqual(burnsAndRefunds(await entries), [
    ['burn', -15_000_000n, null],
    ['refund', 15_000_000n, `refund: export of ${H15} cut by a shutdown after 1000 rows`],
  ]);
  assert.equal(await rest, 'broken');
});

test('a request that arrives while the node stops gets a problem+json 503 with Retry-After and Connection: close', async () => {
  const s = await stoppingServer(10_000, () => undefined);
  const pro = await operatorAccount(s.server, { pkg: 'pro' });
  // An export in flight holds the close open, as a long request would.
  await stalledExport(s, pro.key);
  // A request whose headers began before the stop (so its connection is not idle) and end after it.
  const socket = connect(Number(new URL(s.server.url).port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${pro.key}\r\n`);
  await new Promise((resolve) => setTimeout(resolve, 50));
  void s.signal();
  await new Promise((resolve) => setTimeout(resolve, 100));
  let raw = '';
  socket.on('data', (chunk: Buffer) => {
    raw += chunk.toString();
  });
  socket.write('\r\n');
  await new Promise((resolve) => socket.once('close', resolve));
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 503 /);
  assert.match(head, /\r\ncontent-type: application\/problem\+json/i);
  assert.match(head, /\r\nretry-after: 1\r\n/i);
  assert.match(head, /\r\nconnection: close\r\n/i);
  const problem = JSON.parse(body);
  assert.equal(problem.code, 'service_unavailable');
  assert.equal(problem.retry_after, 1);
  assert.match(problem.detail, /shutting down/);
  s.release();
});

test('a cut export is broken off before its refund commits: it cannot finish and be refunded too', async () => {
  let wallet: string | undefined;
  const s = await stoppingServer(600_000, () => wallet);
  const pro = await operatorAccount(s.server, { pkg: 'pro' });
  wallet = pro.walletId;
  const { rest } = await stalledExport(s, pro.key);
  slow.credit = 200; // the refund takes a PostgreSQL round trip and a wallet lock
  void s.signal('SIGTERM');
  await after(50);
  void s.signal('SIGTERM');
  await after(20);
  s.release(); // the page the stream waited on answers while the refund commits
  assert.equal(await rest, 'broken', 'the export did not go on to its end');
  const { code, entries } = await s.exited;
  assert.equal(code, 1);
  assert.deepEqual(burnsAndRefunds(await entries), [
    ['burn', -15_000_000n, null],
    ['refund', 15_000_000n, `refund: export of ${H15} cut by a shutdown after 1000 rows`],
  ]);
});

test('stopping now: an export whose charge is in flight is cut and refunded; one not yet charged is refused', async () => {
  let wallet: string | undefined;
  const s = await stoppingServer(600_000, () => wallet);
  const pro = await operatorAccount(s.server, { pkg: 'pro' });
  wallet = pro.walletId;
  const stalled = await stalledExport(s, pro.key);
  // B's debit is under way when the node stops now; C has not reached its charge yet.
  slow.debit = 400;
  const b = exportOutcome(s, pro.key);
  await reached(() => begun.debit, 1);
  slow.source = 150;
  const c = fetch(`${s.server.url}/api/v1/export/${H15}`, { headers: bearer(pro.key) });
  await reached(() => begun.source, 1);
  void s.signal('SIGTERM');
  await after(10);
  void s.signal('SIGTERM');
  const { code, entries } = await s.exited;
  assert.equal(code, 1);
  assert.deepEqual(
    burnsAndRefunds(await entries)
      .map(([kind, amount]) => `${kind} ${amount}`)
      .sort(),
    ['burn -15000000', 'burn -15000000', 'refund 15000000', 'refund 15000000'],
    'the stalled export and the one charged while the node stopped were both refunded before exit',
  );
  assert.equal(s.server.app.openExports.size, 0, 'nothing left open');
  assert.equal(await stalled.rest, 'broken');
  const refused = await c;
  assert.equal(refused.status, 503);
  assert.equal(((await refused.json()) as { code: string }).code, 'service_unavailable');
  assert.equal(await b, 'broken', 'the export charged while stopping did not stream to its end');
});

test('stopping now: a charge that commits seconds later is still awaited, its export cut and refunded', async () => {
  let wallet: string | undefined;
  const s = await stoppingServer(600_000, () => wallet);
  const pro = await operatorAccount(s.server, { pkg: 'pro' });
  wallet = pro.walletId;
  await stalledExport(s, pro.key);
  slow.debit = 2_300; // a hot wallet's row lock, a slow PostgreSQL
  const b = exportOutcome(s, pro.key);
  await reached(() => begun.debit, 1);
  slow.credit = 1_000; // and each refund takes a second
  void s.signal('SIGTERM');
  void s.signal('SIGTERM');
  const { entries } = await s.exited;
  assert.deepEqual(
    burnsAndRefunds(await entries)
      .map(([kind, amount]) => `${kind} ${amount}`)
      .sort(),
    ['burn -15000000', 'burn -15000000', 'refund 15000000', 'refund 15000000'],
  );
  assert.equal(await b, 'broken');
});

test('stopping now: a charge still in flight when the wait ends is logged at error level with its request id', async () => {
  const s = await stoppingServer(600_000, () => undefined, 300);
  const pro = await operatorAccount(s.server, { pkg: 'pro' });
  const errors: { msg: string; fields?: Record<string, unknown> }[] = [];
  s.server.deps.log.error = (msg, fields) => errors.push({ msg, ...(fields && { fields }) });
  slow.debit = 800;
  const read = fetch(`${s.server.url}/api/v1/data/${H15}?limit=1`, {
    headers: { ...bearer(pro.key), 'x-request-id': 'late-debit-1' },
  }).then(
    (response) => response.status,
    () => 'broken',
  );
  await reached(() => begun.debit, 1);
  void s.signal('SIGTERM');
  void s.signal('SIGTERM');
  const { code } = await s.exited;
  assert.equal(code, 1);
  assert.deepEqual(errors, [
    {
      msg: 'charges still in flight at exit: each may commit with its read unsent; check them',
      fields: { requestIds: ['late-debit-1'] },
    },
  ]);
  await read;
});
