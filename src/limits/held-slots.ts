/**
 * The in-flight slots this process holds, kept alive while their requests run. A slot is a lease
 * (`limits.slot_lease_seconds`) so that a node that dies cannot hold it forever; a request that
 * outlives the lease (a long export to a slow client) would otherwise lose its slot mid-stream and let
 * the caller start more requests than its limit. Once a second, every slot held for half its lease
 * since it was taken or last renewed is renewed for a full lease; a renewal that fails (Redis away for
 * a moment) is tried again each second while the other half of the lease lasts.
 */
import type { Limiter } from './port.ts';

export interface HeldSlot {
  key: string;
  id: string;
}

interface Lease extends HeldSlot {
  leaseMs: number;
  renewAt: number;
  renewing: boolean;
}

const TICK_MS = 1000;

export class HeldSlots {
  readonly #limiter: Limiter;
  readonly #now: () => number;
  readonly #onError: (error: unknown, slot: HeldSlot) => void;
  readonly #held = new Set<Lease>();
  readonly #timer: NodeJS.Timeout;

  constructor(limiter: Limiter, now: () => number, onError: (error: unknown, slot: HeldSlot) => void) {
    this.#limiter = limiter;
    this.#now = now;
    this.#onError = onError;
    this.#timer = setInterval(() => this.#renewDue(), TICK_MS);
    this.#timer.unref();
  }

  /** Records a slot just taken at `takenAt`; `release` gives it back. */
  hold(key: string, id: string, leaseMs: number, takenAt: number): HeldSlot {
    const lease: Lease = { key, id, leaseMs, renewAt: takenAt + leaseMs / 2, renewing: false };
    this.#held.add(lease);
    return lease;
  }

  /** Gives a held slot back to the limiter; releasing twice is harmless. */
  release(slot: HeldSlot): Promise<void> {
    this.#held.delete(slot as Lease);
    return this.#limiter.release(slot.key, slot.id);
  }

  /** Slots held now (for tests). */
  get size(): number {
    return this.#held.size;
  }

  #renewDue(): void {
    if (this.#held.size === 0) return;
    const now = this.#now();
    for (const lease of this.#held) {
      if (now < lease.renewAt || lease.renewing) continue;
      lease.renewing = true;
      this.#limiter
        .renew(lease.key, lease.id, lease.leaseMs, now)
        .then(
          (renewed) => {
            if (renewed) {
              lease.renewAt = now + lease.leaseMs / 2;
              return;
            }
            // Run out already (the node stalled past its lease): it may be counted as free elsewhere.
            this.#held.delete(lease);
            this.#onError(new Error('the slot lease had run out before it was renewed'), lease);
          },
          // Still due: tried again on the next tick, while half the lease is left.
          (error: unknown) => this.#onError(error, lease),
        )
        .finally(() => {
          lease.renewing = false;
        });
    }
  }

  /** Stops renewing (shutdown): slots still held are freed by release or by their leases. */
  close(): void {
    clearInterval(this.#timer);
  }
}
