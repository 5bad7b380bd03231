/**
 * The key cache in front of the store: what changes through this process shows at once, including when
 * a lookup of the same key was already on its way to the database as the change was made.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newId } from '../src/domain/ids.ts';
import { newKey } from '../src/domain/keys.ts';
import { withKeyCache } from '../src/store/key-cache.ts';
import type { KeyContext, KeyRecord, Store } from '../src/store/port.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';

const T0 = Date.UTC(2026, 10, 24);
let backing: SqliteStore;
/** Lookups wait here when `held` is set: a lookup in flight while the test makes a change. */
let held: Promise<void> | null = null;
let cached: Store;

before(async () => {
  backing = new SqliteStore(':memory:');
  await backing.migrate();
  const slow = new Proxy(backing, {
    get(target, property, receiver) {
      if (property === 'findKeyByDigest') {
        return async (digest: string) => {
          const context = await target.findKeyByDigest(digest);
          if (held) await held;
          return context;
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  cached = withKeyCache(slow, 60_000);
});
after(async () => {
  await backing.close();
});

async function liveKey(): Promise<KeyRecord> {
  const account = await backing.createAccount(
    {
      id: newId('acc'),
      email: null,
      passwordHash: null,
      walletId: newId('wal'),
      createdAt: T0,
      publicTestStartedAt: null,
    },
    '2026-11',
  );
  const fresh = newKey('live');
  const key: KeyRecord = {
    id: newId('key'),
    kind: 'live',
    digest: fresh.digest,
    displayPrefix: fresh.displayPrefix,
    name: null,
    accountId: account.id,
    walletId: account.walletId,
    createdAt: T0,
    expiresAt: null,
    revokedAt: null,
    dailyCapMicros: null,
    monthlyCapMicros: null,
  };
  await backing.insertKey(key);
  return key;
}

/** A lookup that reads the row, then waits in flight while `change` runs through the cache. */
async function lookupOverlapping(digest: string, change: () => Promise<unknown>): Promise<KeyContext | null> {
  let release!: () => void;
  held = new Promise((resolve) => {
    release = resolve;
  });
  const inFlight = cached.findKeyByDigest(digest);
  await new Promise((resolve) => setImmediate(resolve));
  await change();
  held = null;
  release();
  return inFlight;
}

test('a revocation made while a lookup of the key is in flight holds for every later lookup', async () => {
  const key = await liveKey();
  const overlapped = await lookupOverlapping(key.digest, () => cached.revokeKey(key.id, T0 + 1));
  // The overlapping lookup read the row before the revocation: it may answer its own request so.
  assert.equal(overlapped?.key.revokedAt, null);
  const later = await cached.findKeyByDigest(key.digest);
  assert.equal(later?.key.revokedAt, T0 + 1, 'the stale answer was not cached');
});

test('spending caps set while a lookup is in flight apply to the next lookup', async () => {
  const key = await liveKey();
  await lookupOverlapping(key.digest, () =>
    cached.setKeyCaps(key.id, { dailyCapMicros: 5_000_000n, monthlyCapMicros: null }),
  );
  const later = await cached.findKeyByDigest(key.digest);
  assert.equal(later?.key.dailyCapMicros, 5_000_000n);
});

test('without a change in between, a lookup is cached: the next one does not reach the store', async () => {
  const key = await liveKey();
  assert.equal((await cached.findKeyByDigest(key.digest))?.key.id, key.id);
  // Revoked behind the cache's back (as another node would): the cached answer stands until the TTL.
  await backing.revokeKey(key.id, T0 + 2);
  assert.equal((await cached.findKeyByDigest(key.digest))?.key.revokedAt, null);
  await cached.revokeKey(key.id, T0 + 3);
  assert.equal((await cached.findKeyByDigest(key.digest))?.key.revokedAt, T0 + 2);
});

test('a change to another key, account or wallet does not keep an overlapping lookup out of the cache', async () => {
  const key = await liveKey();
  const other = await liveKey();
  await lookupOverlapping(key.digest, async () => {
    await cached.revokeKey(other.id, T0 + 4);
    await cached.credit({ walletId: other.walletId, kind: 'topup', amountMicros: 1n, at: T0 });
  });
  // Cached: a revocation behind the cache's back does not show until the TTL.
  await backing.revokeKey(key.id, T0 + 5);
  assert.equal((await cached.findKeyByDigest(key.digest))?.key.revokedAt, null);
});

test('the cache holds only what its TTL still covers: expired keys leave as new ones come', async () => {
  let now = T0;
  const timed = withKeyCache(backing, 1000, () => now);
  const size = () => (timed as unknown as { cachedKeys: number }).cachedKeys;
  const first = [await liveKey(), await liveKey(), await liveKey()];
  for (const key of first) await timed.findKeyByDigest(key.digest);
  assert.equal(size(), 3);
  now += 999;
  const fourth = await liveKey();
  await timed.findKeyByDigest(fourth.digest);
  assert.equal(size(), 4, 'nothing has expired yet');
  now += 1;
  const fifth = await liveKey();
  await timed.findKeyByDigest(fifth.digest);
  assert.equal(size(), 2, 'the first three expired and left; the fourth and fifth stay');
  assert.equal((await timed.findKeyByDigest(fourth.digest))?.key.id, fourth.id);
});

test('a store method read through the cache is bound once, and still reads the store', async () => {
  const direct = withKeyCache(backing, 60_000);
  assert.equal(direct.queryPage, direct.queryPage);
  assert.equal(direct.getWallet, direct.getWallet);
  const { getWallet } = direct;
  assert.equal(await getWallet('wal_none'), null);
});
