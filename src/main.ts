/** The process: read config, build deps, listen, shut down cleanly. The only place that listens. */
import { ConfigError, parseEnv } from './config.ts';
import { buildDeps, closeDeps } from './deps.ts';
import { scheduleMonthlyCredits } from './domain/packages.ts';
import { buildApp } from './http/app.ts';

async function main(): Promise<void> {
  const env = parseEnv();
  const deps = await buildDeps({ env });
  const app = await buildApp(deps);
  // Packages' monthly credits: now and hourly; idempotent across restarts and nodes.
  const stopMonthlyCredits = scheduleMonthlyCredits(
    deps,
    (run) => {
      if (run.credited.length > 0)
        deps.log.info('monthly credits', { month: run.month, credited: run.credited.length });
    },
    (error) =>
      deps.log.warn('monthly credit job failed; it runs again within the hour', {
        err: (error as Error).message,
      }),
  );
  let closing = false;
  /**
   * Graceful shutdown: stop accepting (new requests on open connections get 503, so a load balancer
   * moves on), let in-flight requests finish and give their limiter slots back, then close the store
   * and the limiter (which waits for those releases). Past SHUTDOWN_GRACE_MS the process exits anyway:
   * slots it still held are then freed by their leases.
   */
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    stopMonthlyCredits();
    deps.log.info('shutting down: finishing in-flight requests', { signal });
    const grace = setTimeout(() => {
      deps.log.warn('shutdown grace period over: exiting with requests still in flight', {
        graceMs: env.SHUTDOWN_GRACE_MS,
      });
      process.exit(1);
    }, env.SHUTDOWN_GRACE_MS);
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
      deps.log.warn('error during shutdown', { err: (error as Error).message });
      process.exit(1);
    }
    deps.log.info('shut down cleanly');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  const address = await app.listen({ port: env.PORT, host: env.HOST });
  // One line a supervisor (or a test that asked for PORT=0) can read the bound address from.
  deps.log.info('listening', { address });
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  // Anything else that stops the start (a catalog file, an unreachable database, a port in use): one
  // line naming it, not a stack trace.
  const { code, message } = error as { code?: unknown; message?: unknown };
  console.error(`could not start: ${typeof code === 'string' ? `${code}: ` : ''}${String(message ?? error)}`);
  process.exit(1);
});
