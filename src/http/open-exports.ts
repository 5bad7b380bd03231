/**
 * The exports streaming now. A shutdown that cannot wait for one (its grace period ran out, or a second
 * signal) cuts it here: its stream and connection are broken at once, and the export, unless it had
 * been handed whole to the connection, is refunded the way a failed stream is. Exiting under a stream
 * instead would leave an export charged and only partly delivered.
 */

/** What cutting one export did. */
export type CutOutcome = 'refunded' | 'delivered' | 'refund_failed';

/** One streaming export: `cut` breaks its stream now, then refunds it unless it was delivered whole. */
export interface OpenExport {
  cut(): Promise<CutOutcome>;
}

export interface CutReport {
  refunded: number;
  /** Handed whole to the connection before the cut: served, not refunded. */
  delivered: number;
  /** The refund failed (logged by its export): the export stays charged. */
  failed: number;
  /** The refund had not committed when the wait ran out. */
  unfinished: number;
}

export class OpenExports {
  readonly #open = new Set<OpenExport>();
  /** Once a shutdown has begun cutting: every cut, those of exports that started streaming since included. */
  #cuts: Promise<CutOutcome>[] | null = null;

  get size(): number {
    return this.#open.size;
  }

  /** Tracks an export until `done` (its response closed, whichever way); once cutting, cuts it at once. */
  track(open: OpenExport, done: Promise<unknown>): void {
    if (this.#cuts) {
      this.#cuts.push(open.cut());
      return;
    }
    this.#open.add(open);
    void done.finally(() => this.#open.delete(open));
  }

  /**
   * Cuts every open export, and from now on every export that starts streaming (one whose charge was
   * in flight). Returns how many were open.
   */
  cutAll(): number {
    const open = [...this.#open];
    this.#open.clear();
    this.#cuts ??= [];
    for (const o of open) this.#cuts.push(o.cut());
    return open.length;
  }

  /** Waits, at most `waitMs`, for the refunds of every cut so far, and reports what they did. */
  async settle(waitMs: number): Promise<CutReport> {
    const cuts = this.#cuts ?? [];
    const outcomes: (CutOutcome | undefined)[] = cuts.map(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(
        cuts.map((cut, index) =>
          cut.then(
            (outcome) => {
              outcomes[index] = outcome;
            },
            () => {
              outcomes[index] = 'refund_failed';
            },
          ),
        ),
      ),
      new Promise((resolve) => {
        timer = setTimeout(resolve, waitMs);
      }),
    ]);
    clearTimeout(timer);
    const count = (outcome: CutOutcome | undefined) => outcomes.filter((o) => o === outcome).length;
    return {
      refunded: count('refunded'),
      delivered: count('delivered'),
      failed: count('refund_failed'),
      unfinished: count(undefined),
    };
  }
}
