/** The real service in its own process for the benchmark; prints its port. */

import { buildApp } from '../src/app.ts';
import { parseEnv } from '../src/config.ts';
import { buildDeps } from '../src/deps.ts';

const env = parseEnv();
const deps = await buildDeps({ env });
const app = await buildApp(deps, { logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
