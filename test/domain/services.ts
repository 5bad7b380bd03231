/**
 * The real services wired over a temporary SQLite file with a clock the test moves: the composition
 * root, without the HTTP app, for unit tests of the domain's services.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv, type ServiceFile } from '../../src/config.ts';
import { buildDeps, closeDeps, type Deps } from '../../src/deps.ts';
import { newId } from '../../src/domain/ids.ts';
import { tokensToMicros } from '../../src/domain/money.ts';
import { utcMonth } from '../../src/domain/pricing.ts';
import type { AccountRecord } from '../../src/store/port.ts';
import { baseConfig, TestClock } from '../helpers/server.ts';
import { T0 } from './support.ts';

export interface TestDeps {
  deps: Deps;
  clock: TestClock;
  config: ServiceFile;
  close(): Promise<void>;
}

/** The real services over a fresh SQLite file. */
export async function startDeps(
  options: { config?: (config: ServiceFile) => void; env?: Record<string, string> } = {},
): Promise<TestDeps> {
  const dir = mkdtempSync(join(tmpdir(), 'tmd-unit-'));
  const clock = new TestClock(T0);
  const config = baseConfig();
  options.config?.(config);
  const env = parseEnv({
    DATABASE_URL: join(dir, 'tmd.sqlite'),
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    PORT: '0',
    JWT_SECRET: 'unit-secret-unit-secret-unit-secret-0123',
    ADMIN_TOKEN: 'admin-token-for-tests-0123456789',
    ...options.env,
  });
  const deps = await buildDeps({ env, config, now: clock.now });
  return {
    deps,
    clock,
    config,
    async close() {
      await closeDeps(deps);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A login account made as an operator would (no signup grant), holding exactly `tokens`. */
export async function fundedAccount(
  t: TestDeps,
  tokens: number,
  fields: { email?: string; passwordHash?: string | null } = {},
): Promise<AccountRecord> {
  const now = t.clock.now();
  const made = await t.deps.store.createAccount(
    {
      id: newId('acc'),
      email: fields.email ?? `${newId('acc')}@example.com`,
      passwordHash: fields.passwordHash ?? null,
      walletId: newId('wal'),
      createdAt: now,
      publicTestStartedAt: null,
    },
    utcMonth(now),
  );
  if (tokens > 0) {
    await t.deps.store.credit({
      walletId: made.walletId,
      kind: 'topup',
      amountMicros: tokensToMicros(tokens),
      at: now,
      idempotencyKey: `setup-${made.id}`,
    });
  }
  return made;
}
