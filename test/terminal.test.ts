/**
 * The Terminal over HTTP: its pages and their headers, `/` redirecting there, the API routes it added
 * (prices, ledger, usage summary, entity suggestions), and the session cookie spending tokens only from
 * the service's own pages.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { formatMicros, tokensToMicros } from '../src/domain/money.ts';
import { bearer, publicTestKey, startServer, type TestServer, walletAccount } from './helpers/server.ts';

// Built by npm install; in CI a missing build fails these tests rather than skipping them.
const built = existsSync(new URL('../web/dist/index.html', import.meta.url)) || process.env.CI === 'true';

describe('the Terminal is served at /terminal/', {
  skip: built ? false : 'web/dist not built (npm install)',
}, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('/ redirects to /terminal/', async () => {
    const res = await server.request('GET', '/', { headers: { accept: 'text/html' } });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), '/terminal/');
  });

  test('the page comes with a strict CSP, nosniff and no framing; assets are cached for good', async () => {
    const page = await server.request('GET', '/terminal/', { headers: { accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const directive of [
      "default-src 'self'",
      "script-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ]) {
      assert.ok(csp.split('; ').includes(directive), `${directive} in ${csp}`);
    }
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    assert.equal(page.headers.get('cache-control'), 'no-cache');
    // No inline script: every script is a file of the app.
    assert.doesNotMatch(page.text, /<script(?![^>]*\bsrc=)[^>]*>/);
    const asset = /src="(\/terminal\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
    assert.ok(asset, page.text);
    const js = await server.request('GET', asset);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /javascript/);
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(js.headers.get('x-content-type-options'), 'nosniff');
  });

  test('a deep link is a page of the app; a missing asset is a problem+json 404', async () => {
    const deep = await server.request('GET', '/terminal/dataset/fred/series', {
      headers: { accept: 'text/html,application/xhtml+xml' },
    });
    assert.equal(deep.status, 200);
    assert.match(deep.text, /<div id="app">/);
    assert.ok(deep.headers.get('content-security-policy'));
    const missing = await server.request('GET', '/terminal/assets/nothing.js', {
      headers: { accept: '*/*' },
    });
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /application\/problem\+json/);
    assert.equal(missing.json.code, 'not_found');
  });

  test('its pages are not in the OpenAPI document; the API routes it added are', async () => {
    const doc = (await server.request('GET', '/api/v1/openapi.json')).json;
    const paths = Object.keys(doc.paths);
    assert.ok(!paths.some((p) => p.startsWith('/terminal') || p === '/'), paths.join(' '));
    for (const path of [
      '/api/v1/me/prices',
      '/api/v1/me/ledger',
      '/api/v1/me/usage/summary',
      '/api/v1/catalog/{domain}/{name}/entities',
    ]) {
      assert.ok(doc.paths[path]?.get, path);
    }
  });
});

describe('GET /api/v1/me/prices', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('every dataset at the Terminal price (×1.35 after the discount) and the key price', async () => {
    const { session } = await walletAccount(server, 100);
    const res = await server.request('GET', '/api/v1/me/prices', { headers: bearer(session) });
    assert.equal(res.status, 200, res.text);
    const catalog = (await server.request('GET', '/api/v1/catalog')).json.data;
    assert.equal(res.json.data.length, catalog.length);
    assert.deepEqual(res.json.meta.tier, { level: 1, name: 'Recruit', discount_pct: 0 });
    const features = res.json.data.find((d: { key: string }) => d.key === 'analytics/features');
    assert.deepEqual(
      { ...features, fields: features.fields.length },
      {
        key: 'analytics/features',
        list_cost: 2,
        p0: false,
        fields: 9,
        terminal_cost: '2.7',
        api_key_cost: '2',
        entitled: true,
        data_source: 'none_yet',
      },
    );
  });

  test('the prices are the charges: a Terminal read and a key read cost exactly what it says', async () => {
    const { key, email, password } = await walletAccount(server, 100);
    const login = await server.request('POST', '/api/v1/auth/login', {
      body: { email, password, client: 'terminal' },
    });
    const terminal = login.json.token as string;
    const prices = (await server.request('GET', '/api/v1/me/prices', { headers: bearer(terminal) })).json
      .data;
    for (const dataset of ['analytics/features', 'stocks/prices']) {
      const price = prices.find((d: { key: string }) => d.key === dataset);
      const viaTerminal = await server.request('GET', `/api/v1/data/${dataset}?limit=1`, {
        headers: bearer(terminal),
      });
      assert.equal(viaTerminal.headers.get('x-token-cost'), price.terminal_cost, dataset);
      const viaKey = await server.request('GET', `/api/v1/data/${dataset}?limit=1`, { headers: bearer(key) });
      assert.equal(viaKey.headers.get('x-token-cost'), price.api_key_cost, dataset);
    }
    const after = (await server.request('GET', '/api/v1/me/prices', { headers: bearer(key) })).json.data;
    assert.equal(after.find((d: { key: string }) => d.key === 'stocks/prices').data_source, 'sample');
  });

  test("past a tier's threshold the prices carry its discount, before the surcharge, as the charge does", async () => {
    const { key, email, password } = await walletAccount(server, 1000);
    // 50 reads at 10 tokens: 500 burned this month, the Analyst tier's threshold (2% off).
    for (let i = 0; i < 50; i++) {
      const res = await server.request('GET', '/api/v1/data/system/xbrl-frames?limit=1', {
        headers: bearer(key),
      });
      assert.equal(res.status, 200, res.text);
    }
    const terminal = (
      await server.request('POST', '/api/v1/auth/login', { body: { email, password, client: 'terminal' } })
    ).json.token as string;
    const prices = (await server.request('GET', '/api/v1/me/prices', { headers: bearer(terminal) })).json;
    assert.deepEqual(prices.meta.tier, { level: 2, name: 'Analyst', discount_pct: 2 });
    const documents = prices.data.find((d: { key: string }) => d.key === 'filings/documents');
    assert.equal(documents.api_key_cost, '9.8');
    assert.equal(documents.terminal_cost, '13.23');
    const read = await server.request('GET', '/api/v1/data/filings/documents?limit=1', {
      headers: bearer(terminal),
    });
    assert.equal(read.headers.get('x-token-cost'), '13.23');
    assert.equal(read.headers.get('x-credits-remaining'), '486.77');
  });

  test('a free key is entitled to P0 datasets only', async () => {
    const { key } = await publicTestKey(server);
    const res = await server.request('GET', '/api/v1/me/prices', { headers: bearer(key) });
    assert.equal(res.status, 200);
    for (const line of res.json.data) assert.equal(line.entitled, line.p0, line.key);
  });

  test('without a credential: 401', async () => {
    const res = await server.request('GET', '/api/v1/me/prices');
    assert.equal(res.status, 401);
    assert.equal(res.json.code, 'missing_credentials');
  });
});

describe('GET /api/v1/me/ledger', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('entries newest first with the running balance, paged; they sum to the balance', async () => {
    const { key } = await walletAccount(server, 50);
    for (let i = 0; i < 4; i++) {
      assert.equal(
        (await server.request('GET', '/api/v1/data/analytics/features?limit=1', { headers: bearer(key) }))
          .status,
        200,
      );
    }
    const first = await server.request('GET', '/api/v1/me/ledger?limit=3', { headers: bearer(key) });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json.meta.balance, '42');
    assert.deepEqual(
      first.json.data.map((e: { kind: string; amount: string; balance_after: string }) => [
        e.kind,
        e.amount,
        e.balance_after,
      ]),
      [
        ['burn', '-2', '42'],
        ['burn', '-2', '44'],
        ['burn', '-2', '46'],
      ],
    );
    assert.ok(first.json.data.every((e: { request_id: string | null }) => e.request_id));
    const second = await server.request(
      'GET',
      `/api/v1/me/ledger?limit=3&cursor=${first.json.meta.next_cursor}`,
      {
        headers: bearer(key),
      },
    );
    assert.deepEqual(
      second.json.data.map((e: { kind: string; amount: string }) => [e.kind, e.amount]),
      [
        ['burn', '-2'],
        ['topup', '50'],
      ],
    );
    assert.equal(second.json.meta.next_cursor, null);
    const sum = [...first.json.data, ...second.json.data].reduce(
      (total: bigint, e: { amount: string }) => total + decimal(e.amount),
      0n,
    );
    assert.equal(formatMicros(sum), first.json.meta.balance);
  });

  test('a page reads its entries and the newest, not the whole ledger', async () => {
    const { key } = await walletAccount(server, 50);
    for (let i = 0; i < 3; i++) {
      await server.request('GET', '/api/v1/data/analytics/features?limit=1', { headers: bearer(key) });
    }
    const { store } = server.deps;
    const whole = store.listEntries;
    const pages: { limit: number }[] = [];
    const paged = store.listEntriesPage;
    store.listEntries = () => Promise.reject(new Error('the route loaded the whole ledger'));
    store.listEntriesPage = (walletId, page) => {
      pages.push({ limit: page.limit });
      return paged.call(store, walletId, page);
    };
    try {
      const first = await server.request('GET', '/api/v1/me/ledger?limit=2', { headers: bearer(key) });
      assert.equal(first.status, 200, first.text);
      const second = await server.request(
        'GET',
        `/api/v1/me/ledger?limit=2&cursor=${first.json.meta.next_cursor}`,
        { headers: bearer(key) },
      );
      assert.equal(second.status, 200, second.text);
      assert.deepEqual(
        [...first.json.data, ...second.json.data].map((e: { amount: string; balance_after: string }) => [
          e.amount,
          e.balance_after,
        ]),
        [
          ['-2', '44'],
          ['-2', '46'],
          ['-2', '48'],
          ['50', '50'],
        ],
      );
      assert.equal(second.json.meta.balance, '44', 'the balance now, on every page');
      assert.equal(second.json.meta.next_cursor, null);
      assert.deepEqual(pages, [{ limit: 3 }, { limit: 3 }, { limit: 1 }]);
    } finally {
      store.listEntries = whole;
      store.listEntriesPage = paged;
    }
  });

  test('a cursor it did not give is refused', async () => {
    const { key } = await walletAccount(server, 1);
    const res = await server.request('GET', '/api/v1/me/ledger?cursor=abc', { headers: bearer(key) });
    assert.equal(res.status, 400);
    assert.equal(res.json.code, 'invalid_cursor');
    const limit = await server.request('GET', '/api/v1/me/ledger?limit=0', { headers: bearer(key) });
    assert.equal(limit.status, 400);
    assert.equal(limit.json.code, 'invalid_request');
  });
});

/** An exact token string in micro-tokens. */
function decimal(tokens: string): bigint {
  const [whole = '0', fraction = ''] = tokens.replace('-', '').split('.');
  const value = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
  return tokens.startsWith('-') ? -value : value;
}

describe('GET /api/v1/me/usage/summary', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('tokens and reads per UTC day by channel, and the top datasets, over 30 days', async () => {
    const { key, email, password } = await walletAccount(server, 100);
    await server.request('GET', '/api/v1/data/analytics/features?limit=1', { headers: bearer(key) });
    server.clock.advance(24 * 60 * 60 * 1000);
    const terminal = (
      await server.request('POST', '/api/v1/auth/login', { body: { email, password, client: 'terminal' } })
    ).json.token as string;
    await server.request('GET', '/api/v1/data/analytics/features?limit=1', { headers: bearer(terminal) });
    await server.request('GET', '/api/v1/data/stocks/prices?limit=1', { headers: bearer(terminal) });
    const res = await server.request('GET', '/api/v1/me/usage/summary', { headers: bearer(key) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.days.length, 30);
    const today = new Date(server.clock.now()).toISOString().slice(0, 10);
    const yesterday = new Date(server.clock.now() - 86_400_000).toISOString().slice(0, 10);
    assert.equal(
      res.json.since,
      `${new Date(server.clock.now() - 29 * 86_400_000).toISOString().slice(0, 10)}T00:00:00.000Z`,
    );
    const day = (date: string) => res.json.days.find((d: { date: string }) => d.date === date);
    assert.deepEqual(day(yesterday), {
      date: yesterday,
      tokens_burned: { rest: '2', mcp: '0', terminal: '0' },
      reads: { rest: 1, mcp: 0, terminal: 0 },
    });
    assert.deepEqual(day(today), {
      date: today,
      tokens_burned: { rest: '0', mcp: '0', terminal: '5.4' },
      reads: { rest: 0, mcp: 0, terminal: 2 },
    });
    assert.deepEqual(res.json.top_datasets, [
      { dataset: 'analytics/features', tokens_burned: '4.7', reads: 2 },
      { dataset: 'stocks/prices', tokens_burned: '2.7', reads: 1 },
    ]);
    assert.equal(res.json.partial, false);
    const week = await server.request('GET', '/api/v1/me/usage/summary?days=1', { headers: bearer(key) });
    assert.deepEqual(
      week.json.days.map((d: { date: string }) => d.date),
      [today],
    );
    const bad = await server.request('GET', '/api/v1/me/usage/summary?days=91', { headers: bearer(key) });
    assert.equal(bad.status, 400);
  });

  test('the summary and system/api-usage are summed by the store, not paged through event by event', async () => {
    const { key } = await walletAccount(server, 100);
    for (let i = 0; i < 3; i++) {
      await server.request('GET', '/api/v1/data/analytics/features?limit=1', { headers: bearer(key) });
    }
    const { store } = server.deps;
    const listUsage = store.listUsage;
    store.listUsage = () => Promise.reject(new Error('the events were paged through one by one'));
    try {
      const summary = await server.request('GET', '/api/v1/me/usage/summary?days=1', {
        headers: bearer(key),
      });
      assert.equal(summary.status, 200, summary.text);
      assert.deepEqual(summary.json.days[0].reads, { rest: 3, mcp: 0, terminal: 0 });
      assert.deepEqual(summary.json.top_datasets, [
        { dataset: 'analytics/features', tokens_burned: '6', reads: 3 },
      ]);
      assert.equal(summary.json.partial, false);
      const usage = await server.request('GET', '/api/v1/data/system/api-usage?limit=10', {
        headers: bearer(key),
      });
      assert.equal(usage.status, 200, usage.text);
      assert.deepEqual(
        usage.json.data.map((r: { endpoint: string; method: string; requests: number }) => [
          r.endpoint,
          r.method,
          r.requests,
        ]),
        [['analytics/features', 'GET', 3]],
      );
    } finally {
      store.listUsage = listUsage;
    }
  });
});

describe('GET /api/v1/catalog/{domain}/{name}/entities', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test("the catalog's values for each entity field, free and without a key", async () => {
    const res = await server.request('GET', '/api/v1/catalog/analytics/features/entities');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.dataset, 'analytics/features');
    assert.deepEqual(res.json.entities.symbol.slice(0, 3), ['AAPL', 'AMGN', 'AMZN']);
    const missing = await server.request('GET', '/api/v1/catalog/analytics/nothing/entities');
    assert.equal(missing.status, 404);
    assert.equal(missing.json.code, 'dataset_not_found');
  });
});

describe("a cookie spends tokens only from the service's own pages", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  const read = '/api/v1/data/analytics/features?limit=1';

  test('a read with the session cookie needs an Origin of ours or Sec-Fetch-Site: same-origin, GET included', async () => {
    const { session, key, account } = await walletAccount(server, 100);
    const cookie = { cookie: `tmd_session=${session}` };
    const own = server.origin;
    const refused: Record<string, string>[] = [
      {},
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'none' },
      { origin: 'https://evil.example' },
      { origin: 'http://sub.127.0.0.1.nip.io', 'sec-fetch-site': 'same-origin' },
      { origin: 'null' },
    ];
    for (const headers of refused) {
      const res = await server.request('GET', read, { headers: { ...cookie, ...headers } });
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.equal(res.json.code, 'forbidden');
      assert.match(res.json.detail, /own pages/);
    }
    const balance = async () => (await server.deps.store.getWallet(account.walletId))?.balanceMicros;
    assert.equal(await balance(), tokensToMicros(100), 'nothing was burned by the refused reads');
    for (const headers of [{ 'sec-fetch-site': 'same-origin' }, { origin: own }] as Record<
      string,
      string
    >[]) {
      const res = await server.request('GET', read, { headers: { ...cookie, ...headers } });
      assert.equal(res.status, 200, `${JSON.stringify(headers)}: ${res.text}`);
    }
    // Credentials in headers are the caller's own choice, from anywhere.
    for (const credential of [bearer(key), bearer(session), { 'x-api-key': key }]) {
      const res = await server.request('GET', read, {
        headers: { ...credential, origin: 'https://evil.example' },
      });
      assert.equal(res.status, 200, res.text);
    }
    // Routes that burn nothing still take the cookie from anywhere on GET (the account, the catalog).
    const me = await server.request('GET', '/api/v1/me', {
      headers: { ...cookie, origin: 'https://evil.example' },
    });
    assert.equal(me.status, 200);
  });

  test('recipes and exports burn tokens too: the same rule', async () => {
    const { session } = await walletAccount(server, 100);
    const cookie = { cookie: `tmd_session=${session}` };
    for (const path of ['/api/v1/recipes/dow30-sandbox-smoke', '/api/v1/export/analytics/features']) {
      const res = await server.request('GET', path, {
        headers: { ...cookie, 'sec-fetch-site': 'same-site' },
      });
      assert.equal(res.status, 403, `${path}: ${res.text}`);
      assert.match(res.json.detail, /own pages/);
    }
  });
});
