/** MemoryLimiter: the in-process adapter, for one node. State is lost on restart (documented). */
import type { Limiter, WindowDecision } from './port.ts';

export class MemoryLimiter implements Limiter {
  /** Admission timestamps per key, oldest first; never longer than the key's limit. */
  readonly #windows = new Map<string, number[]>();

  async hit(key: string, limit: number, windowMs: number, now: number): Promise<WindowDecision> {
    let stamps = this.#windows.get(key);
    if (!stamps) {
      stamps = [];
      this.#windows.set(key, stamps);
    }
    while (stamps.length > 0 && (stamps[0] as number) <= now - windowMs) stamps.shift();
    if (stamps.length >= limit) {
      const oldest = stamps[0] as number;
      const retryAfterMs = oldest + windowMs - now;
      return {
        allowed: false,
        limit,
        remaining: 0,
        retryAfterMs,
        resetMs: (stamps.at(-1) as number) + windowMs - now,
      };
    }
    stamps.push(now);
    return { allowed: true, limit, remaining: limit - stamps.length, retryAfterMs: 0, resetMs: windowMs };
  }

  async close(): Promise<void> {
    this.#windows.clear();
  }
}
