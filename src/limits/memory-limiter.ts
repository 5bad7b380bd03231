/** MemoryLimiter: the in-process adapter, for one node. State is lost on restart (documented). */
import type { AdmitRequest, AdmitResult, Limiter, WindowCheck, WindowDecision, WindowState } from './port.ts';

/** Admission times of one sliding window, oldest first from `head` (amortised O(1) expiry). */
class SlidingLog {
  // Made with its first admission: an empty array grown by a push reserves 17 slots, and a limiter
  // keeps one log per credential (about 12 MB more for 100,000 keys).
  stamps: number[];
  head = 0;
  /** The window it counts: once its newest admission is older, it holds nothing and can go. */
  windowMs: number;

  constructor(first: number, windowMs: number) {
    this.stamps = [first];
    this.windowMs = windowMs;
  }

  prune(cutoff: number): void {
    while (this.head < this.stamps.length && (this.stamps[this.head] as number) <= cutoff) this.head++;
    if (this.head > 1024 && this.head * 2 > this.stamps.length) {
      this.stamps.splice(0, this.head);
      this.head = 0;
    }
  }

  get size(): number {
    return this.stamps.length - this.head;
  }

  /** The n-th newest admission (1 = newest). */
  newest(n: number): number {
    return this.stamps[this.stamps.length - n] as number;
  }

  oldest(): number {
    return this.stamps[this.head] as number;
  }

  get last(): number {
    return this.stamps.at(-1) ?? 0;
  }
}

export class MemoryLimiter implements Limiter {
  readonly #sliding = new Map<string, SlidingLog>();
  /** Fixed windows: a count until an instant. */
  readonly #fixed = new Map<string, { count: number; until: number }>();
  /** Slots: slot id -> lease expiry, per key. */
  readonly #slots = new Map<string, Map<string, number>>();
  #slotCounter = 0;
  #sweepAt = 0;

  /** The window's admissions still inside it; none yet: undefined. */
  #log(key: string, windowMs: number, now: number): SlidingLog | undefined {
    const log = this.#sliding.get(key);
    log?.prune(now - windowMs);
    return log;
  }

  /** Counts one admission; returns the window's oldest admission. */
  #record(key: string, windowMs: number, now: number): SlidingLog {
    const log = this.#log(key, windowMs, now);
    if (log) {
      log.stamps.push(now);
      log.windowMs = Math.max(log.windowMs, windowMs);
      return log;
    }
    const first = new SlidingLog(now, windowMs);
    this.#sliding.set(key, first);
    return first;
  }

  /** Room left in a window and, when there is none, how long until there is. */
  #decide(key: string, limit: number, windowMs: number, now: number): WindowDecision {
    const log = this.#log(key, windowMs, now);
    if (log && log.size >= limit) {
      const retryAfterMs = log.newest(limit) + windowMs - now;
      return { allowed: false, limit, remaining: 0, retryAfterMs, resetMs: log.last + windowMs - now };
    }
    return { allowed: true, limit, remaining: limit - (log?.size ?? 0), retryAfterMs: 0, resetMs: windowMs };
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
    const decision = this.#decide(check.key, check.limit, check.windowMs, now);
    return {
      code: check.code,
      limit: check.limit,
      remaining: decision.remaining,
      resetMs: decision.retryAfterMs,
      room: decision.allowed,
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
    for (const [key, log] of this.#sliding) if (log.last <= now - log.windowMs) this.#sliding.delete(key);
    for (const [key, fixed] of this.#fixed) if (fixed.until <= now) this.#fixed.delete(key);
    for (const [key, slots] of this.#slots) {
      // Leases that ran out (a request whose release never came) go with their map once it is empty.
      for (const [id, expiresAt] of slots) if (expiresAt <= now) slots.delete(id);
      if (slots.size === 0) this.#slots.delete(key);
    }
  }

  async admit(request: AdmitRequest): Promise<AdmitResult> {
    const { now } = request;
    this.#sweep(now);
    const states = request.windows.map((check) => this.#state(check, now));
    const strip = (): WindowState[] =>
      states.map(({ code, limit, remaining, resetMs }) => ({ code, limit, remaining, resetMs }));
    // Of the full windows, the one that frees up last: Retry-After must be the real wait, not the
    // first window's (a full day behind a full minute is a wait of hours).
    const full = states
      .filter((s) => !s.room)
      .reduce<(typeof states)[number] | undefined>(
        (last, s) => (!last || s.resetMs > last.resetMs ? s : last),
        undefined,
      );
    if (full)
      return { allowed: false, code: full.code, retryAfterMs: Math.max(1, full.resetMs), windows: strip() };
    let slotId: string | null = null;
    if (request.slot) {
      const slots = this.#liveSlots(request.slot.key, now);
      if (slots.size >= request.slot.max) {
        // The earliest lease to expire bounds the wait; most slots come back much sooner.
        return { allowed: false, code: 'concurrency_limit', retryAfterMs: 1000, windows: strip() };
      }
      // Unique within this process is enough; a counter spares a randomBytes syscall per admission.
      this.#slotCounter = (this.#slotCounter + 1) % Number.MAX_SAFE_INTEGER;
      slotId = this.#slotCounter.toString(36);
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
        const log = this.#record(check.key, check.windowMs, now);
        state.resetMs = log.oldest() + check.windowMs - now;
      }
    });
    return { allowed: true, windows: strip(), slotId };
  }

  async release(slotKey: string, slotId: string): Promise<void> {
    const slots = this.#slots.get(slotKey);
    // A credential with nothing in flight keeps no map (about 18 MB for 100,000 keys).
    if (slots?.delete(slotId) && slots.size === 0) this.#slots.delete(slotKey);
  }

  async renew(slotKey: string, slotId: string, leaseMs: number, now: number): Promise<boolean> {
    const slots = this.#slots.get(slotKey);
    const expiresAt = slots?.get(slotId);
    if (!slots || expiresAt === undefined || expiresAt <= now) return false;
    slots.set(slotId, now + leaseMs);
    return true;
  }

  async hit(key: string, limit: number, windowMs: number, now: number): Promise<WindowDecision> {
    const decision = this.#decide(key, limit, windowMs, now);
    if (!decision.allowed) return decision;
    const log = this.#record(key, windowMs, now);
    return { ...decision, remaining: limit - log.size, resetMs: log.oldest() + windowMs - now };
  }

  async peek(key: string, limit: number, windowMs: number, now: number): Promise<WindowDecision> {
    return this.#decide(key, limit, windowMs, now);
  }

  /** Counts without collecting: asking about a later instant must not end leases early. */
  async inFlight(slotKey: string, now: number): Promise<number> {
    let live = 0;
    for (const expiresAt of this.#slots.get(slotKey)?.values() ?? []) if (expiresAt > now) live++;
    return live;
  }

  /** Credentials and windows it holds state for: sliding logs, fixed windows, slot maps (for tests). */
  get tracked(): { sliding: number; fixed: number; slots: number } {
    return { sliding: this.#sliding.size, fixed: this.#fixed.size, slots: this.#slots.size };
  }

  async close(): Promise<void> {
    this.#sliding.clear();
    this.#fixed.clear();
    this.#slots.clear();
  }
}
