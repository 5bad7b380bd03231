/** Graceful shutdown of a node: what SIGTERM and SIGINT do. */
import type { FastifyInstance } from 'fastify';
import { closeDeps, type Deps } from '../deps.ts';

/** How long a cut export's refund may take to commit before the process exits anyway. */
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
 * When SHUTDOWN_GRACE_MS runs out first, or a second signal comes, the node stops now and exits 1: exports
 * still streaming are cut and refunded first (a read is charged only when it is served); limiter slots it
 * still holds are freed by their leases. Other in-flight requests are charged only once their data is in
 * hand, so exiting under them burns nothing that was not served.
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
      const open = app.openExports.size;
      deps.log.warn(`${why}: exiting with requests still in flight`, { openExports: open });
      if (open > 0) {
        const cut = await app.openExports.cutAll(CUT_REFUND_WAIT_MS);
        deps.log.warn('open exports cut and refunded', { cut });
      }
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
      await closeDeps(deps);
    } catch (error) {
      clearInterval(sweep);
      deps.log.warn('error during shutdown', { err: (error as Error).message });
      options.exit(1);
      return;
    }
    if (stopping) return; // the grace ran out or a second signal came while the close finished
    clearTimeout(grace);
    deps.log.info('shut down cleanly');
    options.exit(0);
  };
}
