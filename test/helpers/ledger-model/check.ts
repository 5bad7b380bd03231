/**
 * After every step: each actor's balance, tier, month burn, ledger entries, usage events, package and
 * key caps as the public API shows them must be the model's, and the ledger audit must be clean.
 */
import assert from 'node:assert/strict';
import { session } from './metered.ts';
import { burnedThisMonth, keyBurnedSince, type ModelAccount, monthStart, tierOf } from './model.ts';
import type { Actor, Run } from './runner.ts';
import { microsOf, tokensOf } from './steps.ts';

// biome-ignore lint/suspicious/noExplicitAny: API bodies are read field by field
type Json = any;

/** The tokens an event burned, under whichever name the usage view gives the figure. */
const burnedOf = (event: Json) => event.tokens_burned ?? event.request_tokens ?? event.burned_tokens;

export async function checkRun(run: Run): Promise<void> {
  for (const actor of run.actors) await checkActor(run, actor);
  const audit = await run.svc.deps.store.auditLedger();
  assert.deepEqual(audit.mismatches, [], 'the ledger audit is clean');
}

async function get(run: Run, actor: Actor, path: string): Promise<Json> {
  const res = await run.svc.request('GET', path, { headers: { authorization: `Bearer ${actor.key}` } });
  assert.equal(res.status, 200, `${path}: ${res.text}`);
  return res.json;
}

async function checkActor(run: Run, actor: Actor): Promise<void> {
  const { model } = actor;
  const now = run.svc.clock.now();
  const who = `${actor.model.kind} account ${actor.id}`;
  const me = await get(run, actor, '/api/v1/me');
  assert.equal(me.wallet.balance, tokensOf(model.balance), `${who}: balance`);
  if (model.kind === 'live') {
    assert.equal(me.burned_this_month, tokensOf(burnedThisMonth(model, now)), `${who}: burned this month`);
    assert.equal(me.tier.level, tierOf(run.prices, model, now).level, `${who}: tier`);
  }
  const ledger = await get(run, actor, '/api/v1/me/ledger?limit=500');
  assert.deepEqual(
    (ledger.data as Json[]).map((e) => `${e.kind} ${tokensOf(microsOf(e.amount))}`).reverse(),
    model.entries.map((e) => `${e.kind} ${tokensOf(e.amount)}`),
    `${who}: ledger entries, oldest first`,
  );
  assert.equal(ledger.meta.balance, tokensOf(model.balance), `${who}: the ledger's balance`);
  const usage = await get(run, actor, '/api/v1/me/usage?limit=500');
  assert.deepEqual(
    (usage.data as Json[])
      .map((e) => `${e.dataset} ${e.channel} ${e.outcome} ${tokensOf(microsOf(burnedOf(e)))}`)
      .reverse(),
    model.usage.map((u) => `${u.dataset} ${u.channel} ${u.outcome} ${tokensOf(u.burned)}`),
    `${who}: usage events, oldest first`,
  );
  await checkAccountView(run, actor, model, who);
  if (model.kind === 'live') await checkKeyBurn(run, actor, model, who);
}

/** What the key burned this month (net of refunds), as the account's key list shows it: what caps count. */
async function checkKeyBurn(run: Run, actor: Actor, model: ModelAccount, who: string): Promise<void> {
  const res = await run.svc.request('GET', '/api/v1/keys', {
    headers: { authorization: `Bearer ${await session(run, actor)}` },
  });
  assert.equal(res.status, 200, res.text);
  const key = (res.json.data as Json[]).find((k) => k.id === actor.keyId);
  const burned = keyBurnedSince(model, monthStart(run.svc.clock.now()));
  assert.equal(key?.burned_this_month, tokensOf(burned), `${who}: the key's burn this month`);
}

async function checkAccountView(run: Run, actor: Actor, model: ModelAccount, who: string): Promise<void> {
  const res = await run.svc.admin('GET', `/api/v1/admin/accounts/${actor.id}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.package, model.pkg, `${who}: package`);
  assert.equal(res.json.wallet.balance, tokensOf(model.balance), `${who}: balance (operator view)`);
  const key = (res.json.keys as Json[]).find((k) => k.id === actor.keyId);
  const cap = (micros: bigint | null) => (micros === null ? null : tokensOf(micros));
  assert.deepEqual(
    key?.spending_caps,
    { daily: cap(model.caps.daily), monthly: cap(model.caps.monthly) },
    `${who}: spending caps`,
  );
}
