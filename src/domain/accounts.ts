/** Self-service: what a caller holds and spent. The faces present these values; none reads the store. */
import type { ServiceFile, Tier } from '../config.ts';
import { AppError } from '../errors.ts';
import type { KeyRecord, LedgerEntry, UsageEvent, WalletRecord } from '../store/port.ts';
import type { Caller } from './caller.ts';
import { credentialKinds } from './credential-kinds.ts';
import { type CallerLimits, limitsFor } from './limits-policy.ts';
import { burnedThisMonth, type MeterDeps, tierOf } from './metering.ts';
import { MICROS_PER_TOKEN } from './money.ts';
import { type Entitlements, entitlementsOf } from './packages.ts';
import { nextTier } from './pricing.ts';
import { publicTestWindowEnd } from './public-test.ts';
import { utcMonthStart } from './spending-caps.ts';
import { summarizeUsage, type UsageSummary, usageScope } from './usage-summary.ts';

export interface AccountSnapshot {
  caller: Caller;
  /** The wallet as it is now (the caller's copy may come from the key cache). */
  wallet: WalletRecord;
  burnedMicros: bigint;
  tier: Tier;
  next: { tier: Tier; tokensNeededMicros: bigint } | null;
  limits: CallerLimits;
  entitlements: Entitlements | null;
  /** When the account's public-test window closes (null: it never registered for the public test). */
  publicTestWindowEnd: number | null;
}

export interface AccountsDeps extends MeterDeps {
  config: ServiceFile;
}

/** The most usage events a ledger page looks through to name its entries' reads. */
const LEDGER_USAGE_SCAN = 2000;

export class Accounts {
  readonly #deps: AccountsDeps;

  constructor(deps: AccountsDeps) {
    this.#deps = deps;
  }

  /** The caller's wallet (and account) read now: tier and balance move with every burn. */
  async current(caller: Caller): Promise<Caller> {
    const wallet = await this.#deps.store.getWallet(caller.wallet.id);
    const account = caller.account ? await this.#deps.store.getAccount(caller.account.id) : null;
    return { ...caller, ...(wallet ? { wallet } : {}), ...(account ? { account } : {}) };
  }

  /**
   * The account's low-balance threshold (null: none): a read that takes the balance below it is
   * shown in the Terminal and posted to the operator's webhook, once per crossing.
   */
  async setLowBalance(caller: Caller, micros: bigint | null): Promise<void> {
    if (!caller.account)
      throw new AppError(
        'forbidden',
        'A low-balance notice belongs to an account: sign in, or use a key of the account.',
      );
    if (micros !== null && micros < 0n)
      throw new AppError('invalid_request', 'The threshold cannot be negative.');
    await this.#deps.store.updateAccount(caller.account.id, { lowBalanceMicros: micros });
  }

  async snapshot(caller: Caller): Promise<AccountSnapshot> {
    const now = this.#deps.now();
    const fresh = await this.current(caller);
    const tier = tierOf(this.#deps, fresh, now);
    const burnedMicros = burnedThisMonth(fresh, now);
    const next = credentialKinds[caller.kind].baseTierOnly ? null : nextTier(this.#deps.pricing, tier);
    return {
      caller: fresh,
      wallet: fresh.wallet,
      burnedMicros,
      tier,
      next: next
        ? { tier: next, tokensNeededMicros: BigInt(next.min_tokens) * MICROS_PER_TOKEN - burnedMicros }
        : null,
      limits: limitsFor(this.#deps.config, this.#deps.pricing, fresh, now),
      entitlements: caller.account ? entitlementsOf(this.#deps.config, caller.account) : null,
      publicTestWindowEnd: fresh.account ? publicTestWindowEnd(this.#deps.config, fresh.account) : null,
    };
  }

  /** Usage events, newest first: an account's every key, or an account-less sandbox key's own. */
  async usage(
    caller: Caller,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ events: UsageEvent[]; nextCursor: string | null }> {
    const scope = usageScope(caller);
    if (!scope) throw new AppError('forbidden', 'No usage to show for this credential.');
    if (cursor !== undefined && !/^[1-9]\d{0,17}$/.test(cursor)) {
      throw new AppError(
        'invalid_cursor',
        'The cursor is not one this endpoint gave: pass meta.next_cursor unchanged.',
      );
    }
    const events = await this.#deps.store.listUsage(scope, cursor ?? null, limit + 1);
    const page = events.slice(0, limit);
    return { events: page, nextCursor: events.length > page.length ? (page.at(-1)?.id ?? null) : null };
  }

  /** Tokens and reads per UTC day by channel, and the top datasets, over the last `days` days. */
  async usageSummary(caller: Caller, days: number): Promise<UsageSummary> {
    return summarizeUsage(this.#deps.store, caller, this.#deps.now(), days);
  }

  /** The keys of the caller's account. */
  async keys(caller: Caller): Promise<KeyRecord[]> {
    if (!caller.account) throw new AppError('forbidden', 'This credential has no account and so no keys.');
    return this.#deps.store.listKeys(caller.account.id);
  }

  /** The account's keys, each with the tokens it burned this UTC month (one indexed sum a key). */
  async keysWithUsage(caller: Caller): Promise<{ key: KeyRecord; burnedThisMonthMicros: bigint }[]> {
    const keys = await this.keys(caller);
    const since = utcMonthStart(this.#deps.now());
    return Promise.all(
      keys.map(async (key) => ({
        key,
        burnedThisMonthMicros: await this.#deps.store.keyBurnedSince(key.id, since),
      })),
    );
  }

  /**
   * One page of the caller's wallet entries, newest first, below the entry id `beforeId` (null: from the
   * newest); `more` says whether older entries follow. `balanceMicros` is the balance the newest entry
   * left (0 with none). Reads `limit + 1` entries and the newest one, never the whole ledger.
   */
  async ledgerPage(
    caller: Caller,
    page: { beforeId: string | null; limit: number },
  ): Promise<{
    entries: LedgerEntry[];
    more: boolean;
    balanceMicros: bigint;
    reads: Map<string, UsageEvent>;
  }> {
    const { store } = this.#deps;
    const walletId = caller.wallet.id;
    const entries = await store.listEntriesPage(walletId, { beforeId: page.beforeId, limit: page.limit + 1 });
    const more = entries.length > page.limit;
    if (more) entries.length = page.limit;
    const newest =
      page.beforeId === null
        ? entries[0]
        : (await store.listEntriesPage(walletId, { beforeId: null, limit: 1 }))[0];
    const reads = await this.#readsOf(caller, entries);
    return { entries, more, balanceMicros: newest?.balanceAfterMicros ?? 0n, reads };
  }

  /**
   * The reads behind a page's burns and refunds (dataset, key, channel), by request id: the caller's usage
   * events, newest first, back to the page's oldest entry, at most LEDGER_USAGE_SCAN of them (an older
   * page of a very busy account may show some entries without their read).
   */
  async #readsOf(caller: Caller, entries: readonly LedgerEntry[]): Promise<Map<string, UsageEvent>> {
    const wanted = new Set(entries.flatMap((e) => (e.requestId === null ? [] : [e.requestId])));
    const found = new Map<string, UsageEvent>();
    const oldest = entries.at(-1)?.createdAt;
    if (wanted.size === 0 || oldest === undefined) return found;
    const scope = caller.account
      ? { accountId: caller.account.id }
      : caller.key
        ? { keyId: caller.key.id }
        : null;
    if (!scope) return found;
    let beforeId: string | null = null;
    for (let seen = 0; seen < LEDGER_USAGE_SCAN && found.size < wanted.size; ) {
      const events = await this.#deps.store.listUsage(scope, beforeId, 500);
      for (const event of events) {
        if (wanted.has(event.requestId) && !found.has(event.requestId)) found.set(event.requestId, event);
      }
      seen += events.length;
      const last = events.at(-1);
      if (!last || events.length < 500 || last.at < oldest) break;
      beforeId = last.id;
    }
    return found;
  }
}
