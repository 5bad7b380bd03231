/** The composition root: the one place that picks adapters and wires the domain together. */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Catalog } from './catalog/catalog.ts';
import { loadCatalogFile } from './catalog/catalog-file.ts';
import { CursorCodec } from './catalog/read-plan.ts';
import type { DatasetDef } from './catalog/types.ts';
import type { Env, ServiceFile } from './config.ts';
import { ConfigError, loadServiceFile } from './config.ts';
import { Authenticator } from './domain/auth.ts';
import { Credentials } from './domain/credentials.ts';
import { makePricing, type Pricing } from './domain/pricing.ts';
import { DataReads } from './domain/reads.ts';
import { Recipes } from './domain/recipes.ts';
import { Sessions } from './domain/sessions.ts';
import { MemoryLimiter } from './limits/memory-limiter.ts';
import type { Limiter } from './limits/port.ts';
import { withKeyCache } from './store/key-cache.ts';
import type { Store } from './store/port.ts';
import { SqliteStore } from './store/sqlite/sqlite-store.ts';

export interface Deps {
  env: Env;
  config: ServiceFile;
  pricing: Pricing;
  catalog: Catalog;
  store: Store;
  limiter: Limiter;
  sessions: Sessions;
  auth: Authenticator;
  credentials: Credentials;
  reads: DataReads;
  recipes: Recipes;
  now: () => number;
}

export interface DepsOptions {
  env: Env;
  /** Already-parsed configuration (tests); read from env.CONFIG_FILE when absent. */
  config?: ServiceFile;
  datasets?: readonly DatasetDef[];
  now?: () => number;
  store?: Store;
  limiter?: Limiter;
}

/** JWT_SECRET from the environment, else one generated once and kept in the data folder. */
function loadSecret(env: Env): Buffer {
  if (env.JWT_SECRET) return Buffer.from(env.JWT_SECRET, 'utf8');
  const path = join(env.DATA_DIR, 'jwt-secret');
  try {
    return Buffer.from(readFileSync(path, 'utf8').trim(), 'base64url');
  } catch {
    mkdirSync(env.DATA_DIR, { recursive: true });
    const secret = randomBytes(32);
    writeFileSync(path, secret.toString('base64url'), { mode: 0o600, flag: 'wx' });
    return secret;
  }
}

function derive(secret: Buffer, purpose: string): Buffer {
  return createHmac('sha256', secret).update(purpose).digest();
}

export async function buildDeps(options: DepsOptions): Promise<Deps> {
  const { env } = options;
  const now = options.now ?? Date.now;
  const config = options.config ?? loadServiceFile(env.CONFIG_FILE);
  const datasets = options.datasets ?? loadCatalogFile(env.CATALOG_FILE).datasets;
  const pricing = makePricing(config);
  const catalog = new Catalog(datasets, pricing);

  let store = options.store;
  if (!store) {
    if (/^postgres(ql)?:\/\//.test(env.DATABASE_URL)) {
      throw new ConfigError(
        'DATABASE_URL: PostgreSQL is not available in this build yet; use a SQLite file path.',
      );
    }
    store = new SqliteStore(env.DATABASE_URL);
  }
  store = withKeyCache(store, env.KEY_CACHE_TTL_MS, now);
  await store.migrate();
  const limiter = options.limiter ?? new MemoryLimiter();

  const secret = loadSecret(env);
  const sessions = new Sessions(store, derive(secret, 'session-jwt'), now);
  const endsAt = config.pricing.free_public_test.ends_at;
  const auth = new Authenticator(store, sessions, now, () => (endsAt === null ? null : Date.parse(endsAt)));
  const credentials = new Credentials({
    store,
    limiter,
    sessions,
    config,
    now,
    ipSalt: derive(secret, 'ip-salt').toString('hex'),
  });
  const reads = new DataReads({
    store,
    pricing,
    catalog,
    now,
    cursors: new CursorCodec(derive(secret, 'cursor')),
  });
  const recipes = new Recipes(reads);
  return { env, config, pricing, catalog, store, limiter, sessions, auth, credentials, reads, recipes, now };
}

export async function closeDeps(deps: Deps): Promise<void> {
  await deps.limiter.close();
  await deps.store.close();
}
