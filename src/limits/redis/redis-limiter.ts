/**
 * RedisLimiter: the shared adapter for several service nodes, on ioredis. Every method is one Lua
 * script (see scripts.ts), so a check and its record are atomic across all nodes. In-flight slots are
 * leases: a node that dies without releasing its slots loses them when the lease runs out.
 *
 * It fails fast rather than queueing: with Redis unreachable a call rejects at once (no offline queue,
 * no retries, a command timeout), and FallbackLimiter decides what to do. ioredis keeps reconnecting in
 * the background, so the limiter is used again as soon as Redis answers, without a restart.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { AdmitRequest, AdmitResult, Limiter, WindowCode, WindowDecision, WindowState } from '../port.ts';
import { admitScript, hitScript, renewScript } from './scripts.ts';

interface ScriptedRedis extends Redis {
  tmdAdmit(numberOfKeys: number, ...args: (string | number)[]): Promise<(string | number)[]>;
  tmdHit(numberOfKeys: number, ...args: (string | number)[]): Promise<number[]>;
  tmdRenew(numberOfKeys: number, ...args: (string | number)[]): Promise<number>;
}

export interface RedisLimiterOptions {
  /** Prefix of every key this limiter writes (several services, or test runs, can share one Redis). */
  keyPrefix?: string;
  /** A command that takes longer than this fails (a half-open connection must not hold requests). */
  commandTimeoutMs?: number;
  /** Called when a connection that stopped answering is dropped for a new one (for the log). */
  onSilentConnection?: (silentMs: number) => void;
}

// Members and slot ids only need to be unique across nodes: a random prefix per process and a counter
// (as request ids are), rather than two randomBytes calls, each a syscall, on every admission.
const processPrefix = randomBytes(9).toString('base64url');
let counter = 0;
const uid = () => {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${processPrefix}${counter.toString(36)}`;
};

/** The promise of a call, or of its synchronous throw. */
function attempt<T>(call: () => Promise<T>): Promise<T> {
  try {
    return call();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** At most this many unanswered undos are kept for a next connection; past it, the leases free what they would have. */
const MAX_PENDING_UNDOS = 10_000;
/** When undos sent again on a new connection are sent a last time (see #undo). */
const LATE_UNDO_MS = 5_000;

interface Release {
  key: string;
  id: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class RedisLimiter implements Limiter {
  readonly #redis: ScriptedRedis;
  readonly #prefix: string;
  readonly #pending = new Set<Promise<unknown>>();
  readonly #timeoutMs: number;
  readonly #onSilent: ((silentMs: number) => void) | undefined;
  /** When bytes last arrived from Redis on the current connection (or it became ready). */
  #heardAt = 0;
  /** A silence check is under way (#suspectSilence). */
  #suspecting = false;
  /**
   * Undos that got no answer, with when each was sent: the next connection sends again those the one
   * before may not have delivered (see #undo).
   */
  #unanswered: { send: () => Promise<unknown>; sentAt: number }[] = [];
  /** When the connection before the current one last sent any bytes. */
  #previousHeardAt = 0;
  /** Releases of this turn of the event loop, not sent yet (see release). */
  #releases: Release[] = [];

  constructor(url: string, options: RedisLimiterOptions = {}) {
    this.#prefix = options.keyPrefix ?? 'tmd:';
    this.#timeoutMs = options.commandTimeoutMs ?? 1000;
    this.#onSilent = options.onSilentConnection;
    this.#redis = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      maxRetriesPerRequest: 0,
      commandTimeout: this.#timeoutMs,
      connectTimeout: 2000,
      // Keep trying, never more than a second apart: recovery is noticed within about a second.
      retryStrategy: (attempt) => Math.min(50 * attempt, 1000),
    }) as ScriptedRedis;
    // Errors surface on the calls that fail; the connection's own error events would otherwise crash.
    this.#redis.on('error', () => {});
    this.#redis.on('connect', () => {
      this.#previousHeardAt = this.#heardAt;
      // Any bytes at all, replies to commands that already timed out and error replies included.
      this.#redis.stream.on('data', () => {
        this.#heardAt = Date.now();
      });
    });
    this.#redis.on('ready', () => {
      this.#heardAt = Date.now();
      this.#resendUndelivered();
    });
    this.#redis.defineCommand('tmdAdmit', { lua: admitScript });
    this.#redis.defineCommand('tmdHit', { lua: hitScript });
    this.#redis.defineCommand('tmdRenew', { lua: renewScript });
  }

  /** Connects, waiting at most `timeoutMs`; false if Redis did not answer (it keeps trying). */
  async connect(timeoutMs = 2000): Promise<boolean> {
    if (this.#redis.status === 'ready') return true;
    const ready = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.#redis.once('ready', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (this.#redis.status === 'wait') this.#redis.connect().catch(() => {});
    return ready;
  }

  /** True while the connection is up; calls made otherwise fail at once. */
  get ready(): boolean {
    return this.#redis.status === 'ready';
  }

  async ping(): Promise<void> {
    await this.#track(this.#redis.ping());
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#pending.add(work);
    const settled = () => this.#pending.delete(work);
    work.then(settled, (error: unknown) => {
      settled();
      if ((error as Error)?.message === 'Command timed out') this.#suspectSilence();
    });
    return work;
  }

  /**
   * A command timed out. If nothing at all has come back since it was sent, and still nothing comes for
   * another command timeout, the connection is taken to be dead (packets dropped without a reset: a
   * failover, a firewall that lost its state), which TCP alone may take many minutes to notice. It is
   * closed and ioredis connects anew; until then every call fails at once and the fallback decides,
   * rather than each waiting out the timeout. A Redis that is merely slow sends something back (late
   * replies count) within that time, so it keeps its connection.
   */
  #suspectSilence(): void {
    if (this.#suspecting || this.#redis.status !== 'ready') return;
    const sentAt = Date.now() - this.#timeoutMs;
    if (this.#heardAt >= sentAt) return;
    this.#suspecting = true;
    setTimeout(() => {
      this.#suspecting = false;
      if (this.#redis.status !== 'ready' || this.#heardAt >= sentAt) return;
      this.#onSilent?.(Date.now() - this.#heardAt);
      // Destroyed, not ended: a dead peer never acknowledges a close, and an ended socket would keep
      // the connection 'ready' (taking commands that time out) until ioredis's disconnect timeout.
      this.#redis.stream.destroy();
    }, this.#timeoutMs).unref();
  }

  /**
   * Sends an undo. Commands on one connection run in order, so an undo that went out on the connection
   * its script went out on runs after it, answered or not, as long as that connection delivered it: a
   * slow Redis that answers late did. One that gets no answer is kept (at most MAX_PENDING_UNDOS) until
   * it is known either way: delivered once its connection sends anything back after it, possibly lost if
   * that connection is replaced first. The next connection sends those again, and once more LATE_UNDO_MS
   * later, for scripts the silent connection still delivers late. Undos only remove members this node
   * added, so a repeated one is harmless; what is still missed after that, the slot's lease frees.
   */
  #undo(send: () => Promise<unknown>): void {
    const sentAt = Date.now();
    void this.#track(attempt(send)).catch(() => {
      // Those known delivered since are dropped as this one is kept.
      this.#unanswered = this.#unanswered.filter((u) => u.sentAt >= this.#heardAt);
      if (this.#unanswered.length < MAX_PENDING_UNDOS) this.#unanswered.push({ send, sentAt });
    });
  }

  /** On a new connection: sends again the undos the one before may not have delivered. */
  #resendUndelivered(): void {
    const undelivered = this.#unanswered.filter((u) => u.sentAt >= this.#previousHeardAt);
    this.#unanswered = [];
    if (undelivered.length === 0) return;
    const sendAll = () => {
      for (const { send } of undelivered) void this.#track(attempt(send)).catch(() => {});
    };
    sendAll();
    setTimeout(sendAll, LATE_UNDO_MS).unref();
  }

  async admit(request: AdmitRequest): Promise<AdmitResult> {
    const { now, windows, slot } = request;
    const keys = windows.map((w) => this.#prefix + w.key);
    const member = `${now}:${uid()}`;
    const args: (string | number)[] = [now, windows.length, slot ? 1 : 0, member];
    for (const w of windows) args.push(w.limit, w.windowMs, w.fixedUntil ?? -1);
    const slotId = slot ? uid() : '';
    if (slot) {
      keys.push(this.#prefix + slot.key);
      args.push(slot.max, slot.leaseMs, slotId);
    }
    let out: (string | number)[];
    try {
      out = await this.#track(this.#redis.tmdAdmit(keys.length, ...keys, ...args));
    } catch (error) {
      // The caller decides without Redis now (the fallback), but the script may still have run (a
      // command timeout, a connection lost after it was sent): take back what it may have recorded, so
      // a slot the request will never release does not hold for its whole lease. Sent after the script
      // on the same connection, so it runs after it; both removals are no-ops if it never ran. A fixed
      // window's count cannot be taken back exactly and stays: it can only refuse sooner, never later.
      this.#undo(() => {
        const undo = this.#redis.multi();
        windows.forEach((w, index) => {
          if (w.fixedUntil === undefined) undo.zrem(keys[index] as string, member);
        });
        if (slot) undo.zrem(this.#prefix + slot.key, slotId);
        return undo.exec();
      });
      throw error;
    }
    const states: WindowState[] = windows.map((w, index) => ({
      code: w.code,
      limit: w.limit,
      remaining: Number(out[4 + index * 2]),
      resetMs: Number(out[5 + index * 2]),
    }));
    if (Number(out[0]) === 1) return { allowed: true, windows: states, slotId: slot ? String(out[3]) : null };
    const refused = Number(out[1]);
    const code: WindowCode | 'concurrency_limit' =
      refused === 0 ? 'concurrency_limit' : (windows[refused - 1]?.code as WindowCode);
    return { allowed: false, code, retryAfterMs: Number(out[2]), windows: states };
  }

  /**
   * Releases wait for the end of this turn of the event loop and go out together: one ZREM per slot key
   * for all its slots, in one write (auto-pipelined), rather than a command and a write per request.
   */
  release(slotKey: string, slotId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#releases.length === 0) setImmediate(() => this.#sendReleases());
      this.#releases.push({ key: this.#prefix + slotKey, id: slotId, resolve, reject });
    });
  }

  #sendReleases(): void {
    const byKey = new Map<string, Release[]>();
    for (const release of this.#releases.splice(0)) {
      const same = byKey.get(release.key);
      if (same) same.push(release);
      else byKey.set(release.key, [release]);
    }
    for (const [key, releases] of byKey) {
      const ids = releases.map((r) => r.id);
      this.#track(attempt(() => this.#redis.zrem(key, ...ids))).then(
        () => {
          for (const r of releases) r.resolve();
        },
        (error: unknown) => {
          for (const r of releases) r.reject(error);
        },
      );
    }
  }

  async renew(slotKey: string, slotId: string, leaseMs: number, now: number): Promise<boolean> {
    return (await this.#track(this.#redis.tmdRenew(1, this.#prefix + slotKey, slotId, now, leaseMs))) === 1;
  }

  async #window(key: string, limit: number, windowMs: number, now: number, record: boolean) {
    const [allowed, remaining, retryAfterMs, resetMs] = await this.#track(
      this.#redis.tmdHit(1, this.#prefix + key, limit, windowMs, now, record ? 1 : 0, `${now}:${uid()}`),
    );
    return {
      allowed: allowed === 1,
      limit,
      remaining: Number(remaining),
      retryAfterMs: Number(retryAfterMs),
      resetMs: Number(resetMs),
    } satisfies WindowDecision;
  }

  hit(key: string, limit: number, windowMs: number, now: number): Promise<WindowDecision> {
    return this.#window(key, limit, windowMs, now, true);
  }

  peek(key: string, limit: number, windowMs: number, now: number): Promise<WindowDecision> {
    return this.#window(key, limit, windowMs, now, false);
  }

  async inFlight(slotKey: string, now: number): Promise<number> {
    return this.#track(this.#redis.zcount(this.#prefix + slotKey, `(${now}`, '+inf'));
  }

  /** Waits for calls already sent (slot releases of finishing requests), then disconnects. */
  async close(): Promise<void> {
    // Releases still waiting for the end of the turn go out now, before the connection closes.
    if (this.#releases.length > 0) this.#sendReleases();
    await Promise.allSettled([...this.#pending]);
    if (this.#redis.status === 'ready') await this.#redis.quit().catch(() => {});
    this.#redis.disconnect();
  }
}
