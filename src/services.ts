/**
 * What each layer is handed by the composition root (src/deps.ts builds them). Faces get `Services`:
 * the domain's services and the values they read, never the store, the limiter or the sessions. The
 * edge, which authenticates and limits every request, gets `EdgeServices`.
 */
import type { Catalog } from './catalog/catalog.ts';
import type { Env, ServiceFile } from './config.ts';
import type { Accounts } from './domain/accounts.ts';
import type { Analyses } from './domain/analysis/analyses.ts';
import type { Authenticator } from './domain/auth.ts';
import type { Billing } from './domain/billing.ts';
import type { Collections } from './domain/collections.ts';
import type { Connections, OAuthServer } from './domain/connections.ts';
import type { Credentials } from './domain/credentials.ts';
import type { DataExports } from './domain/export.ts';
import type { Idempotency } from './domain/idempotency.ts';
import type { DataImports } from './domain/imports.ts';
import type { Charges } from './domain/metering.ts';
import type { Operator } from './domain/operator.ts';
import type { PasswordResets } from './domain/password-resets.ts';
import type { Pricing } from './domain/pricing.ts';
import type { MeteredReads } from './domain/reads.ts';
import type { Recipes } from './domain/recipes.ts';
import type { HeldSlots } from './limits/held-slots.ts';
import type { Limiter } from './limits/port.ts';
import type { Metrics } from './metrics.ts';

export interface ProcessLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface Services {
  env: Env;
  config: ServiceFile;
  pricing: Pricing;
  catalog: Catalog;
  credentials: Credentials;
  /** Password reset by email: the link, and the new password it sets. */
  passwordResets: PasswordResets;
  /** Dataset reads, every one metered: the unmetered fetch is the domain's own (DataReads). */
  reads: MeteredReads;
  recipes: Recipes;
  accounts: Accounts;
  exports: DataExports;
  /** Imports of published files by the named importers (`tmd import --format`). */
  imports: DataImports;
  /** The Workbench: saved analyses, their runs, and the assistant (docs/analyze.md). */
  analyses: Analyses;
  /** The operator's actions (admin API, `tmd`); the self-service spending caps too. */
  operator: Operator;
  /** Answers kept for retries sent with an Idempotency-Key. */
  idempotency: Idempotency;
  /** Buying tokens: packs, Stripe Checkout and its webhook, token requests. */
  billing: Billing;
  /** Collectors: runs of each public source, and their state (admin API, `tmd collect`). */
  collections: Collections;
  /** OAuth connections of hosted agents to accounts (MCP sign-in), approved in the Terminal. */
  connections: Connections;
  /** The OAuth authorization server, when BASE_URL names the public origin; null otherwise. */
  oauth: OAuthServer | null;
  /** The charges in flight, which a node that has to stop now closes (edge/shutdown.ts). */
  charges: Charges;
  now: () => number;
  metrics: Metrics;
  /** Process-level events (not requests): adapter switches, shutdown. */
  log: ProcessLog;
  /** Reachability for /readyz: the store answers a ping; the limiter is `local` when in-process by configuration. */
  health: { store: () => Promise<void>; limiter: () => Promise<'ok' | 'degraded' | 'local'> };
}

export interface EdgeServices extends Services {
  auth: Authenticator;
  limiter: Limiter;
  /** The in-flight slots of this process's requests, renewed while they run. */
  slots: HeldSlots;
}
