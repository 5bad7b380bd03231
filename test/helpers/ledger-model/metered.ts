/**
 * The metered steps: reads by channel (a key over REST, MCP read_dataset, the Terminal's session cookie),
 * bursts of concurrent reads, estimates, bad input and exports, each checked against the model's outcome.
 */
import assert from 'node:assert/strict';
import type { TestResponse } from '../server.ts';
import { EXPORT_DATASET, EXPORT_ROWS, START } from './harness.ts';
import { type Channel, DAY_MS, isP0, listCost, meter, type Outcome, refundLast } from './model.ts';
import { type Actor, ipOf, MAX_ADVANCE_MS, type Run } from './runner.ts';
import { tokensOf } from './steps.ts';

/** The Terminal's session for the account (12 h long: a new one after time moved on). */
export async function session(run: Run, a: Actor): Promise<string> {
  const now = run.svc.clock.now();
  if (a.session && now - a.session.at < 6 * 3_600_000) return a.session.token;
  const res = await run.svc.request('POST', '/api/v1/auth/login', {
    body: { email: a.email, password: a.password, client: 'terminal' },
    headers: { 'x-forwarded-for': ipOf(run) },
  });
  assert.equal(res.status, 200, res.text);
  a.session = { token: res.json.token, at: now };
  return a.session.token;
}

/** A read's request by channel; the Terminal reads with its session cookie. A public-test key has no Terminal session here: it reads over REST. */
export async function send(
  run: Run,
  a: Actor,
  via: Channel,
  dataset: string,
  query: string,
  idempotencyKey?: string,
): Promise<TestResponse> {
  if (via === 'mcp') {
    const limit = query === 'limit=1' ? 1 : 0;
    const meta = idempotencyKey === undefined ? {} : { _meta: { idempotency_key: idempotencyKey } };
    return run.svc.request('POST', '/mcp/jsonrpc', {
      headers: { authorization: `Bearer ${a.key}`, accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'read_dataset', arguments: { dataset, limit }, ...meta },
      },
    });
  }
  const headers = await restHeaders(run, a, via);
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  return run.svc.request('GET', `/api/v1/data/${dataset}?${query}`, { headers });
}

async function restHeaders(run: Run, a: Actor, via: Channel): Promise<Record<string, string>> {
  return via === 'terminal' && a.model.kind === 'live'
    ? // As the Terminal's pages send it: the cookie, from a same-origin page.
      { cookie: `tmd_session=${await session(run, a)}`, 'sec-fetch-site': 'same-origin' }
    : { authorization: `Bearer ${a.key}` };
}

/**
 * GET /api/v1/estimate: free, and what a read would cost and whether it would be refused, as the model
 * (on a copy of the account) says the read itself would go.
 */
export async function estimate(run: Run, a: Actor, dataset: string, via: Channel): Promise<void> {
  const channel: Channel = via === 'terminal' && a.model.kind === 'live' ? 'terminal' : 'rest';
  const res = await run.svc.request('GET', `/api/v1/estimate?dataset=${dataset}`, {
    headers: await restHeaders(run, a, channel),
  });
  assert.equal(res.status, 200, res.text);
  const trial = structuredClone(a.model);
  const request = { dataset, label: dataset, list: listCost(run.prices, dataset), channel, export: false };
  const expected = meter(run.prices, trial, run.svc.clock.now(), request);
  const what = `${channel} estimate of ${dataset}`;
  assert.equal(res.json.would_refuse, expected.refusal, `${what}: ${res.text.slice(0, 300)}`);
  assert.equal(res.json.token_cost, tokensOf(expected.cost), `${what}: token_cost`);
  assert.equal(res.json.balance, tokensOf(a.model.balance), `${what}: balance`);
}

/** The refusal code of an answer (a problem, or an MCP tool result marked isError), or null when served. */
export function refusalOf(res: TestResponse): string | null {
  const problem = res.json?.result?._meta?.['tmd.example/problem'];
  if (res.json?.result?.isError) return String(problem?.code);
  if (res.json?.error) return `jsonrpc ${res.json.error.code}`;
  if (res.status >= 400) return String(res.json?.code ?? res.status);
  return null;
}

export function assertOutcome(res: TestResponse, expected: Outcome, what: string): void {
  assert.equal(refusalOf(res), expected.refusal, `${what}: ${res.text.slice(0, 300)}`);
  if (expected.refusal !== null) return;
  assert.equal(res.headers.get('x-token-cost'), tokensOf(expected.cost), `${what}: X-Token-Cost`);
  assert.equal(res.headers.get('x-request-tokens'), tokensOf(expected.burned), `${what}: X-Request-Tokens`);
}

export async function read(run: Run, a: Actor, dataset: string, via: Channel): Promise<void> {
  const channel = via === 'terminal' && a.model.kind !== 'live' ? 'rest' : via;
  const res = await send(run, a, channel, dataset, 'limit=1');
  const expected = meter(run.prices, a.model, run.svc.clock.now(), {
    dataset,
    label: dataset,
    list: listCost(run.prices, dataset),
    channel,
    export: false,
  });
  assertOutcome(res, expected, `${channel} read of ${dataset}`);
}

/**
 * A recipe (GET /api/v1/recipes lists what each reads): charged once, the sum of its reads' list costs,
 * P0 when every read is, discounted and surcharged like a read.
 */
export async function recipe(run: Run, a: Actor, name: string, via: 'rest' | 'terminal'): Promise<void> {
  const reads = run.recipes[name] ?? [];
  const channel: Channel = via === 'terminal' && a.model.kind === 'live' ? 'terminal' : 'rest';
  const res = await run.svc.request('GET', `/api/v1/recipes/${name}`, {
    headers: await restHeaders(run, a, channel),
  });
  const expected = meter(run.prices, a.model, run.svc.clock.now(), {
    dataset: reads[0] as string,
    label: `recipe:${name}`,
    list: reads.reduce((sum, d) => sum + listCost(run.prices, d), 0),
    channel,
    export: false,
    p0: reads.every((d) => isP0(run.prices, d)),
  });
  assertOutcome(res, expected, `${channel} recipe ${name}`);
}

export async function bad(run: Run, a: Actor, via: Channel): Promise<void> {
  const res = await send(run, a, via, 'macro/fed-h15-series', 'limit=0');
  assert.equal(refusalOf(res), 'invalid_request', res.text.slice(0, 300));
}

/**
 * `n` reads at once by the key: the debit is one conditional statement, so exactly as many are served as
 * the wallet and the caps allow, whatever the order. Cut short where a tier would change mid-burst (a
 * read admitted after others committed would be priced at the next tier).
 */
export async function burst(run: Run, a: Actor, dataset: string, n: number): Promise<void> {
  const now = run.svc.clock.now();
  const request = {
    dataset,
    label: dataset,
    list: listCost(run.prices, dataset),
    channel: 'rest' as const,
    export: false,
  };
  const trial = structuredClone(a.model);
  const costs = Array.from({ length: n }, () => meter(run.prices, trial, now, request).cost);
  const count = costs.findIndex((c) => c !== costs[0]);
  const k = count === -1 ? n : count;
  const answers = await Promise.all(
    Array.from({ length: k }, () => send(run, a, 'rest', dataset, 'limit=1')),
  );
  const expected = Array.from({ length: k }, () => meter(run.prices, a.model, now, request));
  const served = (list: (string | null)[]) => list.filter((r) => r === null).length;
  const refusals = answers.map(refusalOf);
  assert.equal(
    served(refusals),
    served(expected.map((e) => e.refusal)),
    `burst of ${k}: ${refusals.join(', ')}`,
  );
  const allowed = new Set<string | null>([null, ...expected.map((e) => e.refusal)]);
  if (expected.some((e) => e.refusal === 'insufficient_tokens' || e.refusal === 'spending_cap_reached')) {
    // Which of the two a racing read meets depends on the order of the debits.
    allowed.add('insufficient_tokens').add('spending_cap_reached');
  }
  for (const r of refusals)
    assert.ok(allowed.has(r), `burst of ${k}: ${r} not one of ${[...allowed].join(', ')}`);
}

/**
 * An export; `now` fails its second page at once, `later` after midnight (UTC): either way the charge is
 * refunded, and a refund gives back the day (and month) of the charge.
 */
export async function exportStep(
  run: Run,
  a: Actor,
  fail: 'no' | 'now' | 'later',
  via: 'rest' | 'terminal',
): Promise<void> {
  const blocks = Math.max(1, Math.ceil(EXPORT_ROWS / 1000));
  const list = blocks * listCost(run.prices, EXPORT_DATASET);
  const channel: Channel = via === 'terminal' && a.model.kind === 'live' ? 'terminal' : 'rest';
  const headers = await restHeaders(run, a, channel);
  const expected = meter(run.prices, a.model, run.svc.clock.now(), {
    dataset: EXPORT_DATASET,
    label: `export:${EXPORT_DATASET}`,
    list,
    channel,
    export: true,
  });
  const midnight = (Math.floor(run.svc.clock.now() / DAY_MS) + 1) * DAY_MS;
  const later = fail === 'later' && midnight + 60_000 - START <= MAX_ADVANCE_MS;
  if (fail !== 'no') {
    run.svc.exportPageFails = () => {
      if (later) run.svc.clock.t = midnight + 60_000;
    };
  }
  let res: TestResponse | null = null;
  try {
    res = await run.svc.request('GET', `/api/v1/export/${EXPORT_DATASET}`, { headers });
  } catch {
    // A stream cut mid-way may fail the injected request: the checks after the step see the refund.
    assert.ok(fail !== 'no' && expected.refusal === null, 'only a failing export may break its answer');
  } finally {
    run.svc.exportPageFails = null;
  }
  if (res) assertOutcome(res, expected, `${channel} export`);
  if (fail !== 'no' && expected.refusal === null) refundLast(a.model);
}
