/**
 * Runs one step on the service and on the model, and checks the step's own answer (status, refusal
 * code, cost headers) against what the model expects.
 */
import assert from 'node:assert/strict';
import { type Service, START } from './harness.ts';
import { type IdempotentRead, idempotentRead } from './idempotent.ts';
import { bad, burst, estimate, exportStep, read, recipe, session } from './metered.ts';
import {
  credit,
  DAY_MS,
  type ModelAccount,
  monthlyCredit,
  newAccount,
  nextMonthStart,
  type PriceList,
} from './model.ts';
import { DATASETS, RECIPES, type Step, tokensOf } from './steps.ts';

export interface Actor {
  model: ModelAccount;
  id: string;
  email: string;
  password: string;
  key: string;
  keyId: string;
  session: { token: string; at: number } | null;
}

export interface Run {
  svc: Service;
  prices: PriceList;
  /** Each recipe's reads, from GET /api/v1/recipes. */
  recipes: Record<string, string[]>;
  actors: Actor[];
  /** Makes emails, addresses and idempotency keys unique across runs on one database. */
  tag: string;
  counter: number;
  /** The sequence's last read sent with an idempotency key, for retries. */
  lastIdempotent: IdempotentRead | null;
}

const PASSWORD = 'correct horse battery';
/** Time moves at most this far in a sequence: public-test keys live 30 days. */
export const MAX_ADVANCE_MS = 20 * DAY_MS;

export const fresh = (run: Run) => `${run.tag}-${++run.counter}`;
export const ipOf = (run: Run) =>
  `10.${(run.counter >> 16) % 250}.${(run.counter >> 8) % 250}.${run.counter % 250}`;

export async function runStep(run: Run, step: Step): Promise<void> {
  const { svc } = run;
  if (step.t === 'signup') return signUp(run);
  if (step.t === 'open') return open(run, BigInt(step.micros), step.pkg);
  if (step.t === 'monthly') {
    const res = await svc.admin('POST', '/api/v1/admin/monthly-credits');
    assert.equal(res.status, 200, res.text);
    for (const a of run.actors) monthlyCredit(run.prices, a.model, svc.clock.now());
    return;
  }
  if (step.t === 'advance') {
    const now = svc.clock.now();
    const to = step.unit === 'day' ? now + DAY_MS : nextMonthStart(now) + 3_600_000;
    if (to - START <= MAX_ADVANCE_MS) svc.clock.t = to;
    return;
  }
  if (step.t === 'restart') return svc.restart();
  const a = run.actors[step.a % Math.max(run.actors.length, 1)];
  if (!a) return;
  if (step.t === 'credit') return creditStep(run, a, BigInt(step.micros), step.replay);
  if (step.t === 'read') return read(run, a, DATASETS[step.ds] as string, step.via);
  if (step.t === 'idempotent')
    return idempotentRead(run, a, DATASETS[step.ds] as string, step.via, step.mode);
  if (step.t === 'recipe') return recipe(run, a, RECIPES[step.r] as string, step.via);
  if (step.t === 'bad') return bad(run, a, step.via);
  if (step.t === 'estimate') return estimate(run, a, DATASETS[step.ds] as string, step.via);
  if (step.t === 'burst') return burst(run, a, DATASETS[step.ds] as string, step.n);
  if (step.t === 'export') return exportStep(run, a, step.fail, step.via);
  if (step.t === 'caps') return caps(run, a, step);
  if (step.t === 'package') return assignPackage(run, a, step.pkg);
}

async function signUp(run: Run): Promise<void> {
  const email = `${fresh(run)}@model.example.com`;
  const res = await run.svc.request('POST', '/api/v1/auth/public-test', {
    body: { email, password: PASSWORD },
    headers: { 'x-forwarded-for': ipOf(run) },
  });
  assert.equal(res.status, 201, res.text);
  const model = newAccount('public_test');
  credit(model, 'grant', BigInt(run.prices.signupGrant) * 1_000_000n);
  const { account_id: id, key, id: keyId } = res.json;
  run.actors.push({ model, id, email, password: PASSWORD, key, keyId, session: null });
}

async function open(run: Run, micros: bigint, pkg: string | null): Promise<void> {
  const email = `${fresh(run)}@model.example.com`;
  const created = await run.svc.admin('POST', '/api/v1/admin/accounts', {
    body: { email, password: PASSWORD },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.json.id as string;
  const key = await run.svc.admin('POST', `/api/v1/admin/accounts/${id}/keys`, { body: { name: 'model' } });
  assert.equal(key.status, 201, key.text);
  const actor: Actor = {
    model: newAccount('live'),
    id,
    email,
    password: PASSWORD,
    key: key.json.key,
    keyId: key.json.id,
    session: null,
  };
  run.actors.push(actor);
  if (micros > 0n) await creditStep(run, actor, micros, 'no');
  if (pkg !== null) await assignPackage(run, actor, pkg);
}

/** An operator credit; a repeated Idempotency-Key returns the first entry, or 409 with another amount. */
async function creditStep(
  run: Run,
  a: Actor,
  micros: bigint,
  replay: 'no' | 'same' | 'other',
): Promise<void> {
  const last = a.model.credits.at(-1);
  const again = replay !== 'no' && last !== undefined;
  const idempotencyKey = again ? last.key : `credit-${fresh(run)}`;
  const amount = !again ? micros : replay === 'same' ? last.amount : last.amount + 1n;
  const res = await run.svc.admin('POST', `/api/v1/admin/accounts/${a.id}/credits`, {
    headers: { 'idempotency-key': idempotencyKey },
    body: { tokens: tokensOf(amount) },
  });
  assert.equal(res.status, !again ? 201 : replay === 'same' ? 200 : 409, res.text);
  if (again) return;
  a.model.credits.push({ key: idempotencyKey, amount });
  credit(a.model, 'topup', amount);
}

async function caps(run: Run, a: Actor, step: Extract<Step, { t: 'caps' }>): Promise<void> {
  const body = { daily_tokens: step.daily, monthly_tokens: step.monthly };
  const self = step.self && a.model.kind === 'live';
  const res = self
    ? await run.svc.request('PATCH', `/api/v1/keys/${a.keyId}`, {
        headers: { authorization: `Bearer ${await session(run, a)}` },
        body,
      })
    : await run.svc.admin('PUT', `/api/v1/admin/keys/${a.keyId}/spending-caps`, { body });
  // Caps are for live keys; an account sets its own only on the Partner package (docs/api.md).
  const expected = a.model.kind !== 'live' ? 409 : self && a.model.pkg !== 'partner' ? 403 : 200;
  assert.equal(res.status, expected, res.text);
  if (expected !== 200) return;
  const micros = (t: number | null) => (t === null ? null : BigInt(t) * 1_000_000n);
  a.model.caps = { daily: micros(step.daily), monthly: micros(step.monthly) };
}

async function assignPackage(run: Run, a: Actor, pkg: string | null): Promise<void> {
  const res = await run.svc.admin('PUT', `/api/v1/admin/accounts/${a.id}/package`, {
    body: { package: pkg },
  });
  assert.equal(res.status, 200, res.text);
  a.model.pkg = pkg;
  monthlyCredit(run.prices, a.model, run.svc.clock.now());
}
