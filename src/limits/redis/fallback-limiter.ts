/**
 * FallbackLimiter: the failure policy for a shared limiter. While Redis answers, every decision is
 * Redis's. While it does not, each process keeps enforcing limits on its own with a MemoryLimiter,
 * every limit scaled down to `fraction` of itself (rounded down, at least 1): with fraction = 1/N and N
 * nodes behind the load balancer, the cluster as a whole stays within the limit. The switch is logged
 * each way and exported as metrics; when Redis is back the next call uses it again, without a restart.
 * Counts made locally during an outage are not carried over to Redis (documented in the README).
 */
import { MemoryLimiter } from '../memory-limiter.ts';
import type { AdmitRequest, AdmitResult, Limiter, WindowDecision } from '../port.ts';

/** The shared limiter behind the fallback: a Limiter that can tell whether it is connected. */
export interface SharedLimiter extends Limiter {
  readonly ready: boolean;
  ping(): Promise<void>;
}

export interface FallbackEvents {
  /** Called once when the shared limiter becomes unreachable, and once when it is back. */
  onDegraded(error: unknown): void;
  onRecovered(): void;
  /** Called for every decision taken locally while degraded. */
  onLocalDecision(): void;
}

const LOCAL_SLOT = 'local:';

export class FallbackLimiter implements Limiter {
  readonly #shared: SharedLimiter;
  readonly #local = new MemoryLimiter();
  readonly #fraction: number;
  readonly #events: FallbackEvents;
  #degraded = false;

  constructor(shared: SharedLimiter, fraction: number, events: FallbackEvents) {
    if (!(fraction > 0 && fraction <= 1)) throw new RangeError('fraction must be in (0, 1]');
    this.#shared = shared;
    this.#fraction = fraction;
    this.#events = events;
  }

  /** True while decisions are taken per process. */
  get degraded(): boolean {
    return this.#degraded;
  }

  /** Checks the shared limiter now; used by readiness. */
  async check(): Promise<'ok' | 'degraded'> {
    try {
      await this.#shared.ping();
      this.#recovered();
      return 'ok';
    } catch (error) {
      this.#failed(error);
      return 'degraded';
    }
  }

  #scale(limit: number): number {
    return Math.max(1, Math.floor(limit * this.#fraction));
  }

  #failed(error: unknown): void {
    if (this.#degraded) return;
    this.#degraded = true;
    this.#events.onDegraded(error);
  }

  #recovered(): void {
    if (!this.#degraded) return;
    this.#degraded = false;
    this.#events.onRecovered();
  }

  /** Runs on the shared limiter when it is connected, else (or if the call fails) locally. */
  async #either<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    if (this.#shared.ready) {
      try {
        const result = await shared();
        this.#recovered();
        return result;
      } catch (error) {
        this.#failed(error);
      }
    } else {
      this.#failed(new Error('the shared limiter is not connected'));
    }
    this.#events.onLocalDecision();
    return local();
  }

  admit(request: AdmitRequest): Promise<AdmitResult> {
    return this.#either(
      () => this.#shared.admit(request),
      async () => {
        const result = await this.#local.admit({
          now: request.now,
          windows: request.windows.map((w) => ({ ...w, limit: this.#scale(w.limit) })),
          ...(request.slot ? { slot: { ...request.slot, max: this.#scale(request.slot.max) } } : {}),
        });
        return result.allowed && result.slotId !== null
          ? { ...result, slotId: `${LOCAL_SLOT}${result.slotId}` }
          : result;
      },
    );
  }

  async release(slotKey: string, slotId: string): Promise<void> {
    if (slotId.startsWith(LOCAL_SLOT)) return this.#local.release(slotKey, slotId.slice(LOCAL_SLOT.length));
    // A shared slot that cannot be released now is freed by its lease.
    await this.#shared.release(slotKey, slotId);
  }

  async renew(slotKey: string, slotId: string, leaseMs: number, now: number): Promise<boolean> {
    if (slotId.startsWith(LOCAL_SLOT)) {
      return this.#local.renew(slotKey, slotId.slice(LOCAL_SLOT.length), leaseMs, now);
    }
    return this.#shared.renew(slotKey, slotId, leaseMs, now);
  }

  hit(key: string, limit: number, windowMs: number, now: number): Promise<WindowDecision> {
    return this.#either(
      () => this.#shared.hit(key, limit, windowMs, now),
      () => this.#local.hit(key, this.#scale(limit), windowMs, now),
    );
  }

  peek(key: string, limit: number, windowMs: number, now: number): Promise<WindowDecision> {
    return this.#either(
      () => this.#shared.peek(key, limit, windowMs, now),
      () => this.#local.peek(key, this.#scale(limit), windowMs, now),
    );
  }

  inFlight(slotKey: string, now: number): Promise<number> {
    return this.#either(
      async () => (await this.#shared.inFlight(slotKey, now)) + (await this.#local.inFlight(slotKey, now)),
      () => this.#local.inFlight(slotKey, now),
    );
  }

  async close(): Promise<void> {
    await this.#shared.close();
    await this.#local.close();
  }
}
