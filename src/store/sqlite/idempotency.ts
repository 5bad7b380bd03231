/** Idempotency keys on SQLite: claimed, completed with their response, or released. */
import type { Claim, StoredResponse } from '../idempotency-port.ts';
import { str } from '../rows.ts';
import type { DbRow, SqliteDb } from './db.ts';

export class SqliteIdempotency {
  readonly #db: SqliteDb;

  constructor(db: SqliteDb) {
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
    return this.#db.tx(() => {
      // Bounded upkeep: a few expired keys go with each claim.
      this.#db.run(
        'DELETE FROM idempotent_requests WHERE rowid IN (SELECT rowid FROM idempotent_requests WHERE created_at < ? LIMIT 20)',
        input.expiredBefore,
      );
      const claimed = this.#db.get(
        `INSERT INTO idempotent_requests (scope, key, fingerprint, state, response, created_at) VALUES (?, ?, ?, 'pending', NULL, ?)
         ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'pending', response = NULL,
           created_at = excluded.created_at
         WHERE idempotent_requests.created_at < ? OR (idempotent_requests.state = 'pending' AND idempotent_requests.created_at < ?)
         RETURNING key`,
        input.scope,
        input.key,
        input.fingerprint,
        input.at,
        input.expiredBefore,
        input.abandonedBefore,
      );
      if (claimed) return { state: 'claimed' } as const;
      const held = this.#db.get(
        'SELECT fingerprint, state, response FROM idempotent_requests WHERE scope = ? AND key = ?',
        input.scope,
        input.key,
      ) as DbRow;
      if (str(held.fingerprint) !== input.fingerprint) return { state: 'mismatch' } as const;
      return held.state === 'done'
        ? ({ state: 'done', response: JSON.parse(str(held.response)) as StoredResponse } as const)
        : ({ state: 'pending' } as const);
    });
  }

  async completeIdempotencyKey(scope: string, key: string, response: StoredResponse): Promise<void> {
    this.#db.run(
      "UPDATE idempotent_requests SET state = 'done', response = ? WHERE scope = ? AND key = ?",
      JSON.stringify(response),
      scope,
      key,
    );
  }

  async releaseIdempotencyKey(scope: string, key: string): Promise<void> {
    this.#db.run(
      "DELETE FROM idempotent_requests WHERE scope = ? AND key = ? AND state = 'pending'",
      scope,
      key,
    );
  }
}
