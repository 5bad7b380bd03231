/**
 * The clients generated from the OpenAPI document, against the real service over a socket: the
 * TypeScript client pages with its async iterator, survives a 429 (the server's own, and a lost answer)
 * sending one Idempotency-Key and being charged once, and throws problems typed by code; the Python
 * client does the same under python3; and the staleness check that `npm run lint` runs.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import {
  createTmdClient,
  isProblem,
  type Page,
  retryAfterMs,
  retryingFetch,
  TmdProblemError,
} from '../clients/typescript/src/client.ts';
import { generateClients, staleFiles } from '../scripts/clients/generate.ts';
import { openapiDocument } from '../scripts/openapi-document.ts';
import type { Store } from '../src/store/port.ts';
import { type RecordingProxy, startRecordingProxy } from './helpers/recording-proxy.ts';
import {
  assertLedgerBalanced,
  bearer,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

const run = promisify(execFile);
const DATA = '/api/v1/data/equities/stock-prices';
const WINDOW = { from: '2026-11-01', to: '2026-11-20', filters: { symbol: 'AAPL' } };

/** While `gate` is set, the store's page queries wait for it (`held` of them): a read holds its slot. */
let gate: Promise<void> | undefined;
let held = 0;
const gated = (store: Store): Store =>
  new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'queryRows' || property === 'queryPage') {
        return async (query: Parameters<Store['queryPage']>[0]) => {
          if (gate) {
            held++;
            await gate;
            held--;
          }
          return property === 'queryRows' ? target.queryRows(query) : target.queryPage(query);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

let server: TestServer;
let proxy: RecordingProxy;
before(async () => {
  server = await startServer({
    listen: true,
    wrapStore: gated,
    config: (config) => {
      // One read in flight per credential: a second is refused 429 concurrency_limit, Retry-After: 1.
      config.limits.wallet.concurrent = 1;
      for (const tier of config.pricing.loyalty_tiers) tier.rate_limit = 100_000;
    },
  });
  proxy = await startRecordingProxy(server.url);
});
after(async () => {
  await assertLedgerBalanced(server);
  await proxy.close();
  await server.close();
});

async function burns(walletId: string): Promise<number> {
  return (await server.deps.store.listEntries(walletId)).filter((e) => e.kind === 'burn').length;
}

const dataExchanges = (from: number) => proxy.exchanges.slice(from).filter((e) => e.path.startsWith(DATA));

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(10);
}

describe('TypeScript client', () => {
  test('pages through a dataset with its async iterator, one charged read per page', async () => {
    const { key, account } = await walletAccount(server, 100);
    const tmd = createTmdClient({ baseUrl: proxy.url, apiKey: key });
    const pages: Page[] = [];
    for await (const page of tmd.pages('equities', 'stock-prices', { ...WINDOW, limit: 5 })) pages.push(page);
    const whole = await tmd.readDataset('equities', 'stock-prices', { ...WINDOW, limit: 100 });

    assert.ok(pages.length >= 3, `${pages.length} pages`);
    assert.deepEqual(
      pages.map((p) => p.meta.count),
      [...pages.slice(0, -1).map(() => 5), whole.data.length - 5 * (pages.length - 1)],
    );
    assert.equal(pages.at(-1)?.meta.next_cursor, null);
    assert.deepEqual(
      pages.flatMap((p) => p.data.map((row) => row.date)),
      whole.data.map((row) => row.date),
      'the pages hold the rows of one big read, in order, none twice',
    );
    assert.equal(await burns(account.walletId), pages.length + 1);

    const rows: unknown[] = [];
    for await (const row of tmd.rows('equities', 'stock-prices', { ...WINDOW, limit: 10 })) rows.push(row);
    assert.equal(rows.length, whole.data.length);
  });

  test("survives the server's 429 (Retry-After: 1), sending one Idempotency-Key and charged once", async () => {
    const { key, account } = await walletAccount(server, 100);
    const tmd = createTmdClient({ baseUrl: proxy.url, apiKey: key });
    let open = () => {};
    gate = new Promise((resolve) => {
      open = resolve;
    });
    // Another read of the same credential holds its one slot until the gate opens.
    const blocker = fetch(`${server.url}${DATA}?symbol=MSFT&limit=1`, { headers: bearer(key) });
    await until(() => held === 1);
    const seen = proxy.exchanges.length;
    const started = Date.now();
    const reading = tmd.readDataset('equities', 'stock-prices', { filters: { symbol: 'AAPL' }, limit: 3 });
    await until(() => dataExchanges(seen).length === 1);
    gate = undefined;
    open();
    assert.equal((await blocker).status, 200);
    const page = await reading;

    assert.equal(page.meta.count, 3);
    assert.ok(Date.now() - started >= 1000, 'it waited the Retry-After second');
    const attempts = dataExchanges(seen);
    assert.deepEqual(
      attempts.map((e) => e.status),
      [429, 200],
    );
    assert.ok(attempts[0]?.idempotencyKey, 'the read carries an Idempotency-Key');
    assert.equal(attempts[1]?.idempotencyKey, attempts[0]?.idempotencyKey, 'the retry sends the same key');
    assert.equal(await burns(account.walletId), 2, 'the blocker and the client read, each charged once');
  });

  test('a read whose answer was lost is retried with its key, replayed and charged once', async () => {
    const { key, account } = await walletAccount(server, 100);
    const tmd = createTmdClient({ baseUrl: proxy.url, apiKey: key });
    const seen = proxy.exchanges.length;
    proxy.loseNext((path) => path.startsWith(DATA), 503);
    const page = await tmd.readDataset('equities', 'stock-prices', { filters: { symbol: 'MSFT' }, limit: 2 });

    assert.equal(page.meta.count, 2);
    const attempts = dataExchanges(seen);
    assert.deepEqual(
      attempts.map((e) => [e.status, e.sent, e.replayed]),
      [
        [200, 503, false],
        [200, 200, true],
      ],
    );
    assert.equal(attempts[1]?.idempotencyKey, attempts[0]?.idempotencyKey);
    assert.equal(await burns(account.walletId), 1, 'the server read once and replayed the retry');
    assert.equal(page.meta.cost.credits_remaining, '98');
  });

  test('an unknown dataset is a TmdProblemError narrowed by its code', async () => {
    const { key } = await walletAccount(server, 100);
    const tmd = createTmdClient({ baseUrl: proxy.url, apiKey: key });
    const error = await tmd.readDataset('equities', 'no-such-dataset').then(
      () => assert.fail('no error'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof TmdProblemError);
    assert.ok(isProblem(error, 'dataset_not_found'));
    assert.ok(!isProblem(error, 'insufficient_tokens'));
    assert.deepEqual(
      [error.code, error.status, error.title],
      ['dataset_not_found', 404, 'Dataset not found'],
    );
    assert.match(error.detail, /no-such-dataset/);
    assert.match(error.requestId ?? '', /\S/);
  });

  test('the typed API answers any operation and throws problems from unwrap-ed calls', async () => {
    const { key } = await walletAccount(server, 100);
    const tmd = createTmdClient({ baseUrl: proxy.url, apiKey: key });
    const { data } = await tmd.api.GET('/api/v1/me');
    assert.equal(data?.wallet.balance, '100');
    const anonymous = createTmdClient({ baseUrl: proxy.url });
    const { error, response } = await anonymous.api.GET('/api/v1/me');
    assert.equal(response.status, 401);
    assert.equal(error?.code, 'missing_credentials');
  });
});

describe('TypeScript client retries (a fake fetch)', () => {
  const ok = () => new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
  const refused = (status: number, retryAfter?: string) =>
    new Response('{"code":"rate_limited"}', {
      status,
      headers: {
        'content-type': 'application/problem+json',
        ...(retryAfter ? { 'retry-after': retryAfter } : {}),
      },
    });
  function scripted(answers: (() => Response)[]) {
    const calls: Request[] = [];
    const waits: number[] = [];
    const fetch = retryingFetch(
      async (request) => {
        calls.push(request);
        const next = answers.shift();
        if (!next) throw new Error('no more answers');
        return next();
      },
      { sleep: async (ms) => void waits.push(ms) },
    );
    return { fetch, calls, waits };
  }
  const network = () => {
    throw new TypeError('fetch failed');
  };

  test('Retry-After in seconds and as an HTTP date is waited out; junk falls back to backoff', () => {
    const now = Date.parse('2015-10-21T07:28:00Z');
    assert.equal(retryAfterMs('7'), 7000);
    assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:30 GMT', now), 30_000);
    assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:27:00 GMT', now), 0);
    assert.equal(retryAfterMs('soon'), undefined);
    assert.equal(retryAfterMs(null), undefined);
  });

  test('429 then 503 then 200: two waits as asked, the same request each time', async () => {
    const { fetch, calls, waits } = scripted([() => refused(429, '2'), () => refused(503, '1'), ok]);
    const request = new Request('http://x/api', { headers: { 'idempotency-key': 'k1' } });
    assert.equal((await fetch(request)).status, 200);
    assert.deepEqual(waits, [2000, 1000]);
    assert.deepEqual(
      calls.map((c) => c.headers.get('idempotency-key')),
      ['k1', 'k1', 'k1'],
    );
  });

  test('at most two retries, and a Retry-After past the cap is answered at once', async () => {
    const three = scripted([() => refused(429, '1'), () => refused(429, '1'), () => refused(429, '1'), ok]);
    assert.equal((await three.fetch(new Request('http://x/'))).status, 429);
    assert.equal(three.calls.length, 3);
    const daily = scripted([() => refused(429, '3600'), ok]);
    assert.equal((await daily.fetch(new Request('http://x/'))).status, 429);
    assert.equal(daily.calls.length, 1, 'an hour is not waited');
  });

  test('network errors and 503 are retried only when the request can be repeated', async () => {
    const get = scripted([network, ok]);
    assert.equal((await get.fetch(new Request('http://x/'))).status, 200);
    assert.equal(get.waits.length, 1);
    assert.ok(get.waits[0] !== undefined && get.waits[0] >= 250 && get.waits[0] <= 500, 'jittered backoff');

    const post = scripted([network, ok]);
    await assert.rejects(post.fetch(new Request('http://x/', { method: 'POST', body: '{}' })), TypeError);
    const post503 = scripted([() => refused(503), ok]);
    assert.equal((await post503.fetch(new Request('http://x/', { method: 'POST', body: '{}' }))).status, 503);

    const keyed = scripted([network, () => refused(429), ok]);
    const request = new Request('http://x/', {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'idempotency-key': 'k' },
    });
    assert.equal((await keyed.fetch(request)).status, 200);
    assert.deepEqual(await Promise.all(keyed.calls.map((c) => c.text())), ['{"a":1}', '{"a":1}', '{"a":1}']);
  });
});

describe('Python client', () => {
  test('pages, survives a lost answer with one key and one charge, raises problems by code', async () => {
    const { key, account } = await walletAccount(server, 100);
    const seen = proxy.exchanges.length;
    proxy.loseNext((path) => path.startsWith(DATA) && path.includes('symbol=MSFT'), 429);
    const { stdout } = await run('python3', ['test/python/clients_driver.py'], {
      env: {
        ...process.env,
        PYTHONPATH: 'clients/python',
        PYTHONDONTWRITEBYTECODE: '1',
        TMD_URL: proxy.url,
        TMD_KEY: key,
      },
    });
    const out = JSON.parse(stdout);

    assert.ok(out.is_page);
    assert.ok(out.pages.length >= 3);
    assert.deepEqual(
      out.pages.flatMap((p: { dates: string[] }) => p.dates),
      out.whole,
      'the pages hold the rows of one big read, in order',
    );
    assert.equal(out.pages.at(-1).next_cursor, null);
    assert.ok(out.pages.slice(0, -1).every((p: { count: number }) => p.count === 5));
    assert.equal(out.cost_header, '2');

    assert.deepEqual(out.survived, { count: 2, symbols: ['MSFT'] });
    const msft = dataExchanges(seen).filter((e) => e.path.includes('symbol=MSFT'));
    assert.deepEqual(
      msft.map((e) => [e.status, e.sent, e.replayed]),
      [
        [200, 429, false],
        [200, 200, true],
      ],
    );
    assert.ok(msft[0]?.idempotencyKey);
    assert.equal(msft[1]?.idempotencyKey, msft[0]?.idempotencyKey, 'the retry sends the same key');
    const pagesRead = out.pages.length + 1;
    assert.equal(await burns(account.walletId), pagesRead + 1, 'each page once, the lost read once');

    assert.deepEqual(
      { ...out.problem, detail: undefined },
      {
        code: 'dataset_not_found',
        is_constant: true,
        status: 404,
        title: 'Dataset not found',
        detail: undefined,
        suggestions: out.problem.suggestions,
      },
    );
    assert.match(out.problem.detail, /no-such-dataset/);

    if (out.pandas.installed) {
      assert.deepEqual(out.pandas.shape, [out.whole.length, 12]);
      assert.equal(out.pandas.columns[0], 'symbol');
    } else {
      assert.match(
        out.pandas.error,
        /to_pandas\(\) needs pandas, which is not installed: pip install pandas/,
      );
    }
    assert.deepEqual(out.retry_after, { seconds: 7, date: 30, past: 0, junk: null });
  });

  test('to_pandas() builds a DataFrame from a page and from all pages, columns in meta.fields order', async () => {
    const script = [
      'import json',
      'from tmd_client import Page, Pages',
      'meta = {"fields": ["date", "close"], "next_cursor": "c2"}',
      'first = Page(data=[{"close": 1, "date": "d1"}], meta=meta)',
      'last = Page(data=[{"close": 2, "date": "d2"}], meta={**meta, "next_cursor": None})',
      'frame = first.to_pandas()',
      'every = Pages(lambda cursor: last if cursor == "c2" else first).to_pandas()',
      'print(json.dumps([frame.columns, frame.shape, every.columns, every.rows]))',
    ].join('\n');
    const { stdout } = await run('python3', ['-c', script], {
      env: {
        ...process.env,
        PYTHONPATH: 'test/python/stub_pandas:clients/python',
        PYTHONDONTWRITEBYTECODE: '1',
      },
    });
    assert.deepEqual(JSON.parse(stdout), [
      ['date', 'close'],
      [1, 2],
      ['date', 'close'],
      [
        { close: 1, date: 'd1' },
        { close: 2, date: 'd2' },
      ],
    ]);
  });
});

describe('generated clients', () => {
  let files: Map<string, string>;
  let copy: string;
  before(async () => {
    files = await generateClients(await openapiDocument());
    copy = mkdtempSync(join(tmpdir(), 'tmd-clients-'));
    cpSync('clients', join(copy, 'clients'), { recursive: true });
  });
  after(() => rmSync(copy, { recursive: true, force: true }));

  test('the committed clients are the ones the current document generates, and generation is stable', async () => {
    assert.deepEqual(staleFiles('.', files), []);
    const again = await generateClients(await openapiDocument());
    assert.deepEqual([...again], [...files]);
  });

  test('a hand-edited or left-over generated file fails the check, naming it', async () => {
    const edited = 'clients/python/tmd_client/client.py';
    writeFileSync(join(copy, edited), `${files.get(edited)}# edited\n`);
    writeFileSync(join(copy, 'clients/python/tmd_client/old.py'), '');
    assert.deepEqual(staleFiles(copy, files), [edited, 'clients/python/tmd_client/old.py']);

    const check = await run(process.execPath, [
      '--disable-warning=ExperimentalWarning',
      'scripts/clients.ts',
      '--check',
      '--root',
      copy,
    ]).then(
      () => assert.fail('the check passed'),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(check.code, 1);
    assert.match(check.stderr, /stale \(run npm run clients\)/);
    assert.match(check.stderr, /clients\/python\/tmd_client\/client\.py/);
  });
});
