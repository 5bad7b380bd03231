/**
 * The Limiter port: counters that decide whether a request may proceed. Each call is one atomic
 * check-and-record, so a Redis adapter can implement it as one Lua script.
 */

export interface WindowDecision {
  allowed: boolean;
  limit: number;
  /** Requests still admitted in the window after this one. */
  remaining: number;
  /** Milliseconds until the window has room again (0 when allowed and room is left). */
  retryAfterMs: number;
  /** Milliseconds until the window is entirely clear. */
  resetMs: number;
}

export interface Limiter {
  /**
   * Sliding window: admits the request when fewer than `limit` were admitted in the last `windowMs`,
   * and records it. Exact over any span of `windowMs`: no double burst at a window edge.
   */
  hit(key: string, limit: number, windowMs: number, now: number): Promise<WindowDecision>;
  close(): Promise<void>;
}
