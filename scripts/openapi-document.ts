/** The service's OpenAPI document as GET /api/v1/openapi.json serves it, built without listening. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { parseEnv } from '../src/config.ts';
import { buildDeps, closeDeps } from '../src/deps.ts';

export async function openapiDocument(): Promise<Record<string, unknown>> {
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
    // A copy: the generators must not see (or change) the app's own object.
    const document = structuredClone(app.swagger()) as Record<string, unknown>;
    await app.close();
    await closeDeps(deps);
    return document;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
