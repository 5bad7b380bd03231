/**
 * GET /metrics read by real parsers: the Prometheus text format parsed family by family, and the
 * OpenMetrics exposition a scraper negotiates, after a few reads and refusals.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { H15, h15Rows } from './helpers/h15.ts';
import { operatorAccount } from './helpers/operator.ts';
import { bearer, startServer, type TestServer } from './helpers/server.ts';

interface Sample {
  value?: string;
  labels?: Record<string, string>;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}
interface Family {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Sample[];
}
const parsePrometheus = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => Family[];

let server: TestServer;
before(async () => {
  server = await startServer();
  await server.deps.store.loadRows(H15, 'date', h15Rows(50), 'import');
});
after(() => server.close());

async function scrape(accept?: string) {
  const res = await server.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { host: '127.0.0.1', ...(accept ? { accept } : {}) },
  });
  assert.equal(res.statusCode, 200);
  return { type: String(res.headers['content-type']), text: res.body };
}

const family = (families: Family[], name: string) => {
  const found = families.find((f) => f.name === name);
  assert.ok(found, `family ${name}`);
  return found;
};
const sample = (f: Family, labels: Record<string, string>) =>
  f.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));

test('after reads and refusals: request, read, token, refusal, ledger, limiter, pool and process families', async () => {
  const account = await operatorAccount(server, { tokens: 100 });
  for (let i = 0; i < 3; i++) {
    const read = await server.request('GET', `/api/v1/data/${H15}?limit=5`, { headers: bearer(account.key) });
    assert.equal(read.status, 200, read.text);
  }
  const burned = Number(
    (
      await server.request('GET', `/api/v1/data/${H15}?limit=5`, { headers: bearer(account.key) })
    ).headers.get('x-request-tokens'),
  );
  assert.equal((await server.request('GET', `/api/v1/data/${H15}?limit=5`)).status, 401);
  assert.equal((await server.request('GET', '/api/v1/nowhere')).status, 404);

  const { type, text } = await scrape();
  assert.equal(type, 'text/plain; version=0.0.4; charset=utf-8');
  const families = parsePrometheus(text);

  // The parser merges a labelled histogram's series into one (it predates labels on histograms): its
  // family and type come from the parser, each series' count from its own line.
  assert.equal(family(families, 'tmd_http_request_duration_seconds').type, 'HISTOGRAM');
  const count = (labels: string) =>
    Number(
      new RegExp(`^tmd_http_request_duration_seconds_count\\{${labels}\\} (\\d+)$`, 'm').exec(text)?.[1],
    );
  assert.equal(count('route="/api/v1/data/:domain/:name",method="GET",status_class="2xx"'), 4);
  assert.equal(count('route="/api/v1/data/:domain/:name",method="GET",status_class="4xx"'), 1);
  assert.equal(count('route="unmatched",method="GET",status_class="4xx"'), 1);
  assert.match(
    text,
    /^tmd_http_request_duration_seconds_bucket\{le="\+Inf",route="\/api\/v1\/data\/:domain\/:name",method="GET",status_class="2xx"\} 4$/m,
  );

  const listCost = server.deps.catalog.search({ q: 'h15' }).find((e) => e.key === H15)?.listCost ?? 0;
  const costClass = listCost <= 1 ? '1' : listCost <= 5 ? '2-5' : listCost <= 20 ? '6-20' : '21-100';
  const reads = family(families, 'tmd_reads_total');
  assert.equal(reads.type, 'COUNTER');
  assert.equal(sample(reads, { channel: 'rest', cost_class: costClass })?.value, '4');
  assert.equal(sample(reads, { channel: 'mcp', cost_class: costClass })?.value, '0');
  const tokens = family(families, 'tmd_tokens_burned_total');
  assert.equal(Number(sample(tokens, { channel: 'rest', cost_class: costClass })?.value), 4 * burned);

  const refusals = family(families, 'tmd_refusals_total');
  assert.equal(sample(refusals, { code: 'missing_credentials' })?.value, '1');
  assert.equal(sample(refusals, { code: 'not_found' })?.value, '1');

  assert.equal(family(families, 'tmd_ledger_debit_duration_seconds').metrics[0]?.count, '4');
  assert.ok(Number(family(families, 'tmd_limiter_admission_duration_seconds').metrics[0]?.count) >= 6);
  const pool = family(families, 'tmd_store_pool_connections');
  assert.deepEqual(pool.metrics.map((m) => m.labels?.state).sort(), ['idle', 'total', 'waiting']);
  for (const name of [
    'tmd_limiter_degraded',
    'tmd_limiter_fallback_transitions_total',
    'tmd_limiter_local_decisions_total',
    'tmd_store_unreachable',
    'tmd_store_unavailable_total',
    'process_cpu_seconds_total',
    'process_resident_memory_bytes',
    'nodejs_eventloop_lag_p99_seconds',
    'nodejs_heap_size_used_bytes',
  ]) {
    family(families, name);
  }
});

test('OpenMetrics when the scraper asks for it: its content type, # EOF, and no family name used twice', async () => {
  const { type, text } = await scrape(
    'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
  );
  assert.equal(type, 'application/openmetrics-text; version=1.0.0; charset=utf-8');
  assert.ok(text.endsWith('# EOF\n'));
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (!match) continue;
    assert.ok(!types.has(match[1] as string), `family ${match[1]} is declared once`);
    types.set(match[1] as string, match[2] as string);
  }
  assert.equal(types.get('tmd_store_unavailable'), 'counter');
  assert.equal(types.get('tmd_store_unreachable'), 'gauge');
  assert.equal(types.get('tmd_reads'), 'counter');
  // Every sample belongs to a declared family: a counter's samples end in _total, a histogram's in
  // _bucket, _sum or _count.
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const name = (/^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line) as RegExpExecArray)[0];
    const owner = [name, name.replace(/_(total|bucket|sum|count|created)$/, '')].find((n) => types.has(n));
    assert.ok(owner, `${name} has a family`);
    if (types.get(owner as string) === 'counter') assert.match(name, /_total$/);
  }
});

test('the Grafana dashboard in docs/ plots only series the service exposes', async () => {
  const { text } = await scrape();
  const dashboard = JSON.parse(
    readFileSync(new URL('../docs/grafana-dashboard.json', import.meta.url), 'utf8'),
  );
  const exprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) =>
    p.targets.map((t) => t.expr),
  );
  const names = new Set(exprs.flatMap((e) => e.match(/\b(?:tmd|process|nodejs)_[a-z0-9_]+/g) ?? []));
  assert.ok(names.size >= 12, [...names].join(' '));
  for (const name of names) assert.match(text, new RegExp(`^${name}[{ ]`, 'm'), name);
});

test('a refused MCP tool call (an HTTP 200 with isError) counts in tmd_refusals_total by its code', async () => {
  const account = await operatorAccount(server, { tokens: 10 });
  const refusedBefore = () =>
    scrape().then(({ text }) => {
      const f = parsePrometheus(text).find((x) => x.name === 'tmd_refusals_total');
      return Number((f && sample(f, { code: 'dataset_not_found' })?.value) ?? 0);
    });
  const before = await refusedBefore();
  const res = await server.request('POST', '/mcp/jsonrpc', {
    headers: { ...bearer(account.key), accept: 'application/json, text/event-stream' },
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'read_dataset', arguments: { dataset: 'nope/nothing' } },
    },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.result.isError, true);
  assert.equal(await refusedBefore(), before + 1);
});

test('each exposition counts every read once, however scrapes of the two interleave', async () => {
  const account = await operatorAccount(server, { tokens: 100 });
  const read = async () =>
    assert.equal(
      (await server.request('GET', `/api/v1/data/${H15}?limit=5`, { headers: bearer(account.key) })).status,
      200,
    );
  const openMetrics = 'application/openmetrics-text;version=1.0.0';
  const served = async (accept?: string) => {
    const { text } = await scrape(accept);
    return [...text.matchAll(/^tmd_reads_total\{channel="rest",[^}]*\} (\d+)$/gm)].reduce(
      (sum, match) => sum + Number(match[1]),
      0,
    );
  };
  const [prometheus, open] = [await served(), await served(openMetrics)];
  await read();
  assert.equal(await served(), prometheus + 1);
  await read();
  assert.equal(await served(), prometheus + 2);
  assert.equal(await served(openMetrics), open + 2);
  assert.equal(await served(openMetrics), open + 2, 'a second scrape adds nothing');
  assert.equal(await served(), prometheus + 2);
});
