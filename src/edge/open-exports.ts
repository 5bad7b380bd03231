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

interface Cut {
  done: Promise<void>;
  outcome?: CutOutcome;
}

export class OpenExports {
  readonly #open = new Set<OpenExport>();
  /** Once a shutdown has begun cutting: every cut, those of exports that started streaming since included. */
  #cuts: Cut[] | null = null;

  get size(): number {
    return this.#open.size;
  }

  /** Tracks an export until `done` (its response closed, whichever way); once cutting, cuts it at once. */
  track(open: OpenExport, done: Promise<unknown>): void {
    if (this.#cuts) {
      this.#cut(this.#cuts, open);
      return;
    }
    this.#open.add(open);
    void done.finally(() => this.#open.delete(open));
  }

  #cut(cuts: Cut[], open: OpenExport): void {
    const cut: Cut = { done: Promise.resolve() };
    cut.done = open.cut().then(
      (outcome) => {
        cut.outcome = outcome;
      },
      () => {
        cut.outcome = 'refund_failed';
      },
    );
    cuts.push(cut);
  }

  /**
   * Cuts every open export, and from now on every export that starts streaming (one whose charge was
   * in flight). Returns how many were open.
   */
  cutAll(): number {
    const open = [...this.#open];
    this.#open.clear();
    this.#cuts ??= [];
    for (const o of open) this.#cut(this.#cuts, o);
    return open.length;
  }

  /**
   * Waits, at most `waitMs`, for the refunds of every cut, those of exports cut while it waits included,
   * and reports what they did.
   */
  async settle(waitMs: number): Promise<CutReport> {
    const cuts = this.#cuts ?? [];
    const deadline = Date.now() + waitMs;
    for (;;) {
      const pending = cuts.filter((cut) => cut.outcome === undefined);
      const left = deadline - Date.now();
      if (pending.length === 0 || left <= 0) break;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(pending.map((cut) => cut.done)),
        new Promise((resolve) => {
          timer = setTimeout(resolve, left);
        }),
      ]);
      clearTimeout(timer);
    }
    const count = (outcome: CutOutcome | undefined) => cuts.filter((cut) => cut.outcome === outcome).length;
    return {
      refunded: count('refunded'),
      delivered: count('delivered'),
      failed: count('refund_failed'),
      unfinished: count(undefined),
    };
  }
}
