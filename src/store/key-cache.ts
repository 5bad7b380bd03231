/**
 * KeyCachingStore: a Store decorator that keeps recent key lookups in memory, so the hot read path does
 * not pay a database round trip to authenticate. Everything that changes a cached fact through this
 * process updates or evicts it at once (a revoked key stops working immediately on this node); changes
 * made by other nodes show within `ttlMs`. The debit itself always runs against the store, so a stale
 * balance can never overdraw a wallet.
 */
import type {
  CreditInput,
  CreditResult,
  DebitInput,
  DebitResult,
  KeyContext,
  KeyKind,
  KeyRecord,
  Store,
} from './port.ts';

interface Entry {
  context: KeyContext;
  cachedAt: number;
}

const MAX_ENTRIES = 50_000;

export function withKeyCache(store: Store, ttlMs: number, now: () => number = Date.now): Store {
  if (ttlMs <= 0) return store;
  const byDigest = new Map<string, Entry>();
  // Digests cached per wallet, so a debit touches only its wallet's entries (it runs on every read).
  const byWallet = new Map<string, Set<string>>();
  const drop = (digest: string) => {
    const entry = byDigest.get(digest);
    if (!entry) return;
    byDigest.delete(digest);
    const digests = byWallet.get(entry.context.wallet.id);
    digests?.delete(digest);
    if (digests?.size === 0) byWallet.delete(entry.context.wallet.id);
  };
  const put = (digest: string, entry: Entry) => {
    drop(digest);
    if (byDigest.size >= MAX_ENTRIES) {
      byDigest.clear();
      byWallet.clear();
    }
    byDigest.set(digest, entry);
    const digests = byWallet.get(entry.context.wallet.id) ?? new Set<string>();
    digests.add(digest);
    byWallet.set(entry.context.wallet.id, digests);
    // Entries are in the order they were cached: expired ones leave from the front, so the cache holds
    // what the last `ttlMs` looked up, not up to MAX_ENTRIES keys that will never hit again.
    const at = now();
    for (const [oldest, cached] of byDigest) {
      if (at - cached.cachedAt < ttlMs) break;
      drop(oldest);
    }
  };
  /**
   * Changes made through this process while lookups were in flight: what they changed (`key:`, `acc:`
   * or `wal:` and its id) -> the change's sequence number. A lookup that such a change overlapped may
   * have read the row before it: its answer serves the request that asked, but is not cached, or it
   * would outlive the eviction the change made (a revoked key working again here until the TTL ran
   * out). Kept only while a lookup is in flight.
   */
  let sequence = 0;
  let lookups = 0;
  const changedAt = new Map<string, number>();
  const changed = (what: string) => {
    sequence++;
    if (lookups > 0) changedAt.set(what, sequence);
  };
  const overlapped = (context: KeyContext, since: number) =>
    [
      `key:${context.key.id}`,
      `acc:${context.key.accountId}`,
      `acc:${context.account?.id}`,
      `wal:${context.wallet.id}`,
    ].some((what) => (changedAt.get(what) ?? 0) > since);
  const evict = (what: string, match: (context: KeyContext) => boolean) => {
    changed(what);
    for (const [digest, entry] of byDigest) if (match(entry.context)) drop(digest);
  };

  /** A wallet changed in a way the cache cannot follow: its keys are looked up afresh. */
  const forgetWallet = (walletId: string) => {
    changed(`wal:${walletId}`);
    for (const digest of [...(byWallet.get(walletId) ?? [])]) drop(digest);
  };

  const overrides: Partial<Store> = {
    async findKeyByDigest(digest: string): Promise<KeyContext | null> {
      const hit = byDigest.get(digest);
      if (hit && now() - hit.cachedAt < ttlMs) return hit.context;
      const since = sequence;
      lookups++;
      let context: KeyContext | null;
      try {
        context = await store.findKeyByDigest(digest);
      } finally {
        lookups--;
      }
      const fresh = context !== null && !overlapped(context, since);
      if (lookups === 0) changedAt.clear();
      if (context && fresh) put(digest, { context, cachedAt: now() });
      else drop(digest);
      return context;
    },
    async debit(input: DebitInput): Promise<DebitResult> {
      const result = await store.debit(input);
      const burnMonthMicros = result.ok ? result.burnMonthMicros : undefined;
      if (burnMonthMicros === null) {
        // The wallet is in a later month than this debit's: its figures are read afresh.
        forgetWallet(input.walletId);
        return result;
      }
      for (const digest of byWallet.get(input.walletId) ?? []) {
        const entry = byDigest.get(digest);
        if (!entry) continue;
        entry.context = {
          ...entry.context,
          wallet: {
            ...entry.context.wallet,
            balanceMicros: result.balanceMicros,
            ...(burnMonthMicros === undefined ? {} : { burnMonth: input.month, burnMonthMicros }),
          },
        };
      }
      return result;
    },
    async credit(input: CreditInput): Promise<CreditResult> {
      const result = await store.credit(input);
      forgetWallet(input.walletId);
      return result;
    },
    async revokeKey(id: string, at: number): Promise<boolean> {
      const result = await store.revokeKey(id, at);
      evict(`key:${id}`, (c) => c.key.id === id);
      return result;
    },
    async replaceKeys(accountId: string, kind: KeyKind, key: KeyRecord, at: number): Promise<void> {
      await store.replaceKeys(accountId, kind, key, at);
      evict(`acc:${accountId}`, (c) => c.key.accountId === accountId);
    },
    async setKeyCaps(id, caps) {
      const result = await store.setKeyCaps(id, caps);
      evict(`key:${id}`, (c) => c.key.id === id);
      return result;
    },
    async updateAccount(id, patch) {
      await store.updateAccount(id, patch);
      evict(`acc:${id}`, (c) => c.account?.id === id);
    },
    async completePasswordReset(digest, passwordHash, at) {
      const result = await store.completePasswordReset(digest, passwordHash, at);
      if (result) evict(`acc:${result.accountId}`, (c) => c.account?.id === result.accountId);
      return result;
    },
  };

  return new Proxy(store, {
    get(target, property) {
      if (typeof property === 'string' && property in overrides) return overrides[property as keyof Store];
      if (property === 'cachedKeys') return byDigest.size; // for tests
      // The store itself as `this`: its getters and methods read its private fields.
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
