/** The process: read config, build deps, listen, shut down cleanly. The only place that listens. */

import { buildApp } from './app.ts';
import { scheduleCollectors } from './collectors/schedule.ts';
import { ConfigError, parseEnv } from './config.ts';
import { buildDeps, closeDeps } from './deps.ts';
import { scheduleMonthlyCredits } from './domain/packages.ts';
import { gracefulShutdown } from './edge/shutdown.ts';

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
  // Collectors on their schedules (docs/collectors.md); COLLECTORS=0 keeps this node out of it.
  const stopCollectors = env.COLLECTORS === '1' ? scheduleCollectors(deps.collections, deps.log) : () => {};
  const shutdown = gracefulShutdown(app, deps, {
    graceMs: env.SHUTDOWN_GRACE_MS,
    stopJobs: () => {
      stopMonthlyCredits();
      stopCollectors();
    },
    exit: (code) => process.exit(code),
    close: () => closeDeps(deps),
  });
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
