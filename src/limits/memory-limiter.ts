/** MemoryLimiter: the in-process adapter, for one node. State is lost on restart (documented). */
import { randomBytes } from 'node:crypto';
import type { AdmitRequest, AdmitResult, Limiter, WindowCheck, WindowDecision, WindowState } from './port.ts';

export class MemoryLimiter implements Limiter {
  /** Sliding windows: admission timestamps per key, oldest first; never longer than the limit. */
  readonly #sliding = new Map<string, number[]>();
  /** Fixed windows: a count until an instant. */
  readonly #fixed = new Map<string, { count: number; until: number }>();
  /** Slots: slot id -> lease expiry, per key. */
  readonly #slots = new Map<string, Map<string, number>>();
  #sweepAt = 0;

  #stamps(key: string, windowMs: number, now: number): number[] {
    let stamps = this.#sliding.get(key);
    if (!stamps) {
      stamps = [];
      this.#sliding.set(key, stamps);
    }
    let expired = 0;
    while (expired < stamps.length && (stamps[expired] as number) <= now - windowMs) expired++;
    if (expired > 0) stamps.splice(0, expired);
    return stamps;
  }

  #state(check: WindowCheck, now: number): WindowState & { room: boolean } {
    if (check.fixedUntil !== undefined) {
      const current = this.#fixed.get(check.key);
      const count = current && current.until > now ? current.count : 0;
      return {
        code: check.code,
        limit: check.limit,
        remaining: Math.max(0, check.limit - count),
        resetMs: check.fixedUntil - now,
        room: count < check.limit,
      };
    }
    const stamps = this.#stamps(check.key, check.windowMs, now);
    const room = stamps.length < check.limit;
    const resetMs = room ? 0 : (stamps[stamps.length - check.limit] as number) + check.windowMs - now;
    return {
      code: check.code,
      limit: check.limit,
      remaining: Math.max(0, check.limit - stamps.length),
      resetMs,
      room,
    };
  }

  #liveSlots(key: string, now: number): Map<string, number> {
    let slots = this.#slots.get(key);
    if (!slots) {
      slots = new Map();
      this.#slots.set(key, slots);
    }
    for (const [id, expiresAt] of slots) if (expiresAt <= now) slots.delete(id);
    return slots;
  }

  #sweep(now: number): void {
    // Keys of idle credentials are dropped now and then so memory stays bounded.
    if (now < this.#sweepAt) return;
    this.#sweepAt = now + 60_000;
    for (const [key, stamps] of this.#sliding)
      if ((stamps.at(-1) ?? 0) < now - 86_400_000) this.#sliding.delete(key);
    for (const [key, fixed] of this.#fixed) if (fixed.until <= now) this.#fixed.delete(key);
    for (const [key, slots] of this.#slots) if (slots.size === 0) this.#slots.delete(key);
  }

  async admit(request: AdmitRequest): Promise<AdmitResult> {
    const { now } = request;
    this.#sweep(now);
    const states = request.windows.map((check) => this.#state(check, now));
    const full = states.find((s) => !s.room);
    const strip = (list: typeof states): WindowState[] =>
      list.map(({ code, limit, remaining, resetMs }) => ({ code, limit, remaining, resetMs }));
    if (full)
      return {
        allowed: false,
        code: full.code,
        retryAfterMs: Math.max(1, full.resetMs),
        windows: strip(states),
      };
    let slotId: string | null = null;
    if (request.slot) {
      const slots = this.#liveSlots(request.slot.key, now);
      if (slots.size >= request.slot.max) {
        return { allowed: false, code: 'concurrency_limit', retryAfterMs: 1000, windows: strip(states) };
      }
      slotId = randomBytes(8).toString('hex');
      slots.set(slotId, now + request.slot.leaseMs);
    }
    request.windows.forEach((check, index) => {
      const state = states[index] as WindowState;
      state.remaining -= 1;
      if (check.fixedUntil !== undefined) {
        const current = this.#fixed.get(check.key);
        if (current && current.until > now) current.count += 1;
        else this.#fixed.set(check.key, { count: 1, until: check.fixedUntil });
        state.resetMs = check.fixedUntil - now;
      } else {
        const stamps = this.#stamps(check.key, check.windowMs, now);
        stamps.push(now);
        state.resetMs = (stamps[0] as number) + check.windowMs - now;
      }
    });
    return { allowed: true, windows: strip(states), slotId };
  }

  async release(slotKey: string, slotId: string): Promise<void> {
    this.#slots.get(slotKey)?.delete(slotId);
  }

  async hit(key: string, limit: number, windowMs: number, now: number): Promise<WindowDecision> {
    const decision = await this.peek(key, limit, windowMs, now);
    if (!decision.allowed) return decision;
    const stamps = this.#stamps(key, windowMs, now);
    stamps.push(now);
    return { ...decision, remaining: limit - stamps.length, resetMs: (stamps[0] as number) + windowMs - now };
  }

  async peek(key: string, limit: number, windowMs: number, now: number): Promise<WindowDecision> {
    const stamps = this.#stamps(key, windowMs, now);
    if (stamps.length >= limit) {
      const retryAfterMs = (stamps[stamps.length - limit] as number) + windowMs - now;
      return {
        allowed: false,
        limit,
        remaining: 0,
        retryAfterMs,
        resetMs: (stamps.at(-1) as number) + windowMs - now,
      };
    }
    return { allowed: true, limit, remaining: limit - stamps.length, retryAfterMs: 0, resetMs: windowMs };
  }

  async inFlight(slotKey: string, now: number): Promise<number> {
    return this.#liveSlots(slotKey, now).size;
  }

  async close(): Promise<void> {
    this.#sliding.clear();
    this.#fixed.clear();
    this.#slots.clear();
  }
}
