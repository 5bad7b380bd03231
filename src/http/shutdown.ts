/** Graceful shutdown of a node: what SIGTERM and SIGINT do. */
import type { FastifyInstance } from 'fastify';
import { closeDeps, type Deps } from '../deps.ts';

/** How long charges already sent to the store may take to commit once the node stops now. */
export const CHARGE_WAIT_MS = 2_000;
/** How long the refunds of cut exports may take to commit before the process exits anyway. */
export const CUT_REFUND_WAIT_MS = 5_000;

export interface ShutdownOptions {
  /** SHUTDOWN_GRACE_MS: how long in-flight requests may take before they are cut. */
  graceMs: number;
  /** Stops the node's background jobs (the monthly credits). */
  stopJobs(): void;
  /** process.exit, in the process. */
  exit(code: number): void;
}

/**
 * Returns the signal handler. The first signal stops accepting (requests arriving on open connections
 * get a problem+json 503 with Connection: close, so a load balancer moves on), lets in-flight requests
 * finish and give their limiter slots back, then closes the store and the limiter (which waits for those
 * releases) and exits 0.
 *
 * When SHUTDOWN_GRACE_MS runs out first, or a second signal comes, the node stops now and exits 1:
 * - exports still streaming are broken off, and every export that starts streaming from then on (its
 *   charge was in flight) is too; each is refunded unless it had been handed whole to the connection;
 * - charges not yet sent to the store are refused (503, nothing served), and those already sent get up
 *   to CHARGE_WAIT_MS to commit, their answers written before the exit: no read is charged and unsent;
 * - the refunds get up to CUT_REFUND_WAIT_MS to commit; one that fails or does not commit in time is
 *   logged as an export left charged.
 * Limiter slots still held are freed by their leases. At worst the process exits SHUTDOWN_GRACE_MS +
 * CHARGE_WAIT_MS + CUT_REFUND_WAIT_MS after the first signal: a supervisor's kill deadline should allow that.
 */
export function gracefulShutdown(
  app: FastifyInstance,
  deps: Deps,
  options: ShutdownOptions,
): (signal: string) => Promise<void> {
  let closing = false;
  let stopping: Promise<void> | undefined;
  const stopNow = (why: string) => {
    stopping ??= (async () => {
      deps.log.warn(`${why}: stopping now, with requests still in flight`, {
        openExports: app.openExports.size,
      });
      app.openExports.cutAll();
      const charging = await deps.charges.close(CHARGE_WAIT_MS);
      // The answers of the charges that just committed are written in the turn that follows.
      await new Promise((resolve) => setImmediate(resolve));
      const cuts = await app.openExports.settle(CUT_REFUND_WAIT_MS);
      const cut = cuts.refunded + cuts.delivered + cuts.failed + cuts.unfinished;
      if (cuts.failed + cuts.unfinished > 0) {
        deps.log.error('exports cut by the shutdown and left charged: refund them by hand (tmd credit)', {
          ...cuts,
        });
      } else if (cut > 0) {
        deps.log.warn('exports cut by the shutdown', { ...cuts });
      }
      deps.log.warn('exiting', { chargesAwaited: charging });
      options.exit(1);
    })();
    return stopping;
  };

  return async (signal: string) => {
    if (closing) {
      await stopNow(`${signal} again`);
      return;
    }
    closing = true;
    options.stopJobs();
    deps.log.info('shutting down: finishing in-flight requests', { signal });
    const grace = setTimeout(
      () => void stopNow(`shutdown grace period (${options.graceMs} ms) over`),
      options.graceMs,
    );
    grace.unref();
    // Keep-alive connections whose request finishes after the close began would otherwise stay open
    // until their idle timeout and hold the close up: drop each as soon as it is idle.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
    try {
      await app.close();
      clearInterval(sweep);
      // Slot releases start on each response's close event: let the last ones be sent before the
      // limiter closes (it waits for calls already made).
      await new Promise((resolve) => setImmediate(resolve));
      // Stopping now already (the grace ran out, or a second signal): its refunds need the store open.
      if (stopping) return;
      await closeDeps(deps);
    } catch (error) {
      clearInterval(sweep);
      deps.log.warn('error during shutdown', { err: (error as Error).message });
      options.exit(1);
      return;
    }
    if (stopping) return; // the grace ran out or a second signal came while the store closed
    clearTimeout(grace);
    deps.log.info('shut down cleanly');
    options.exit(0);
  };
}
