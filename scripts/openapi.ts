/**
 * Writes the service's OpenAPI document (as GET /api/v1/openapi.json serves it) to the file named by the
 * first argument, for `npm run lint` to check with Redocly.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { parseEnv } from '../src/config.ts';
import { buildDeps, closeDeps } from '../src/deps.ts';

const out = process.argv[2];
if (!out) throw new Error('usage: node scripts/openapi.ts <file>');
const dir = mkdtempSync(join(tmpdir(), 'tmd-openapi-'));
try {
  const env = parseEnv({
    DATABASE_URL: join(dir, 'tmd.sqlite'),
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
  });
  const deps = await buildDeps({ env });
  const app = await buildApp(deps, { logger: false });
  await app.ready();
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(app.swagger(), null, 2)}\n`);
  await app.close();
  await closeDeps(deps);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
