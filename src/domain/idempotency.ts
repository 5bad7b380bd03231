/**
 * Reads that are safe to retry: a request sent again with the same Idempotency-Key (REST header, MCP
 * `_meta.idempotency_key`) from the same credential within 24 hours gets the first answer again, the
 * same rows and cost figures, and is charged nothing; the same key on another request is refused (422
 * idempotency_key_reused). Retries that arrive while the first still runs wait for its answer. Only a
 * served answer is kept: after a refusal or a failure the next try runs afresh.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors.ts';
import type { Ledger, StoredResponse } from '../store/port.ts';
import type { Caller } from './caller.ts';

export type { StoredResponse };

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** A first request that has not answered within this long is taken to have died with its process. */
const ABANDONED_MS = 60_000;
/** How long a retry waits for the first request's answer. */
const WAIT_MS = 30_000;
const KEY = /^[\x21-\x7e]{1,255}$/;

/** The credential a key belongs to: an API key, a session, else the wallet. */
export function idempotencyScope(caller: Caller): string {
  if (caller.key) return `key:${caller.key.id}`;
  if (caller.sessionId) return `session:${caller.sessionId}`;
  return `wallet:${caller.wallet.id}`;
}

export class Idempotency {
  readonly #store: Ledger;
  readonly #now: () => number;

  constructor(deps: { store: Ledger; now: () => number }) {
    this.#store = deps.store;
    this.#now = deps.now;
  }

  /** `work`'s answer, or the answer it gave the first time this key was used for this request. */
  async run(
    caller: Caller,
    key: string,
    fingerprint: string,
    work: () => Promise<StoredResponse>,
  ): Promise<{ response: StoredResponse; replayed: boolean }> {
    if (!KEY.test(key))
      throw new AppError(
        'invalid_request',
        'Idempotency-Key: 1 to 255 visible ASCII characters (a UUID will do).',
        {
          errors: [{ path: 'Idempotency-Key', message: 'invalid' }],
        },
      );
    const scope = idempotencyScope(caller);
    const started = Date.now();
    for (;;) {
      const at = this.#now();
      const claim = await this.#store.claimIdempotencyKey({
        scope,
        key,
        fingerprint,
        at,
        expiredBefore: at - IDEMPOTENCY_TTL_MS,
        abandonedBefore: at - ABANDONED_MS,
      });
      if (claim.state === 'done') return { response: claim.response, replayed: true };
      if (claim.state === 'mismatch')
        throw new AppError(
          'idempotency_key_reused',
          'This Idempotency-Key was used for another request in the last 24 hours: use a new key for a new request.',
        );
      if (claim.state === 'claimed') {
        try {
          const response = await work();
          await this.#store.completeIdempotencyKey(scope, key, response);
          return { response, replayed: false };
        } catch (error) {
          await this.#store.releaseIdempotencyKey(scope, key).catch(() => {});
          throw error;
        }
      }
      if (Date.now() - started > WAIT_MS)
        throw new AppError(
          'conflict',
          'A request with this Idempotency-Key is still running: retry with the same key shortly.',
        );
      await sleep(25);
    }
  }
}
