/**
 * The Limiter port: counters that decide whether a request may proceed. Each method is one atomic
 * check-and-record, so the Redis adapter implements each as one Lua script.
 */

export type WindowCode = 'rate_limited' | 'daily_limit' | 'ip_fence';

export interface WindowCheck {
  /** The refusal code if this window is the one that refuses. */
  code: WindowCode;
  key: string;
  limit: number;
  /**
   * Sliding windows are exact over any span of windowMs (no double burst at an edge). A fixed window
   * (`fixedUntil` set, e.g. the next 00:00 UTC) counts until that instant and then starts again.
   */
  windowMs: number;
  fixedUntil?: number;
}

export interface SlotCheck {
  key: string;
  max: number;
  /** A slot not released within this time (a node died) is freed anyway. */
  leaseMs: number;
}

export interface AdmitRequest {
  now: number;
  windows: readonly WindowCheck[];
  slot?: SlotCheck;
}

export interface WindowState {
  code: WindowCode;
  limit: number;
  /** Requests still admitted after this one. */
  remaining: number;
  /** Milliseconds until the window has room again (sliding) or resets (fixed). */
  resetMs: number;
}

export type AdmitResult =
  | { allowed: true; windows: WindowState[]; slotId: string | null }
  | {
      allowed: false;
      code: WindowCode | 'concurrency_limit';
      /** Milliseconds until a retry can succeed. */
      retryAfterMs: number;
      windows: WindowState[];
    };

export interface WindowDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  retryAfterMs: number;
  resetMs: number;
}

export interface Limiter {
  /**
   * All or nothing: the request is recorded in every window and takes a slot only if every window has
   * room and a slot is free; a refused request records nothing.
   */
  admit(request: AdmitRequest): Promise<AdmitResult>;
  /** Gives a slot back (on completion, abort or timeout). Releasing twice is harmless. */
  release(slotKey: string, slotId: string): Promise<void>;
  /**
   * Extends a slot still held to `now + leaseMs` (a request that outlives the lease, such as a long
   * export, keeps its slot). False when the slot is gone or its lease has already run out: it may have
   * been given to another request, so it is not taken back.
   */
  renew(slotKey: string, slotId: string, leaseMs: number, now: number): Promise<boolean>;
  /** One sliding window, recorded when allowed: issuance caps, failed-login counters. */
  hit(key: string, limit: number, windowMs: number, now: number): Promise<WindowDecision>;
  /** The same window without recording: is this key already over its limit? */
  peek(key: string, limit: number, windowMs: number, now: number): Promise<WindowDecision>;
  /** In-flight slots held on a key now (for tests and metrics). */
  inFlight(slotKey: string, now: number): Promise<number>;
  close(): Promise<void>;
}
