/** Bulk export: bulk_export packages only, charged once per started 1,000 rows before the stream starts. */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { RowQuery, RowsPage } from '../src/store/port.ts';
import { H15, h15Rows as rowsOfH15 } from './helpers/h15.ts';
import { adminRequest, freshIp, operatorAccount } from './helpers/operator.ts';
import {
  assertLedgerBalanced,
  bearer,
  publicTestKey,
  sandboxKey,
  startServer,
  TestClock,
  type TestServer,
} from './helpers/server.ts';

let server: TestServer;
/** Set by a test to make the store fail on the given page of an export. */
let failOnQuery: ((query: RowQuery) => boolean) | null = null;

/** 2001 real-shaped rows: three started blocks of 1,000. */
const h15Rows = rowsOfH15(2001);

before(async () => {
  server = await startServer({
    // Exports cut mid-way are seen as a broken stream only over a socket.
    listen: true,
    clock: new TestClock(Date.parse('2025-12-15T10:00:00Z')),
    wrapStore: (store) =>
      new Proxy(store, {
        get(target, property, receiver) {
          if (property === 'queryRows') {
            return async (query: RowQuery): Promise<RowsPage> => {
              if (failOnQuery?.(query)) throw new Error('disk on fire');
              return target.queryRows(query);
            };
          }
          const value = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
  });
  await server.deps.store.loadRows(H15, 'date', h15Rows, 'import');
});
afterEach(() => assertLedgerBalanced(server));
after(() => server.close());

const PACKAGES_DETAIL = 'Pro, Workbench, Partner';

describe('export', () => {
  test('NDJSON: the whole dataset oldest first, charged once (ceil(rows/1000) x list cost) in the cost headers', async () => {
    const pro = await operatorAccount(server, { pkg: 'pro' });
    const res = await server.request('GET', `/api/v1/export/${H15}`, { headers: bearer(pro.key) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('content-type'), 'application/x-ndjson; charset=utf-8');
    assert.equal(
      res.headers.get('content-disposition'),
      'attachment; filename="macro_fed-h15-series.ndjson"',
    );
    assert.equal(res.headers.get('x-export-rows'), '2001');
    assert.equal(res.headers.get('x-data-sample'), 'false');
    assert.equal(res.headers.get('x-token-cost'), '15');
    assert.equal(res.headers.get('x-request-tokens'), '15');
    assert.equal(res.headers.get('x-request-cost-eur'), '1.5');
    assert.equal(res.headers.get('x-credits-remaining'), '149985');
    const lines = res.text.split('\n');
    assert.equal(lines.pop(), '', 'every row ends with a newline');
    assert.deepEqual(
      lines.map((l) => JSON.parse(l)),
      h15Rows,
    );
    const burns = (await server.deps.store.listEntries(pro.walletId)).filter((e) => e.kind === 'burn');
    assert.deepEqual(
      burns.map((e) => [e.amountMicros, e.requestId]),
      [[-15_000_000n, res.headers.get('x-request-id')]],
    );
    const [event] = await server.deps.store.listUsage({ accountId: pro.id }, null, 1);
    assert.deepEqual(
      event && [event.dataset, event.listCostMicros, event.costMicros, event.rows, event.outcome],
      [`export:${H15}`, 15_000_000n, 15_000_000n, 2001, 'charged'],
    );
  });

  test('CSV with a header row; a Terminal session pays the surcharge like any read (3 x 5 x 1.35)', async () => {
    const workbench = await operatorAccount(server, { pkg: 'workbench' });
    const terminal = await server.request('POST', '/api/v1/auth/login', {
      headers: { 'x-forwarded-for': freshIp() },
      body: { email: workbench.email, password: workbench.password, client: 'terminal' },
    });
    const res = await server.request('GET', `/api/v1/export/rates/fed-h15-series?format=csv`, {
      headers: bearer(terminal.json.token),
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(res.headers.get('x-token-cost'), '20.25');
    assert.equal(res.headers.get('x-request-tokens'), '20.25');
    const lines = res.text.split('\r\n');
    assert.equal(lines[0], 'series_id,h15_series,title,date,value');
    assert.equal(
      lines[1],
      'DGS10,RIFLGFCY10_N.B,Market yield on U.S. Treasury securities at 10-year constant maturity,2015-01-01,',
    );
    assert.equal(
      lines[2],
      'DGS10,RIFLGFCY10_N.B,Market yield on U.S. Treasury securities at 10-year constant maturity,2015-01-02,2.01',
    );
    assert.equal(lines.length, 2001 + 2, 'header, 2001 rows, and the empty string after the last CRLF');
    const viaAccept = await server.request('GET', `/api/v1/export/${H15}`, {
      headers: { ...bearer(workbench.key), accept: 'text/csv' },
    });
    assert.equal(viaAccept.headers.get('content-type'), 'text/csv; charset=utf-8');
    // The same rows loaded with their CSV lines (as imports store them) export the same bytes.
    const entry = server.deps.reads.resolve(H15);
    await server.deps.store.loadRows(H15, 'date', h15Rows, 'import', entry.columns);
    try {
      const fromLines = await server.request('GET', `/api/v1/export/${H15}?format=csv`, {
        headers: bearer(workbench.key),
      });
      assert.equal(fromLines.status, 200, fromLines.text);
      assert.equal(fromLines.text, viaAccept.text);
    } finally {
      await server.deps.store.loadRows(H15, 'date', h15Rows, 'import');
    }
  });

  test('an Accept that admits neither NDJSON nor CSV is 406 before the charge', async () => {
    const pro = await operatorAccount(server, { pkg: 'pro' });
    const before = await server.deps.store.auditLedger();
    const res = await server.request('GET', `/api/v1/export/${H15}`, {
      headers: { ...bearer(pro.key), accept: 'application/json' },
    });
    assert.equal(res.status, 406, res.text);
    assert.equal(res.json.code, 'not_acceptable');
    assert.equal((await server.deps.store.auditLedger()).entries, before.entries, 'nothing charged');
  });

  test("a system/* dataset made from the service's records is 400 before the charge, not its sample rows", async () => {
    const pro = await operatorAccount(server, { pkg: 'pro' });
    for (const dataset of ['system/api-usage', 'system/data-collection-log', 'system/sync-metadata']) {
      const res = await server.request('GET', `/api/v1/export/${dataset}`, { headers: bearer(pro.key) });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json.code, 'invalid_request');
      assert.equal(res.json.dataset, dataset);
      assert.match(res.json.detail, new RegExp(`read it page by page with GET /api/v1/data/${dataset}`));
    }
    assert.deepEqual(await server.deps.store.listUsage({ accountId: pro.id }, null, 5), []);
    assert.equal(await server.deps.store.datasetSource('system/api-usage'), null, 'no sample rows made');
  });

  test('sample data exports too, marked as sample; a small dataset is one block', async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    const res = await server.request('GET', '/api/v1/export/cftc/legacy_futures-facts', {
      headers: bearer(partner.key),
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-data-sample'), 'true');
    const rows = (await server.deps.store.datasetSource('cftc/legacy_futures-facts'))?.rows;
    assert.ok(rows !== undefined && rows > 0 && rows <= 1000);
    assert.equal(res.headers.get('x-export-rows'), String(rows));
    assert.equal(res.headers.get('x-token-cost'), '5');
    assert.equal(res.text.trimEnd().split('\n').length, rows);
  });

  test('sandbox and public-test keys, and accounts without bulk_export, are 403 forbidden naming the packages', async () => {
    const sandbox = await sandboxKey(server);
    const fpt = await publicTestKey(server);
    const starter = await operatorAccount(server, { pkg: 'starter' });
    const none = await operatorAccount(server, { tokens: 100 });
    const cases: [string, string][] = [
      [
        sandbox,
        `Bulk export is not available with a sandbox key; it comes with the ${PACKAGES_DETAIL} packages, on a wallet-backed key or session.`,
      ],
      [
        fpt.key,
        `Bulk export is not available with a public-test key; it comes with the ${PACKAGES_DETAIL} packages, on a wallet-backed key or session.`,
      ],
      [
        starter.key,
        `Bulk export comes with the ${PACKAGES_DETAIL} packages; this account's package does not include it. Packages are assigned by an operator (checkout is not live).`,
      ],
      [
        none.session,
        `Bulk export comes with the ${PACKAGES_DETAIL} packages; this account's package does not include it. Packages are assigned by an operator (checkout is not live).`,
      ],
    ];
    for (const [credential, detail] of cases) {
      const res = await server.request('GET', '/api/v1/export/cftc/legacy_futures-facts', {
        headers: bearer(credential),
      });
      assert.equal(res.status, 403, detail);
      assert.equal(res.json.code, 'forbidden');
      assert.equal(res.json.detail, detail);
      assert.deepEqual(res.json.packages, ['pro', 'workbench', 'partner']);
    }
    assert.equal((await server.deps.store.listUsage({ accountId: none.id }, null, 5)).length, 0);
  });

  test('a wallet that cannot cover the export is 402 before anything streams; early_bird does not grandfather exports', async () => {
    // Made before the cohort cutoff (this server's clock is in December 2025), with an empty wallet.
    const early = await operatorAccount(server);
    const set = await adminRequest(server, 'PUT', `/api/v1/admin/accounts/${early.id}/early-bird`, {
      body: { early_bird: true },
    });
    assert.equal(set.status, 200, set.text);
    const poor = await operatorAccount(server, { tokens: 14 });
    // bulk_export without the monthly credit an operator's assignment would bring.
    for (const account of [early, poor])
      await server.deps.store.updateAccount(account.id, { packageId: 'pro' });
    const login = await server.request('POST', '/api/v1/auth/login', {
      headers: { 'x-forwarded-for': freshIp() },
      body: { email: early.email, password: early.password },
    });
    for (const credential of [login.json.token, poor.key]) {
      const res = await server.request('GET', `/api/v1/export/${H15}`, { headers: bearer(credential) });
      assert.equal(res.status, 402, res.text);
      assert.equal(res.json.code, 'insufficient_tokens');
      assert.equal(res.json.required_tokens, '15');
    }
    const grandfathered = await server.request('GET', `/api/v1/data/${H15}?limit=1`, {
      headers: bearer(login.json.token),
    });
    assert.equal(grandfathered.json.meta.cost.outcome, 'grandfathered', 'research reads still are');
  });

  test("the key's spending cap applies to exports", async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    await server.request('PATCH', `/api/v1/keys/${partner.keyId}`, {
      headers: bearer(partner.session),
      body: { daily_tokens: 10 },
    });
    const res = await server.request('GET', `/api/v1/export/${H15}`, { headers: bearer(partner.key) });
    assert.equal(res.status, 402);
    assert.equal(res.json.code, 'spending_cap_reached');
    assert.equal(res.json.required_tokens, '15');
  });

  test('a stream that fails on our side after the charge is refunded', async () => {
    const pro = await operatorAccount(server, { pkg: 'pro' });
    failOnQuery = (query) => query.dataset === H15 && query.after !== undefined;
    try {
      const response = await fetch(`${server.url}/api/v1/export/${H15}`, { headers: bearer(pro.key) });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-request-tokens'), '15');
      await assert.rejects(response.text(), 'the stream is cut, not ended cleanly');
    } finally {
      failOnQuery = null;
    }
    // The refund commits before the stream is cut, so it is there when the client sees the break.
    const entries = await server.deps.store.listEntries(pro.walletId);
    assert.deepEqual(
      entries.slice(-2).map((e) => [e.kind, e.amountMicros, e.memo]),
      [
        ['burn', -15_000_000n, null],
        ['refund', 15_000_000n, `refund: export of ${H15} failed after 1000 rows`],
      ],
    );
  });

  test('a refunded export no longer counts toward the spending cap or the month burn (the tier)', async () => {
    const partner = await operatorAccount(server, { pkg: 'partner' });
    await server.request('PATCH', `/api/v1/keys/${partner.keyId}`, {
      headers: bearer(partner.session),
      body: { daily_tokens: 16 },
    });
    failOnQuery = (query) => query.dataset === H15 && query.after !== undefined;
    try {
      const failed = await fetch(`${server.url}/api/v1/export/${H15}`, { headers: bearer(partner.key) });
      await assert.rejects(failed.text());
    } finally {
      failOnQuery = null;
    }
    // Refunded: the cap has all 16 tokens again, so a 15-token export goes through.
    const again = await server.request('GET', `/api/v1/export/${H15}`, { headers: bearer(partner.key) });
    assert.equal(again.status, 200, again.text);
    const me = await server.request('GET', '/api/v1/me', { headers: bearer(partner.key) });
    assert.equal(me.json.burned_this_month, '15');
    const usage = await server.deps.store.listUsage({ accountId: partner.id }, null, 10);
    assert.deepEqual(usage.map((u) => [u.outcome, u.burnedMicros]).sort(), [
      ['charged', 15_000_000n],
      ['charged', 15_000_000n],
      ['refunded', -15_000_000n],
    ]);
  });

  test('a refund made after midnight gives back the day of the charge: the new day has its cap, no more', async () => {
    const DAY = 86_400_000;
    const partner = await operatorAccount(server, { pkg: 'partner' });
    await server.request('PATCH', `/api/v1/keys/${partner.keyId}`, {
      headers: bearer(partner.session),
      body: { daily_tokens: 16 },
    });
    const midnight = (Math.floor(server.clock.now() / DAY) + 1) * DAY;
    server.clock.t = midnight - 1000;
    // The stream fails on its second page, two seconds later: the refund is made on the next UTC day.
    failOnQuery = (query) => {
      if (query.dataset !== H15 || query.after === undefined) return false;
      server.clock.t = midnight + 1000;
      return true;
    };
    try {
      const failed = await fetch(`${server.url}/api/v1/export/${H15}`, { headers: bearer(partner.key) });
      assert.equal(failed.status, 200);
      await assert.rejects(failed.text());
    } finally {
      failOnQuery = null;
    }
    const usage = await server.deps.store.listUsage({ accountId: partner.id }, null, 10);
    assert.deepEqual(
      usage.map((u) => [u.outcome, u.at]),
      [
        ['refunded', midnight - 1000],
        ['charged', midnight - 1000],
      ],
      'the reversal is dated with the charge it reverses',
    );
    const first = await server.request('GET', `/api/v1/export/${H15}`, { headers: bearer(partner.key) });
    assert.equal(first.status, 200, first.text);
    const second = await server.request('GET', `/api/v1/export/${H15}`, { headers: bearer(partner.key) });
    assert.equal(second.status, 402, 'a second 15-token export would pass the 16-token cap of the new day');
    assert.equal(second.json.code, 'spending_cap_reached');
    assert.equal(second.json.spent_tokens, '15');
  });

  test('HEAD is not an export: 405, nothing charged', async () => {
    const pro = await operatorAccount(server, { pkg: 'pro' });
    const res = await server.request('HEAD', `/api/v1/export/${H15}`, { headers: bearer(pro.key) });
    assert.equal(res.status, 405);
    assert.equal((await server.deps.store.listUsage({ accountId: pro.id }, null, 5)).length, 0);
  });
});
