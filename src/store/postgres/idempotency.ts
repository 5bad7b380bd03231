/** Idempotency keys on PostgreSQL: claimed, completed with their response, or released. */
import type { Claim, StoredResponse } from '../idempotency-port.ts';
import { str } from '../rows.ts';
import type { PgDb } from './db.ts';

export class PgIdempotency {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  async claimIdempotencyKey(input: {
    scope: string;
    key: string;
    fingerprint: string;
    at: number;
    expiredBefore: number;
    abandonedBefore: number;
  }): Promise<Claim> {
    // Bounded upkeep: a few expired keys go with each claim.
    await this.#db.q(
      'DELETE FROM idempotent_requests WHERE ctid IN (SELECT ctid FROM idempotent_requests WHERE created_at < $1 LIMIT 20)',
      [input.expiredBefore],
    );
    const claimed = await this.#db.rows(
      `INSERT INTO idempotent_requests (scope, key, fingerprint, state, response, created_at) VALUES ($1, $2, $3, 'pending', NULL, $4)
       ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'pending', response = NULL,
         created_at = excluded.created_at
       WHERE idempotent_requests.created_at < $5 OR (idempotent_requests.state = 'pending' AND idempotent_requests.created_at < $6)
       RETURNING key`,
      [input.scope, input.key, input.fingerprint, input.at, input.expiredBefore, input.abandonedBefore],
    );
    if (claimed.length === 1) return { state: 'claimed' };
    const held = await this.#db.one(
      'SELECT fingerprint, state, response FROM idempotent_requests WHERE scope = $1 AND key = $2',
      [input.scope, input.key],
    );
    // Released between the two statements: the caller asks again.
    if (!held) return { state: 'pending' };
    if (str(held.fingerprint) !== input.fingerprint) return { state: 'mismatch' };
    return held.state === 'done'
      ? { state: 'done', response: JSON.parse(str(held.response)) as StoredResponse }
      : { state: 'pending' };
  }

  async completeIdempotencyKey(scope: string, key: string, response: StoredResponse): Promise<void> {
    await this.#db.q(
      "UPDATE idempotent_requests SET state = 'done', response = $3 WHERE scope = $1 AND key = $2",
      [scope, key, JSON.stringify(response)],
    );
  }

  async releaseIdempotencyKey(scope: string, key: string): Promise<void> {
    await this.#db.q("DELETE FROM idempotent_requests WHERE scope = $1 AND key = $2 AND state = 'pending'", [
      scope,
      key,
    ]);
  }
}
