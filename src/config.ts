/**
 * The environment and the operator's configuration file, parsed once at start. `process.env` is read
 * here and nowhere else. Every problem is listed at once, each naming its field.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const skuSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9_-]+$/),
  name: z.string().min(1),
  monthly_credits: z.int().nonnegative().nullable(),
  rate_limit_per_minute: z.int().positive(),
  mcp_included: z.boolean(),
  bulk_export: z.boolean(),
  support: z.string(),
  notes: z.string(),
  analysis_assistant: z.boolean(),
  /** The Workbench's fair use, per account per UTC day (docs/analyze.md): each absent value has its default. */
  fair_use: z
    .strictObject({
      runs_per_day: z.int().positive().optional(),
      reads_per_run: z.int().positive().optional(),
      reuse_minutes: z.int().nonnegative().optional(),
      confirm_above_tokens: z.int().nonnegative().optional(),
    })
    .optional(),
});

const percent = z
  .number()
  .min(0)
  .max(100)
  .refine((v) => Number.isInteger(Math.round(v * 100)) && Math.abs(Math.round(v * 100) - v * 100) < 1e-9, {
    message: 'must have at most 2 decimals',
  });

const tierSchema = z.strictObject({
  level: z.int().positive(),
  name: z.string().min(1),
  medal: z.string(),
  min_tokens: z.int().nonnegative(),
  rate_limit_multiplier: z.number().positive(),
  rate_limit: z.int().positive(),
  discount_pct: percent,
  benefits: z.array(z.string()),
});

const freePublicTestSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  price_eur: z.number(),
  monthly_credits: z.int().nullable(),
  rate_limit_per_minute: z.int().positive(),
  daily_request_limit: z.int().positive(),
  concurrency_limit: z.int().positive(),
  outer_ip_fence_per_minute: z.int().positive(),
  fpt_skips_limiter_ip_fence: z.boolean(),
  config_warnings: z.array(z.string()),
  mcp_included: z.boolean(),
  bulk_export: z.boolean(),
  support: z.string(),
  enabled: z.boolean(),
  issuance_enabled: z.boolean(),
  window_days: z.int().positive(),
  key_ttl_days: z.int().positive(),
  ends_at: z.iso.datetime().nullable(),
  free_domains: z.array(z.string().regex(/^[a-z0-9-]+$/)),
  excluded_from_free: z.array(z.string()),
  issue_endpoint: z.string(),
  notes: z.string(),
});

const datasetKey = z.string().regex(/^[a-z0-9-]+\/[a-z0-9_-]+$/, 'must be domain/name');

const pricingSchema = z.strictObject({
  eur_per_token: z.number().positive(),
  /** Token packs sold (docs/billing.md): each at tokens × eur_per_token. */
  token_packs: z
    .array(
      z.strictObject({
        id: z.string().regex(/^[a-z0-9-]{1,40}$/),
        tokens: z.int().positive().max(10_000_000),
      }),
    )
    .default([]),
  terminal_surcharge_percent: z.int().nonnegative(),
  default_endpoint_cost: z.int().positive(),
  endpoint_costs: z.record(datasetKey, z.int().positive()),
  commercial_skus: z.array(skuSchema).min(1),
  loyalty_tiers: z
    .array(tierSchema)
    .min(1)
    .refine((tiers) => tiers[0]?.min_tokens === 0, { message: 'the first tier must start at min_tokens 0' })
    .refine((tiers) => tiers.every((t, i) => i === 0 || t.min_tokens > (tiers[i - 1]?.min_tokens ?? 0)), {
      message: 'tiers must be sorted by strictly increasing min_tokens',
    }),
  how_you_pay: z.strictObject({
    method: z.literal('prepaid_tokens'),
    subscriptions_live: z.boolean(),
    workbench_public_price_published: z.boolean(),
    signup_grant_tokens_default: z.int().nonnegative(),
    signup_grant_eur_notional: z.number().nonnegative(),
    typical_call_costs: z.array(z.strictObject({ tokens: z.int(), eur: z.number(), label: z.string() })),
    fpt: z.strictObject({ zero_burn_on_p0: z.boolean(), note: z.string() }),
    early_bird: z.strictObject({
      plan: z.literal('early_bird'),
      public_sku: z.boolean(),
      storefront: z.boolean(),
      note: z.string(),
    }),
    loyalty: z.strictObject({ kind: z.string(), note: z.string() }),
    terminal_surcharge: z.strictObject({ percent: z.int().nonnegative(), note: z.string() }),
  }),
  credit_clarity: z.strictObject({
    unit: z.literal('token'),
    headers: z.array(z.string()),
    subscriptions_live: z.boolean(),
    workbench_public_price_published: z.boolean(),
    note: z.string(),
  }),
  free_public_test: freePublicTestSchema,
});

const limitSchema = z.strictObject({
  per_minute: z.int().positive(),
  per_day: z.int().positive().nullable(),
  concurrent: z.int().positive(),
});

/** A dataset served from the operator's own PostgreSQL table (`src/store/postgres/external-rows.ts`). */
const externalDatasetSchema = z.strictObject({
  dataset: z.string().regex(/^[a-z0-9-]+\/[a-z0-9-]+$/),
  /** The environment variable that holds the connection URL: a secret, so never in this file. */
  url_env: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
  relation: z.string().regex(/^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$/),
  id_column: z.string().min(1),
  columns: z.record(z.string(), z.string().min(1)).default({}),
  provenance: z.string().min(1),
  assume_indexed: z.boolean().default(false),
});
export type ExternalDatasetConfig = z.infer<typeof externalDatasetSchema>;

/** A collector's settings (docs/collectors.md); a source not listed is not scheduled. */
const collectorSourceSchema = z.strictObject({
  enabled: z.boolean().default(false),
  /** Cron (UTC); the source's own when absent. */
  schedule: z.string().min(9).optional(),
  base_url: z.url().optional(),
  per_second: z.number().positive().max(10).optional(),
  options: z.record(z.string(), z.unknown()).default({}),
});

const collectorsSchema = z.strictObject({
  /** Who the operator is, sent as the User-Agent (SEC EDGAR requires one: "Company admin@example.com"). */
  user_agent: z.string().min(3).nullable().default(null),
  sources: z.record(z.string(), collectorSourceSchema).default({}),
});

export const serviceFileSchema = z
  .strictObject({
    sandbox: z.strictObject({
      enabled: z.boolean(),
      ttl_hours: z.int().positive(),
      token_grant: z.int().nonnegative(),
      sku: skuSchema,
      issue_endpoint: z.string(),
      recipes: z.array(z.string()),
      mcp_url: z.string(),
      notes: z.array(z.string()),
    }),
    pricing: pricingSchema,
    limits: z.strictObject({
      ip_fence_per_minute: z.int().positive(),
      sandbox: limitSchema.extend({ issuance_per_ip_per_day: z.int().positive() }),
      public_test: limitSchema.extend({ registrations_per_ip_per_day: z.int().positive() }),
      wallet: z.strictObject({ per_day: z.int().positive().nullable(), concurrent: z.int().positive() }),
      login: z.strictObject({
        failures_per_account: z.int().positive(),
        failures_per_ip: z.int().positive(),
        window_minutes: z.int().positive(),
      }),
      // Renewed once a second from half the lease on (src/limits/held-slots.ts): a few seconds at least.
      slot_lease_seconds: z.int().min(5),
    }),
    early_bird: z.strictObject({ cohort_cutoff: z.iso.datetime() }),
    quote_source_domains: z.array(z.string().regex(/^[a-z0-9-]+$/)).length(2),
    external_datasets: z.array(externalDatasetSchema).default([]),
    collectors: collectorsSchema.default({ user_agent: null, sources: {} }),
    /** Password reset by email (docs/api.md): how long a link works, and how often one may be asked for. */
    password_reset: z
      .strictObject({
        link_ttl_minutes: z
          .int()
          .min(5)
          .max(24 * 60),
        requests_per_email_per_hour: z.int().positive(),
        requests_per_ip_per_hour: z.int().positive(),
      })
      .default({ link_ttl_minutes: 30, requests_per_email_per_hour: 3, requests_per_ip_per_hour: 10 }),
  })
  .superRefine((file, ctx) => {
    if (file.pricing.terminal_surcharge_percent !== file.pricing.how_you_pay.terminal_surcharge.percent) {
      ctx.addIssue({
        code: 'custom',
        path: ['pricing', 'how_you_pay', 'terminal_surcharge', 'percent'],
        message: 'must equal pricing.terminal_surcharge_percent',
      });
    }
  });

export type ServiceFile = z.infer<typeof serviceFileSchema>;
export type Sku = z.infer<typeof skuSchema>;
export type Tier = z.infer<typeof tierSchema>;

/** A whole number in digits only (an empty or hex value is refused, not read as 0 or 16). */
const intVar = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number (digits only)')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .default(fallback);

const envSchema = z
  .object({
    PORT: intVar(0, 65535, 3000),
    HOST: z.string().default('127.0.0.1'),
    BASE_URL: z.url().optional(),
    DATABASE_URL: z
      .string()
      .min(1)
      .refine(
        (value) => !/^[a-z][a-z0-9+.-]*:\/\//i.test(value) || /^postgres(ql)?:\/\//i.test(value),
        'must be a postgres:// or postgresql:// URL, or a SQLite file path',
      )
      .default('data/tmd.sqlite'),
    /** Where dataset rows live, when not in the ledger's database (DATABASE_URL). */
    DATASETS_DATABASE_URL: z
      .string()
      .min(1)
      .refine(
        (value) => !/^[a-z][a-z0-9+.-]*:\/\//i.test(value) || /^postgres(ql)?:\/\//i.test(value),
        'must be a postgres:// or postgresql:// URL, or a SQLite file path',
      )
      .optional(),
    /** Where page queries go (a PostgreSQL read replica of the datasets' database). */
    DATASETS_READ_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\/\S+$/i, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\/\S+$/i, 'must be a redis:// or rediss:// URL')
      .optional(),
    /** Prefix of every Redis key the limiter writes, so several deployments can share one Redis. */
    REDIS_KEY_PREFIX: z.string().default('tmd:'),
    /**
     * With Redis unreachable, each node enforces this fraction of every limit on its own (1/N for N
     * nodes keeps the cluster within the limit). A decimal or a fraction: 0.5, 1/3.
     */
    LIMITS_FALLBACK_FRACTION: z
      .string()
      .default('1/3')
      .transform((raw, ctx) => {
        const match = /^\s*(\d+(?:\.\d+)?)\s*(?:\/\s*(\d+(?:\.\d+)?)\s*)?$/.exec(raw);
        const value = match ? Number(match[1]) / (match[2] === undefined ? 1 : Number(match[2])) : Number.NaN;
        if (!(value > 0 && value <= 1)) {
          ctx.addIssue({ code: 'custom', message: 'must be a number in (0, 1], e.g. 0.5 or 1/3' });
          return z.NEVER;
        }
        return value;
      }),
    /** Connections to PostgreSQL per process. */
    DATABASE_POOL_MAX: intVar(1, 500, 10),
    /** How long a stopping process waits for in-flight requests before it exits anyway. */
    SHUTDOWN_GRACE_MS: intVar(0, 600_000, 10_000),
    REQUEST_TIMEOUT_MS: intVar(1000, 600_000, 30_000),
    ADMIN_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
    METRICS_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
    JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    DATA_DIR: z.string().default('data'),
    CONFIG_FILE: z.string().default('config/service.json'),
    CATALOG_FILE: z.string().default('config/catalog.json'),
    TRUST_PROXY: z.string().optional(),
    /**
     * Origins whose pages may call the API with the session cookie (CORS with credentials), comma-separated
     * serialized origins. Unset: none; key-authenticated and anonymous calls are open to every origin.
     */
    CORS_ORIGINS: z
      .string()
      .optional()
      .transform((raw, ctx) => {
        const origins = (raw ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        for (const origin of origins) {
          let parsed: URL | undefined;
          try {
            parsed = new URL(origin);
          } catch {}
          if (parsed?.origin !== origin) {
            ctx.addIssue({
              code: 'custom',
              message: `${origin}: must be an origin like https://app.example.com`,
            });
            return z.NEVER;
          }
        }
        return origins;
      }),
    KEY_CACHE_TTL_MS: intVar(0, 60_000, 2000),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /**
     * The Workbench assistant's OpenAI-compatible chat-completions endpoint (…/v1/chat/completions of a
     * llama.cpp server, Ollama, vLLM or a hosted API); without it the built-in planner answers.
     */
    ASSISTANT_URL: z.url().optional(),
    ASSISTANT_MODEL: z.string().min(1).default('default'),
    ASSISTANT_API_KEY: z.string().min(1).optional(),
    /** Credentials of collector sources (docs/collectors.md). */
    FRED_API_KEY: z.string().min(1).optional(),
    EIA_API_KEY: z.string().min(1).optional(),
    BLS_API_KEY: z.string().min(1).optional(),
    /** Stripe Checkout for token packs (docs/billing.md); without them tokens are requested. */
    STRIPE_SECRET_KEY: z.string().min(8).optional(),
    STRIPE_WEBHOOK_SECRET: z.string().min(8).optional(),
    /** Another Stripe API address (a test server): http(s)://host:port. */
    STRIPE_API_URL: z.url().optional(),
    /** Where low-balance notices are POSTed, signed with the secret (docs/billing.md). */
    ALERT_WEBHOOK_URL: z.url().optional(),
    ALERT_WEBHOOK_SECRET: z.string().min(16).optional(),
    /**
     * The SMTP server that sends password-reset links: smtp://[user:password@]host:port (STARTTLS when
     * the server offers it) or smtps:// (TLS from the start). Without it password reset answers 503.
     */
    SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\/\S+$/i, 'must be an smtp:// or smtps:// URL')
      .optional(),
    /** The From of the service's mail, e.g. "TMD <no-reply@data.example.com>"; required with SMTP_URL. */
    MAIL_FROM: z.string().min(3).optional(),
    /** Set to 0 to keep a node from running scheduled collectors (the others still do). */
    COLLECTORS: z.enum(['0', '1']).default('1'),
    ASSISTANT_TIMEOUT_MS: intVar(1000, 600_000, 60_000),
  })
  .superRefine((env, ctx) => {
    if (env.SMTP_URL !== undefined && env.MAIL_FROM === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['MAIL_FROM'],
        message: 'is required with SMTP_URL (the From of password-reset mail)',
      });
    }
  });

export type Env = z.infer<typeof envSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function describeIssues(source: string, issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((i) => `  ${source}: ${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
    .join('\n');
}

export function parseEnv(raw: NodeJS.ProcessEnv = process.env): Env {
  // A variable set to nothing (PORT=) is unset, not 0 or an empty URL.
  const given = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== ''));
  const result = envSchema.safeParse(given);
  if (!result.success)
    throw new ConfigError(`invalid environment:\n${describeIssues('env', result.error.issues)}`);
  return result.data;
}

export function parseServiceFile(json: unknown, source = 'config'): ServiceFile {
  const result = serviceFileSchema.safeParse(json);
  if (!result.success) {
    throw new ConfigError(`invalid configuration file:\n${describeIssues(source, result.error.issues)}`);
  }
  return result.data;
}

export function loadServiceFile(path: string): ServiceFile {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`cannot read configuration file ${path}: ${(error as Error).message}`);
  }
  return parseServiceFile(json, path);
}
