/** Graceful shutdown of a node: what SIGTERM and SIGINT do. */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';

/**
 * Once the node stops now: how long the charges already sent to the store, and the refunds of the
 * exports cut, may take to commit before the process exits anyway.
 */
export const STOP_NOW_WAIT_MS = 7_000;

export interface ShutdownOptions {
  /** SHUTDOWN_GRACE_MS: how long in-flight requests may take before they are cut. */
  graceMs: number;
  /** Stops the node's background jobs (the monthly credits). */
  stopJobs(): void;
  /** process.exit, in the process. */
  exit(code: number): void;
  /** Closes the store and the limiter, once the requests are done. */
  close(): Promise<void>;
  /** STOP_NOW_WAIT_MS unless given (tests). */
  stopNowWaitMs?: number;
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
 * - charges not yet sent to the store are refused (503, nothing served), and those already sent may
 *   commit, their answers written before the exit: no read is charged and left unsent;
 * - the charges and the refunds get STOP_NOW_WAIT_MS together to commit; a refund that fails or does not
 *   commit in time, and a charge still in flight then (it may yet commit), are logged at error level.
 * Limiter slots still held are freed by their leases. At worst the process exits SHUTDOWN_GRACE_MS +
 * STOP_NOW_WAIT_MS after the first signal: a supervisor's kill deadline should allow that.
 */
export function gracefulShutdown(
  app: FastifyInstance,
  deps: Services,
  options: ShutdownOptions,
): (signal: string) => Promise<void> {
  let closing = false;
  let stopping: Promise<void> | undefined;
  const stopNow = (why: string) => {
    stopping ??= (async () => {
      deps.log.warn(`${why}: stopping now, with requests still in flight`, {
        openExports: app.openExports.size,
      });
      const deadline = Date.now() + (options.stopNowWaitMs ?? STOP_NOW_WAIT_MS);
      app.openExports.cutAll();
      const charges = await deps.charges.close(deadline - Date.now());
      // The answers of the charges that just committed are written in the turn that follows (an export
      // charged meanwhile is cut as it starts).
      await new Promise((resolve) => setImmediate(resolve));
      const cuts = await app.openExports.settle(deadline - Date.now());
      if (cuts.failed + cuts.unfinished > 0) {
        deps.log.error('exports cut by the shutdown and left charged: refund them by hand (tmd credit)', {
          ...cuts,
        });
      } else if (cuts.refunded + cuts.delivered > 0) {
        deps.log.warn('exports cut by the shutdown', { ...cuts });
      }
      if (charges.unsettled.length > 0) {
        deps.log.error('charges still in flight at exit: each may commit with its read unsent; check them', {
          requestIds: charges.unsettled,
        });
      }
      deps.log.warn('exiting', { chargesAwaited: charges.awaited });
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
      await options.close();
    } catch (error) {
      clearInterval(sweep);
      deps.log.warn('error during shutdown', { err: (error as Error).message });
      // Stopping now already: it exits once its refunds have committed.
      if (!stopping) options.exit(1);
      return;
    }
    if (stopping) return; // the grace ran out or a second signal came while the store closed
    clearTimeout(grace);
    deps.log.info('shut down cleanly');
    options.exit(0);
  };
}
