/**
 * Callers for unit tests of domain modules: an account made through the admin API of a test server,
 * read back from its store as the authenticator would see it, so a domain call runs without a route.
 */
import assert from 'node:assert/strict';
import type { Caller, CredentialKind } from '../../src/domain/caller.ts';
import type { Channel } from '../../src/store/port.ts';
import { type OperatorAccount, operatorAccount } from '../helpers/operator.ts';
import type { TestServer } from '../helpers/server.ts';

export const M = 1_000_000n;

export interface TestCaller {
  account: OperatorAccount;
  caller: Caller;
}

/**
 * A caller of a new account: its live key (kind `live`) on `rest`, or a session (kind `session`) on
 * `terminal`. `tokens` are credited as a top-up; `pkg` is assigned without its monthly credit.
 */
export async function testCaller(
  server: TestServer,
  options: { tokens?: number; pkg?: string; kind?: CredentialKind; channel?: Channel } = {},
): Promise<TestCaller> {
  const account = await operatorAccount(server, { tokens: options.tokens ?? 0 });
  const { store } = server.deps;
  if (options.pkg) await store.updateAccount(account.id, { packageId: options.pkg });
  return { account, caller: await callerOf(server, account, options) };
}

/** The caller of an account as it is in the store now (its wallet's balance included). */
export async function callerOf(
  server: TestServer,
  account: OperatorAccount,
  options: { kind?: CredentialKind; channel?: Channel } = {},
): Promise<Caller> {
  const { store } = server.deps;
  const kind = options.kind ?? 'live';
  const [record, wallet, key] = await Promise.all([
    store.getAccount(account.id),
    store.getWallet(account.walletId),
    store.getKey(account.keyId),
  ]);
  assert.ok(record && wallet && key);
  return {
    kind,
    key: kind === 'session' ? null : key,
    account: record,
    wallet,
    channel: options.channel ?? (kind === 'session' ? 'terminal' : 'rest'),
    expiresAt: null,
  };
}

/** The wallet's entries other than its opening ones, as [kind, amount, request id]. */
export async function entriesOf(server: TestServer, walletId: string) {
  return (await server.deps.store.listEntries(walletId))
    .filter((e) => e.kind !== 'topup' && e.kind !== 'monthly_credit' && e.kind !== 'grant')
    .map((e) => [e.kind, e.amountMicros, e.requestId] as const);
}

/** The account's usage events, oldest first, as [request id, dataset, outcome, burned]. */
export async function usageOf(server: TestServer, accountId: string) {
  const events = await server.deps.store.listUsage({ accountId }, null, 100);
  return events
    .map((u) => [u.requestId, u.dataset, u.outcome, u.burnedMicros] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[2] < b[2] ? -1 : 1));
}
