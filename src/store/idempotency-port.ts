/** Answers kept for retries: a request's Idempotency-Key, per credential, for 24 hours. */

export interface StoredResponse {
  status: number;
  contentType: string;
  headers: Record<string, string>;
  body: string;
}

export type Claim =
  | { state: 'claimed' }
  | { state: 'pending' }
  | { state: 'done'; response: StoredResponse }
  | { state: 'mismatch' };

export interface IdempotencyStore {
  /**
   * Claims a key for a request: `claimed` for the first (or when the key's earlier use expired before
   * `expiredBefore`, or its holder stopped answering before `abandonedBefore`), else what the first
   * left: `pending` while it runs, `done` with its answer, `mismatch` when it was another request.
   */
  claimIdempotencyKey(input: {
    scope: string;
    key: string;
    fingerprint: string;
    at: number;
    expiredBefore: number;
    abandonedBefore: number;
  }): Promise<Claim>;
  /** The answer of a claimed key, kept for the retries. */
  completeIdempotencyKey(scope: string, key: string, response: StoredResponse): Promise<void>;
  /** A claimed key whose request was refused or failed: the next try runs it afresh. */
  releaseIdempotencyKey(scope: string, key: string): Promise<void>;
}
