/** The composition root: the one place that picks adapters and wires the domain together. */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Catalog } from './catalog/catalog.ts';
import { loadCatalogFile } from './catalog/catalog-file.ts';
import { CursorCodec } from './catalog/read-plan.ts';
import type { DatasetDef } from './catalog/types.ts';
import { PoliteHttp } from './collectors/http.ts';
import { isPostgresUrl, openStores } from './composition/stores.ts';
import type { Env, ServiceFile } from './config.ts';
import { ConfigError, loadServiceFile } from './config.ts';
import { Accounts } from './domain/accounts.ts';
import { Analyses } from './domain/analysis/analyses.ts';
import { BuiltInPlanner } from './domain/analysis/built-in-planner.ts';
import { Authenticator } from './domain/auth.ts';
import { Billing } from './domain/billing.ts';
import { Collections } from './domain/collections.ts';
import { Connections } from './domain/connections.ts';
import { Credentials } from './domain/credentials.ts';
import { DataExports } from './domain/export.ts';
import { Idempotency } from './domain/idempotency.ts';
import { DataImports } from './domain/imports.ts';
import { Charges, type MeterDeps } from './domain/metering.ts';
import { Operator } from './domain/operator.ts';
import { PasswordResets } from './domain/password-resets.ts';
import { isP0, listCostOf, makePricing } from './domain/pricing.ts';
import { publicTestEndsAt } from './domain/public-test.ts';
import { DataReads, meteredReads } from './domain/reads.ts';
import { Recipes } from './domain/recipes.ts';
import { Sessions } from './domain/sessions.ts';
import { HeldSlots } from './limits/held-slots.ts';
import { MemoryLimiter } from './limits/memory-limiter.ts';
import type { Limiter } from './limits/port.ts';
import { FallbackLimiter } from './limits/redis/fallback-limiter.ts';
import { SmtpMailer } from './mail/smtp-mailer.ts';
import { Metrics } from './metrics.ts';
import { WebhookAlerts } from './notify/webhook.ts';
import { OidcOAuthServer } from './oauth/provider.ts';
import { StripePayments } from './payments/stripe.ts';
import { ChatPlanner } from './planners/chat-planner.ts';
import type { EdgeServices, ProcessLog } from './services.ts';
import type { Datasets, Store } from './store/port.ts';

/** Everything the process holds: the faces' services, the edge's, and the adapters behind them. */
export interface Deps extends EdgeServices {
  /** The ledger's adapter (it serves the Datasets port too, on the same database). */
  store: Store;
  /** Where dataset rows are read and loaded: `store` itself unless DATASETS_DATABASE_URL names another. */
  datasets: Datasets;
  /** The domain's reads, unmetered fetch included; the faces get only their metered part (`reads`). */
  dataReads: DataReads;
  sessions: Sessions;
  /** The SMTP adapter of password-reset mail; null without SMTP_URL. */
  mailer: SmtpMailer | null;
}

export type { ProcessLog };

export interface DepsOptions {
  env: Env;
  /** Already-parsed configuration (tests); read from env.CONFIG_FILE when absent. */
  config?: ServiceFile;
  datasets?: readonly DatasetDef[];
  now?: () => number;
  store?: Store;
  /** The Datasets adapter (tests): `store` when absent. */
  datasetStore?: Datasets;
  limiter?: Limiter;
  log?: ProcessLog;
  /** Where `external_datasets[].url_env` names are looked up: process.env when absent. */
  environ?: NodeJS.ProcessEnv;
  /** How the OAuth server fetches client ID metadata documents (tests); the library's guarded fetch when absent. */
  oauthFetch?: typeof globalThis.fetch;
}

const levels = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity } as const;

/** JSON lines in pino's shape on stdout, beside Fastify's request log. */
export function processLog(level: Env['LOG_LEVEL']): ProcessLog {
  const write =
    (at: number) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (at < levels[level]) return;
      process.stdout.write(
        `${JSON.stringify({ level: at, time: Date.now(), pid: process.pid, ...fields, msg })}\n`,
      );
    };
  return { info: write(levels.info), warn: write(levels.warn), error: write(levels.error) };
}

export { isPostgresUrl };

/** REDIS_URL set: Redis, with the per-process fallback of the failure policy. Else in-process limits. */
async function buildLimiter(env: Env, metrics: Metrics, log: ProcessLog) {
  // Declared either way, so a dashboard or an alert finds them (at 0 with in-process limits).
  const degraded = metrics.gauge(
    'tmd_limiter_degraded',
    '1 while Redis is unreachable and limits are enforced per process at LIMITS_FALLBACK_FRACTION',
  );
  const transitions = metrics.counter(
    'tmd_limiter_fallback_transitions_total',
    'Times the limiter switched from Redis to per-process limits',
  );
  const localDecisions = metrics.counter(
    'tmd_limiter_local_decisions_total',
    'Limit decisions taken per process because Redis was unreachable',
  );
  if (!env.REDIS_URL) {
    return { limiter: new MemoryLimiter() as Limiter, status: async () => 'local' as const };
  }
  // Loaded only when configured, as the PostgreSQL store is: an embedded service never holds their code.
  const { RedisLimiter } = await import('./limits/redis/redis-limiter.ts');
  const redis = new RedisLimiter(env.REDIS_URL, {
    keyPrefix: env.REDIS_KEY_PREFIX,
    onSilentConnection: (silentMs) => log.warn('Redis connection silent: reconnecting', { silentMs }),
  });
  const limiter = new FallbackLimiter(redis, env.LIMITS_FALLBACK_FRACTION, {
    onDegraded(error) {
      degraded(1);
      transitions();
      log.warn('Redis unreachable: limits continue per process', {
        fraction: env.LIMITS_FALLBACK_FRACTION,
        err: (error as Error)?.message ?? String(error),
      });
    },
    onRecovered() {
      degraded(0);
      log.info('Redis reachable again: limits are shared again');
    },
    onLocalDecision: () => localDecisions(),
  });
  degraded(0);
  if (!(await redis.connect())) await limiter.check();
  return { limiter: limiter as Limiter, status: () => limiter.check() };
}

/** JWT_SECRET from the environment, else one generated once and kept in the data folder. */
function loadSecret(env: Env): Buffer {
  if (env.JWT_SECRET) return Buffer.from(env.JWT_SECRET, 'utf8');
  const path = join(env.DATA_DIR, 'jwt-secret');
  let stored: string | undefined;
  try {
    stored = readFileSync(path, 'utf8').trim();
  } catch {
    stored = undefined;
  }
  if (stored !== undefined) {
    const secret = Buffer.from(stored, 'base64url');
    // An empty or truncated file would sign sessions and cursors with a key anyone can derive.
    if (secret.length < 32) {
      throw new ConfigError(
        `${path} holds ${secret.length} bytes of secret, fewer than 32: delete it to have a new one generated (every session ends), or set JWT_SECRET.`,
      );
    }
    return secret;
  }
  mkdirSync(env.DATA_DIR, { recursive: true });
  const secret = randomBytes(32);
  writeFileSync(path, secret.toString('base64url'), { mode: 0o600, flag: 'wx' });
  return secret;
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
  const catalog = new Catalog(datasets, {
    listCostOf: (key) => listCostOf(pricing, key),
    isP0: (key) => isP0(pricing, key),
  });

  const metrics = new Metrics();
  const log = options.log ?? processLog(env.LOG_LEVEL);
  const { store, rowStore } = await openStores(options, config, datasets, metrics, log, now);
  const built = options.limiter
    ? { limiter: options.limiter, status: async () => 'local' as const }
    : await buildLimiter(env, metrics, log);
  const limiter = metrics.timedLimiter(built.limiter);
  const slots = new HeldSlots(limiter, now, (error, slot) =>
    log.warn('could not renew an in-flight slot; its lease may run out', {
      slot: slot.key,
      err: (error as Error).message,
    }),
  );

  const secret = loadSecret(env);
  const access = buildAccess({ options, config, store, limiter, secret, log, now });
  const charges = new Charges();
  const alerts =
    env.ALERT_WEBHOOK_URL && env.ALERT_WEBHOOK_SECRET
      ? new WebhookAlerts({
          url: env.ALERT_WEBHOOK_URL,
          secret: env.ALERT_WEBHOOK_SECRET,
          onFailure: (error) => log.warn('a notice could not be delivered', { err: error }),
        })
      : null;
  const meterDeps = { store, charges, observer: metrics.meterObserver, pricing, now, alerts };
  const reads = new DataReads({
    ...meterDeps,
    catalog,
    datasets: rowStore,
    cursors: new CursorCodec(derive(secret, 'cursor')),
  });
  // A load swapped in on any node: this node's cached sources and spans of that dataset are dropped.
  void rowStore.onLoaded((dataset) => reads.forget(dataset));
  const services = buildServices({
    env,
    config,
    catalog,
    store,
    rowStore,
    reads,
    meterDeps,
    credentials: access.credentials,
    metrics,
    now,
  });
  return {
    env,
    config,
    pricing,
    catalog,
    store,
    datasets: rowStore,
    limiter,
    slots,
    ...access,
    reads: meteredReads(reads),
    dataReads: reads,
    ...services,
    charges,
    now,
    metrics,
    log,
    health: {
      store: async () => {
        await store.ping();
        if (rowStore !== store) await rowStore.ping();
      },
      limiter: built.status,
    },
  };
}

/** Who may call: sessions, sign-in for MCP clients (OAuth), credentials and password resets. */
function buildAccess(deps: {
  options: DepsOptions;
  config: ServiceFile;
  store: Store;
  limiter: Limiter;
  secret: Buffer;
  log: ProcessLog;
  now: () => number;
}) {
  const { options, config, store, limiter, secret, log, now } = deps;
  const { env } = options;
  const sessions = new Sessions(store, derive(secret, 'session-jwt'), now);
  // MCP sign-in needs the public origin: the issuer and the resource are URLs clients check.
  const oauth = env.BASE_URL
    ? new OidcOAuthServer({
        baseUrl: env.BASE_URL,
        mcpPath: '/mcp/jsonrpc',
        secret,
        store,
        getKey: (id) => store.getKey(id),
        now,
        proxy: env.TRUST_PROXY !== undefined,
        ...(options.oauthFetch && { fetch: options.oauthFetch }),
      })
    : null;
  const auth = new Authenticator(store, sessions, now, () => publicTestEndsAt(config), oauth);
  const connections = new Connections(store, oauth, now);
  const credentials = new Credentials({
    store,
    limiter,
    sessions,
    config,
    now,
    ipSalt: derive(secret, 'ip-salt').toString('hex'),
  });
  const mailer =
    env.SMTP_URL && env.MAIL_FROM ? new SmtpMailer({ url: env.SMTP_URL, from: env.MAIL_FROM }) : null;
  const passwordResets = new PasswordResets({
    store,
    limiter,
    mailer,
    config,
    now,
    ipSalt: derive(secret, 'ip-salt').toString('hex'),
    onMailFailure: (error) =>
      log.warn('a password-reset mail could not be sent', {
        err: (error as Error)?.message ?? String(error),
      }),
  });
  return { sessions, oauth, auth, connections, credentials, mailer, passwordResets };
}

/** The capabilities the faces are handed, over the stores and the metered reads. */
function buildServices(deps: {
  env: Env;
  config: ServiceFile;
  catalog: Catalog;
  store: Store;
  rowStore: Datasets;
  reads: DataReads;
  meterDeps: MeterDeps;
  credentials: Credentials;
  metrics: Metrics;
  now: () => number;
}) {
  const { env, config, catalog, store, rowStore, reads, meterDeps, credentials, metrics, now } = deps;
  const recipes = new Recipes(reads, meterDeps);
  const accounts = new Accounts({ store, pricing: meterDeps.pricing, now, config });
  const exports = new DataExports({ config, reads, meter: meterDeps, datasets: rowStore });
  const imports = new DataImports({
    datasets: rowStore,
    catalog,
    now,
    onImported: (dataset) => reads.forget(dataset),
  });
  const analyses = new Analyses({
    store,
    reads,
    meter: meterDeps,
    catalog,
    config,
    now,
    builtInPlanner: new BuiltInPlanner(catalog),
    chatPlanner: env.ASSISTANT_URL
      ? new ChatPlanner({
          url: env.ASSISTANT_URL,
          model: env.ASSISTANT_MODEL,
          apiKey: env.ASSISTANT_API_KEY,
          timeoutMs: env.ASSISTANT_TIMEOUT_MS,
        })
      : null,
  });
  const operator = new Operator({ store, datasets: rowStore, config, catalog, credentials, now });
  const idempotency = new Idempotency({ store, now });
  const billing = new Billing({
    store,
    config,
    payments:
      env.STRIPE_SECRET_KEY && env.STRIPE_WEBHOOK_SECRET
        ? new StripePayments({
            secretKey: env.STRIPE_SECRET_KEY,
            webhookSecret: env.STRIPE_WEBHOOK_SECRET,
            ...(env.STRIPE_API_URL ? { apiUrl: env.STRIPE_API_URL } : {}),
          })
        : null,
    now,
  });
  const collections = new Collections({
    datasets: rowStore,
    catalog,
    config: config.collectors,
    http: (options) => new PoliteHttp(options),
    credentials: {
      FRED_API_KEY: env.FRED_API_KEY,
      EIA_API_KEY: env.EIA_API_KEY,
      BLS_API_KEY: env.BLS_API_KEY,
    },
    now,
    onRun: (run) => {
      metrics.collected(run);
      for (const dataset of run.datasets) reads.forget(dataset);
    },
  });
  return { recipes, accounts, exports, imports, analyses, operator, idempotency, billing, collections };
}

export async function closeDeps(deps: Deps): Promise<void> {
  deps.slots.close();
  deps.mailer?.close();
  await deps.limiter.close();
  await deps.store.close();
  if (deps.datasets !== deps.store) await deps.datasets.close();
}
