/**
 * Password resets by email: each link's token is kept as its SHA-256 digest only, expires, and works
 * once. Completing one sets the account's password and ends all its sessions in one transaction.
 */

export interface PasswordReset {
  /** SHA-256 (hex) of the token the link carries. */
  digest: string;
  accountId: string;
  createdAt: number;
  expiresAt: number;
  /** When the link was used, or made void by another link of the account being used (ms); null if not. */
  usedAt: number | null;
}

export interface PasswordResetStore {
  insertPasswordReset(reset: PasswordReset): Promise<void>;
  findPasswordReset(digest: string): Promise<PasswordReset | null>;
  /**
   * In one transaction: marks the reset used (and every other unused reset of its account), sets the
   * account's password hash and revokes every session of the account still open. Null when the reset
   * is unknown, already used or expired at `at`: then nothing changes. Else how many sessions ended.
   */
  completePasswordReset(
    digest: string,
    passwordHash: string,
    at: number,
  ): Promise<{ accountId: string; sessionsEnded: number } | null>;
}
