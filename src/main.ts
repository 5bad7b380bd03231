/** The process: read config, build deps, listen, shut down cleanly. The only place that listens. */
import { ConfigError, parseEnv } from './config.ts';
import { buildDeps, closeDeps } from './deps.ts';
import { buildApp } from './http/app.ts';

async function main(): Promise<void> {
  const env = parseEnv();
  const deps = await buildDeps({ env });
  const app = await buildApp(deps);
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    await app.close();
    await closeDeps(deps);
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  await app.listen({ port: env.PORT, host: env.HOST });
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
