/**
 * What the OAuth server keeps (its grants, codes, tokens, clients and interactions, as the library's
 * models), and the connections an account approved: each is a key of the account that only OAuth
 * tokens present.
 */

/** One record of an OAuth model, as the library stores it: its payload is the library's JSON. */
export interface OAuthRecord {
  id: string;
  payload: string;
  /** When it stops counting (ms), or null. */
  expiresAt: number | null;
  /** When a one-time record (an authorization code) was used (ms), or null. */
  consumedAt: number | null;
}

export interface NewOAuthRecord {
  payload: string;
  grantId: string | null;
  uid: string | null;
  userCode: string | null;
  expiresAt: number | null;
}

/** A client's connection to an account, approved in the Terminal: the key its tokens read as. */
export interface OAuthConnection {
  keyId: string;
  accountId: string;
  clientId: string;
  clientName: string;
  redirectHost: string;
  createdAt: number;
}

export interface OAuthStore {
  upsertOAuthRecord(model: string, id: string, record: NewOAuthRecord): Promise<void>;
  /** The record, or null when there is none or it expired before `now`. */
  findOAuthRecord(model: string, id: string, now: number): Promise<OAuthRecord | null>;
  findOAuthRecordBy(
    model: string,
    by: 'uid' | 'user_code',
    value: string,
    now: number,
  ): Promise<OAuthRecord | null>;
  /** Marks a one-time record used; false when it already was (a replayed authorization code). */
  consumeOAuthRecord(model: string, id: string, at: number): Promise<boolean>;
  destroyOAuthRecord(model: string, id: string): Promise<void>;
  /** Every record of a grant (its codes and tokens): a revoked connection or a replayed code. */
  revokeOAuthGrant(grantId: string): Promise<void>;
  /** Drops up to `limit` records that expired before `before`: bounded upkeep. */
  pruneOAuthRecords(before: number, limit: number): Promise<number>;
  insertOAuthConnection(connection: OAuthConnection): Promise<void>;
  listOAuthConnections(accountId: string): Promise<OAuthConnection[]>;
}
