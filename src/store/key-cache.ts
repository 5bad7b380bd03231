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

/** The cached lookups, by digest and by wallet, and the changes that evict them. */
class KeyCache {
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #byDigest = new Map<string, Entry>();
  // Digests cached per wallet, so a debit touches only its wallet's entries (it runs on every read).
  readonly #byWallet = new Map<string, Set<string>>();
  /**
   * Changes made through this process while lookups were in flight: what they changed (`key:`, `acc:`
   * or `wal:` and its id) -> the change's sequence number. A lookup that such a change overlapped may
   * have read the row before it: its answer serves the request that asked, but is not cached, or it
   * would outlive the eviction the change made (a revoked key working again here until the TTL ran
   * out). Kept only while a lookup is in flight.
   */
  readonly #changedAt = new Map<string, number>();
  #sequence = 0;
  #lookups = 0;

  constructor(ttlMs: number, now: () => number) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  get size(): number {
    return this.#byDigest.size;
  }

  #drop(digest: string): void {
    const entry = this.#byDigest.get(digest);
    if (!entry) return;
    this.#byDigest.delete(digest);
    const digests = this.#byWallet.get(entry.context.wallet.id);
    digests?.delete(digest);
    if (digests?.size === 0) this.#byWallet.delete(entry.context.wallet.id);
  }

  #put(digest: string, entry: Entry): void {
    this.#drop(digest);
    if (this.#byDigest.size >= MAX_ENTRIES) {
      this.#byDigest.clear();
      this.#byWallet.clear();
    }
    this.#byDigest.set(digest, entry);
    const digests = this.#byWallet.get(entry.context.wallet.id) ?? new Set<string>();
    digests.add(digest);
    this.#byWallet.set(entry.context.wallet.id, digests);
    // Entries are in the order they were cached: expired ones leave from the front, so the cache holds
    // what the last `ttlMs` looked up, not up to MAX_ENTRIES keys that will never hit again.
    const at = this.#now();
    for (const [oldest, cached] of this.#byDigest) {
      if (at - cached.cachedAt < this.#ttlMs) break;
      this.#drop(oldest);
    }
  }

  #changed(what: string): void {
    this.#sequence++;
    if (this.#lookups > 0) this.#changedAt.set(what, this.#sequence);
  }

  #overlapped(context: KeyContext, since: number): boolean {
    return [
      `key:${context.key.id}`,
      `acc:${context.key.accountId}`,
      `acc:${context.account?.id}`,
      `wal:${context.wallet.id}`,
    ].some((what) => (this.#changedAt.get(what) ?? 0) > since);
  }

  /** A cached lookup, else `find`'s answer, cached unless a change overlapped it. */
  async lookup(
    digest: string,
    find: (digest: string) => Promise<KeyContext | null>,
  ): Promise<KeyContext | null> {
    const hit = this.#byDigest.get(digest);
    if (hit && this.#now() - hit.cachedAt < this.#ttlMs) return hit.context;
    const since = this.#sequence;
    this.#lookups++;
    let context: KeyContext | null;
    try {
      context = await find(digest);
    } finally {
      this.#lookups--;
    }
    const fresh = context !== null && !this.#overlapped(context, since);
    if (this.#lookups === 0) this.#changedAt.clear();
    if (context && fresh) this.#put(digest, { context, cachedAt: this.#now() });
    else this.#drop(digest);
    return context;
  }

  evict(what: string, match: (context: KeyContext) => boolean): void {
    this.#changed(what);
    for (const [digest, entry] of this.#byDigest) if (match(entry.context)) this.#drop(digest);
  }

  /** A wallet changed in a way the cache cannot follow: its keys are looked up afresh. */
  forgetWallet(walletId: string): void {
    this.#changed(`wal:${walletId}`);
    for (const digest of [...(this.#byWallet.get(walletId) ?? [])]) this.#drop(digest);
  }

  /** A debit's figures, written into its wallet's cached lookups. */
  debited(input: DebitInput, result: DebitResult): void {
    const burnMonthMicros = result.ok ? result.burnMonthMicros : undefined;
    if (burnMonthMicros === null) {
      // The wallet is in a later month than this debit's: its figures are read afresh.
      this.forgetWallet(input.walletId);
      return;
    }
    for (const digest of this.#byWallet.get(input.walletId) ?? []) {
      const entry = this.#byDigest.get(digest);
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
  }
}

export function withKeyCache(store: Store, ttlMs: number, now: () => number = Date.now): Store {
  if (ttlMs <= 0) return store;
  const cache = new KeyCache(ttlMs, now);
  const overrides: Partial<Store> = {
    findKeyByDigest: (digest: string): Promise<KeyContext | null> =>
      cache.lookup(digest, (d) => store.findKeyByDigest(d)),
    async debit(input: DebitInput): Promise<DebitResult> {
      const result = await store.debit(input);
      cache.debited(input, result);
      return result;
    },
    async credit(input: CreditInput): Promise<CreditResult> {
      const result = await store.credit(input);
      cache.forgetWallet(input.walletId);
      return result;
    },
    async revokeKey(id: string, at: number): Promise<boolean> {
      const result = await store.revokeKey(id, at);
      cache.evict(`key:${id}`, (c) => c.key.id === id);
      return result;
    },
    async replaceKeys(accountId: string, kind: KeyKind, key: KeyRecord, at: number): Promise<void> {
      await store.replaceKeys(accountId, kind, key, at);
      cache.evict(`acc:${accountId}`, (c) => c.key.accountId === accountId);
    },
    async setKeyCaps(id, caps) {
      const result = await store.setKeyCaps(id, caps);
      cache.evict(`key:${id}`, (c) => c.key.id === id);
      return result;
    },
    async updateAccount(id, patch) {
      await store.updateAccount(id, patch);
      cache.evict(`acc:${id}`, (c) => c.account?.id === id);
    },
    async completePasswordReset(digest, passwordHash, at) {
      const result = await store.completePasswordReset(digest, passwordHash, at);
      if (result) cache.evict(`acc:${result.accountId}`, (c) => c.account?.id === result.accountId);
      return result;
    },
  };

  // Each method bound once: every read calls through here, and a bind per call is an allocation.
  const bound = new WeakMap<(...args: never[]) => unknown, unknown>();
  return new Proxy(store, {
    get(target, property) {
      if (typeof property === 'string' && property in overrides) return overrides[property as keyof Store];
      if (property === 'cachedKeys') return cache.size; // for tests
      // The store itself as `this`: its getters and methods read its private fields.
      const value = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      let method = bound.get(value);
      if (method === undefined) {
        method = value.bind(target);
        bound.set(value, method);
      }
      return method;
    },
  });
}
