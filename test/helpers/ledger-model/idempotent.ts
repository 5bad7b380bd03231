/**
 * Reads sent with an idempotency key (docs/api.md "Retrying a read"): a retry by the same credential
 * within 24 hours gets the first answer and is charged nothing, restarts in between included; the key on
 * another read is 422 `idempotency_key_reused`; a refused read is not kept, so its retry reads anew.
 */
import assert from 'node:assert/strict';
import { assertOutcome, refusalOf, send, session } from './metered.ts';
import { listCost, meter } from './model.ts';
import { type Actor, fresh, type Run } from './runner.ts';
import { DATASETS } from './steps.ts';

/** Retries are sent well inside the 24 hours, clear of the boundary. */
const RETRY_WITHIN_MS = 20 * 3_600_000;

export interface IdempotentRead {
  /** Who sent it: a retry is sent by the same actor, whichever the step names. */
  actor: Actor;
  key: string;
  dataset: string;
  channel: 'rest' | 'mcp' | 'terminal';
  at: number;
  /** The credential it went with (a Terminal read's session). */
  credential: string;
  /** The first answer's X-Request-Tokens, or null when it was refused (and so not kept). */
  tokens: string | null;
}

async function credentialOf(run: Run, a: Actor, channel: IdempotentRead['channel']): Promise<string> {
  return channel === 'terminal' ? session(run, a) : a.key;
}

/** A read with a new idempotency key. */
async function first(run: Run, a: Actor, dataset: string, channel: IdempotentRead['channel']): Promise<void> {
  const key = `idem-${fresh(run)}`;
  const read = { actor: a, key, dataset, channel, at: run.svc.clock.now(), credential: '', tokens: null };
  await metered(run, a, read);
}

/** Sends the read and meters it on the model; remembers it as the actor's last idempotent read. */
async function metered(run: Run, a: Actor, read: IdempotentRead): Promise<void> {
  const credential = await credentialOf(run, a, read.channel);
  const res = await send(run, a, read.channel, read.dataset, 'limit=1', read.key);
  const expected = meter(run.prices, a.model, run.svc.clock.now(), {
    dataset: read.dataset,
    label: read.dataset,
    list: listCost(run.prices, read.dataset),
    channel: read.channel,
    export: false,
  });
  assertOutcome(res, expected, `${read.channel} read of ${read.dataset} with an idempotency key`);
  const tokens = expected.refusal === null ? res.headers.get('x-request-tokens') : null;
  run.lastIdempotent = { ...read, credential, tokens };
}

/** `new`: by the step's actor; `retry` and `reuse`: the sequence's last idempotent read, by its actor. */
export async function idempotentRead(
  run: Run,
  actor: Actor,
  dataset: string,
  via: IdempotentRead['channel'],
  mode: 'new' | 'retry' | 'reuse',
): Promise<void> {
  const last = run.lastIdempotent;
  const now = run.svc.clock.now();
  const usable =
    mode !== 'new' &&
    last !== null &&
    now - last.at < RETRY_WITHIN_MS &&
    (await credentialOf(run, last.actor, last.channel)) === last.credential;
  if (!usable || !last) {
    return first(run, actor, dataset, via === 'terminal' && actor.model.kind !== 'live' ? 'rest' : via);
  }
  const a = last.actor;
  if (mode === 'retry') {
    if (last.tokens === null) return metered(run, a, { ...last, at: now });
    const res = await send(run, a, last.channel, last.dataset, 'limit=1', last.key);
    assert.equal(refusalOf(res), null, `a retry gets the first answer: ${res.text.slice(0, 300)}`);
    assert.equal(res.headers.get('idempotent-replayed'), 'true', 'a retry says it was replayed');
    assert.equal(res.headers.get('x-request-tokens'), last.tokens, "a retry shows the first answer's cost");
    return;
  }
  // The same key on another read: refused, unless the first was refused (and so not kept).
  const other = DATASETS.find((d) => d !== last.dataset) as string;
  if (last.tokens === null) return metered(run, a, { ...last, dataset: other, at: now });
  const res = await send(run, a, last.channel, other, 'limit=1', last.key);
  assert.equal(refusalOf(res), 'idempotency_key_reused', res.text.slice(0, 300));
}
