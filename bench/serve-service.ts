/**
 * The real service in its own process for the benchmark; prints its port. BENCH_LOG=info turns the
 * request log on (one line per request on standard output, as in production).
 */

import { buildApp } from '../src/app.ts';
import { parseEnv } from '../src/config.ts';
import { buildDeps } from '../src/deps.ts';

const env = parseEnv();
const deps = await buildDeps({ env });
const level = process.env.BENCH_LOG;
const app = await buildApp(deps, { logger: level ? { level } : false });
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
