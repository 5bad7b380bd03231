/**
 * The exports streaming now. A shutdown that cannot wait for one (its grace period ran out, or a second
 * signal) cuts it here, through the path a failed stream takes: the export is refunded, then its stream
 * is broken. Exiting under a stream instead would leave an export charged and only partly delivered.
 */

/** One streaming export: `cut` refunds it (unless it was delivered whole) and breaks its stream. */
export interface OpenExport {
  cut(): Promise<void>;
}

export class OpenExports {
  readonly #open = new Set<OpenExport>();

  get size(): number {
    return this.#open.size;
  }

  /** Tracks an export until `done` (its response closed, whichever way). */
  track(open: OpenExport, done: Promise<unknown>): void {
    this.#open.add(open);
    void done.finally(() => this.#open.delete(open));
  }

  /**
   * Cuts every open export and waits for their refunds, at most `waitMs` (a refund that cannot commit
   * in time is logged by its export). Returns how many were cut.
   */
  async cutAll(waitMs: number): Promise<number> {
    const open = [...this.#open];
    this.#open.clear();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(open.map((o) => o.cut())),
      new Promise((resolve) => {
        timer = setTimeout(resolve, waitMs);
      }),
    ]);
    clearTimeout(timer);
    return open.length;
  }
}
