/**
 * KeyCachingStore: a Store decorator that keeps recent key lookups in memory, so the hot read path does
 * not pay a database round trip to authenticate. Everything that changes a cached fact through this
 * process updates or evicts it at once (a revoked key stops working immediately on this node); changes
 * made by other nodes show within `ttlMs`. The debit itself always runs against the store, so a stale
 * balance can never overdraw a wallet.
 */
import type { KeyKind } from '../domain/keys.ts';
import type {
  CreditInput,
  CreditResult,
  DebitInput,
  DebitResult,
  KeyContext,
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
  };
  /**
   * Counts the changes made through this process. A lookup that a change overlapped may have read the
   * row before it: its answer serves the request that asked, but is not cached, or it would outlive
   * the eviction the change made (a revoked key working again here until the TTL ran out).
   */
  let changes = 0;
  const evict = (match: (context: KeyContext) => boolean) => {
    changes++;
    for (const [digest, entry] of byDigest) if (match(entry.context)) drop(digest);
  };

  const overrides: Partial<Store> = {
    async findKeyByDigest(digest: string): Promise<KeyContext | null> {
      const hit = byDigest.get(digest);
      if (hit && now() - hit.cachedAt < ttlMs) return hit.context;
      const before = changes;
      const context = await store.findKeyByDigest(digest);
      if (context && changes === before) put(digest, { context, cachedAt: now() });
      else drop(digest);
      return context;
    },
    async debit(input: DebitInput): Promise<DebitResult> {
      const result = await store.debit(input);
      for (const digest of byWallet.get(input.walletId) ?? []) {
        const entry = byDigest.get(digest);
        if (!entry) continue;
        entry.context = {
          ...entry.context,
          wallet: {
            ...entry.context.wallet,
            balanceMicros: result.balanceMicros,
            ...(result.ok ? { burnMonth: input.month, burnMonthMicros: result.burnMonthMicros } : {}),
          },
        };
      }
      return result;
    },
    async credit(input: CreditInput): Promise<CreditResult> {
      const result = await store.credit(input);
      changes++;
      for (const digest of [...(byWallet.get(input.walletId) ?? [])]) drop(digest);
      return result;
    },
    async revokeKey(id: string, at: number): Promise<boolean> {
      const result = await store.revokeKey(id, at);
      evict((c) => c.key.id === id);
      return result;
    },
    async replaceKeys(accountId: string, kind: KeyKind, key: KeyRecord, at: number): Promise<void> {
      await store.replaceKeys(accountId, kind, key, at);
      evict((c) => c.key.accountId === accountId);
    },
    async setKeyCaps(id, caps) {
      const result = await store.setKeyCaps(id, caps);
      evict((c) => c.key.id === id);
      return result;
    },
    async updateAccount(id, patch) {
      await store.updateAccount(id, patch);
      evict((c) => c.account?.id === id);
    },
  };

  return new Proxy(store, {
    get(target, property, receiver) {
      if (typeof property === 'string' && property in overrides) return overrides[property as keyof Store];
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
