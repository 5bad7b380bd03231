/** Issue 3 limits: per-minute (exact sliding window), daily, in-flight, IP fence, tiers, login throttling. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceFile } from '../src/config.ts';
import { LOGIN_GUESSES_PER_IP } from '../src/domain/credentials.ts';
import { HeldSlots } from '../src/limits/held-slots.ts';
import { MemoryLimiter } from '../src/limits/memory-limiter.ts';
import type { Limiter } from '../src/limits/port.ts';
import type { Store } from '../src/store/port.ts';
import {
  assertLedgerBalanced,
  bearer,
  publicTestKey,
  sandboxKey,
  startServer,
  type TestServer,
  walletAccount,
} from './helpers/server.ts';

const MINUTE = 60_000;

async function withServer(
  options: Parameters<typeof startServer>[0],
  body: (server: TestServer) => Promise<void>,
) {
  const server = await startServer(options);
  try {
    await body(server);
    await assertLedgerBalanced(server);
  } finally {
    await server.close();
  }
}

describe('per-minute limit (sliding window, injectable clock)', () => {
  test('60/min admits exactly 60, refuses the 61st with Retry-After, and the first request after the window passes', async () => {
    await withServer({}, async (server) => {
      const { key } = await walletAccount(server, 0);
      for (let i = 1; i <= 60; i++) {
        const res = await server.request('GET', '/api/v1/me', { headers: bearer(key) });
        assert.equal(res.status, 200, `request ${i}`);
        assert.equal(res.headers.get('ratelimit-policy'), '"minute";q=60;w=60');
        assert.equal(res.headers.get('ratelimit'), `"minute";r=${60 - i};t=60`);
      }
      const refused = await server.request('GET', '/api/v1/me', { headers: bearer(key) });
      assert.equal(refused.status, 429);
      assert.equal(refused.json.code, 'rate_limited');
      assert.equal(refused.headers.get('retry-after'), '60');
      assert.equal(refused.json.retry_after, 60);
      assert.equal(refused.headers.get('ratelimit'), '"minute";r=0;t=60', 'refusals carry the headers too');
      server.clock.advance(MINUTE - 1);
      const stillRefused = await server.request('GET', '/api/v1/me', { headers: bearer(key) });
      assert.equal(stillRefused.status, 429);
      assert.equal(stillRefused.headers.get('retry-after'), '1');
      server.clock.advance(1);
      assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(key) })).status, 200);
    });
  });

  test('no double burst at a window edge: 30 + 30 spread requests leave no room until the oldest expire', async () => {
    await withServer({}, async (server) => {
      const { key } = await walletAccount(server, 0);
      const me = () => server.request('GET', '/api/v1/me', { headers: bearer(key) });
      for (let i = 0; i < 30; i++) assert.equal((await me()).status, 200);
      server.clock.advance(30_000);
      for (let i = 0; i < 30; i++) assert.equal((await me()).status, 200);
      server.clock.advance(29_999);
      const edge = await me();
      assert.equal(edge.status, 429, 'a fixed window would have reset here');
      assert.equal(edge.headers.get('retry-after'), '1');
      server.clock.advance(1);
      for (let i = 0; i < 30; i++) assert.equal((await me()).status, 200, 'the first 30 expired');
      const after = await me();
      assert.equal(after.status, 429);
      assert.equal(after.headers.get('retry-after'), '30');
    });
  });
  test('a key refused on a session-only route (403) counts against its own per-minute limit', async () => {
    await withServer({}, async (server) => {
      const { key } = await walletAccount(server, 0);
      for (let i = 1; i <= 30; i++) {
        const res = await server.request('GET', '/api/v1/keys', { headers: bearer(key) });
        assert.equal(res.status, 403, `request ${i}`);
        assert.equal(res.json.code, 'forbidden');
        assert.equal(
          res.headers.get('ratelimit'),
          `"minute";r=${60 - i};t=60`,
          'the 403 carries the headers',
        );
      }
      for (let i = 31; i <= 60; i++) {
        assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(key) })).status, 200);
      }
      const refused = await server.request('POST', '/api/v1/auth/logout', { headers: bearer(key) });
      assert.equal(refused.status, 429, 'the 61st request of the minute, whatever the route');
      assert.equal(refused.json.code, 'rate_limited');
    });
  });
});

describe('daily limit', () => {
  test('rolls over at 00:00 UTC', async () => {
    const threePerDay = (c: ServiceFile) => {
      c.limits.sandbox.per_day = 3;
    };
    await withServer({ config: threePerDay }, async (server) => {
      server.clock.t = Date.parse('2026-11-21T23:59:00Z');
      const key = await sandboxKey(server);
      for (let i = 0; i < 3; i++)
        assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(key) })).status, 200);
      const refused = await server.request('GET', '/api/v1/me', { headers: bearer(key) });
      assert.equal(refused.status, 429);
      assert.equal(refused.json.code, 'daily_limit');
      assert.equal(refused.headers.get('retry-after'), '60', 'until midnight UTC');
      assert.match(refused.headers.get('ratelimit-policy') ?? '', /"day";q=3;w=86400/);
      server.clock.t = Date.parse('2026-11-22T00:00:00Z');
      assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(key) })).status, 200);
    });
  });
});

describe("public-test limits are the account's", () => {
  test('registering again for a new key does not start the per-minute window again', async () => {
    await withServer(
      {
        config: (c) => {
          c.limits.public_test.per_minute = 3;
        },
      },
      async (server) => {
        const first = await publicTestKey(server);
        for (let i = 0; i < 3; i++) {
          const res = await server.request('GET', '/api/v1/me', { headers: bearer(first.key) });
          assert.equal(res.status, 200);
        }
        const rotated = await publicTestKey(server, first.email, first.password);
        assert.notEqual(rotated.key, first.key);
        const refused = await server.request('GET', '/api/v1/me', { headers: bearer(rotated.key) });
        assert.equal(refused.status, 429, "the new key shares the account's window");
        assert.equal(refused.json.code, 'rate_limited');
        server.clock.advance(MINUTE);
        assert.equal(
          (await server.request('GET', '/api/v1/me', { headers: bearer(rotated.key) })).status,
          200,
        );
      },
    );
  });
});

describe('concurrency limit', () => {
  test('50 parallel slow reads on a public-test key: at most 10 in flight, 40 refused, slots back after aborts', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let delayMs = 300;
    const slow = (store: Store): Store =>
      new Proxy(store, {
        get(target, property, receiver) {
          // A read's page query, as rows or as one text page.
          if (property === 'queryRows' || property === 'queryPage') {
            return async (query: Parameters<Store['queryPage']>[0]) => {
              inFlight++;
              maxInFlight = Math.max(maxInFlight, inFlight);
              try {
                await sleep(delayMs);
                return await (property === 'queryRows' ? target.queryRows(query) : target.queryPage(query));
              } finally {
                inFlight--;
              }
            };
          }
          const value = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    // Aborting requests mid-flight needs a socket to close.
    await withServer({ wrapStore: slow, listen: true }, async (server) => {
      const { key } = await publicTestKey(server);
      const slotKey = `slot:acct:${await accountOf(server, key)}`;
      const path = '/api/v1/data/cftc/legacy_futures-facts?limit=1';
      const results = await Promise.all(
        Array.from({ length: 50 }, () => server.request('GET', path, { headers: bearer(key) })),
      );
      const ok = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status === 429);
      assert.equal(ok.length, 10);
      assert.equal(refused.length, 40);
      for (const r of refused) {
        assert.equal(r.json.code, 'concurrency_limit');
        assert.ok(r.headers.get('retry-after'));
      }
      assert.ok(maxInFlight <= 10, `max in flight measured in the server: ${maxInFlight}`);
      assert.equal(maxInFlight, 10);

      // Abort ten slow reads mid-flight: their slots must come back.
      delayMs = 2000;
      const controllers = Array.from({ length: 10 }, () => new AbortController());
      const pending = controllers.map((c) =>
        fetch(`${server.url}${path}`, { headers: bearer(key), signal: c.signal }).catch(() => 'aborted'),
      );
      for (
        let i = 0;
        i < 100 && (await server.deps.limiter.inFlight(slotKey, server.clock.now())) < 10;
        i++
      ) {
        await sleep(10);
      }
      for (const c of controllers) c.abort();
      await Promise.all(pending);
      for (let i = 0; i < 200 && (await server.deps.limiter.inFlight(slotKey, server.clock.now())) > 0; i++) {
        await sleep(10);
      }
      delayMs = 0;
      const again = await Promise.all(
        Array.from({ length: 10 }, () => server.request('GET', path, { headers: bearer(key) })),
      );
      assert.deepEqual(
        again.map((r) => r.status),
        Array(10).fill(200),
        'all ten slots came back after the aborts',
      );
      while (inFlight > 0) await sleep(20);
    });
  });
});

/** A public-test key's limits are its account's. */
async function accountOf(server: TestServer, key: string): Promise<string> {
  const me = await server.request('GET', '/api/v1/me', { headers: bearer(key) });
  return me.json.account.id as string;
}

describe('IP fence', () => {
  test('refuses the 101st anonymous request and sandbox keys from that IP, never public-test or wallet keys', async () => {
    await withServer({}, async (server) => {
      const { key: fpt } = await publicTestKey(server);
      const { key: live } = await walletAccount(server, 10);
      // Issuing the sandbox key is the first anonymous request from this IP.
      const sandbox = await sandboxKey(server, '203.0.113.9');
      const ip = { 'x-forwarded-for': '203.0.113.9' };
      for (let i = 2; i <= 100; i++) {
        const res = await server.request('GET', '/api/v1/pricing', { headers: ip });
        assert.equal(res.status, 200, `anonymous ${i}`);
      }
      const fenced = await server.request('GET', '/api/v1/pricing', { headers: ip });
      assert.equal(fenced.status, 429);
      assert.equal(fenced.json.code, 'ip_fence');
      assert.ok(Number(fenced.headers.get('retry-after')) > 0);
      const sandboxRes = await server.request('GET', '/api/v1/me', {
        headers: { ...ip, ...bearer(sandbox) },
      });
      assert.equal(sandboxRes.status, 429);
      assert.equal(sandboxRes.json.code, 'ip_fence');
      for (const key of [fpt, live]) {
        const res = await server.request('GET', '/api/v1/data/cftc/legacy_futures-facts?limit=1', {
          headers: { ...ip, ...bearer(key) },
        });
        assert.equal(res.status, 200, 'public-test and wallet keys skip the fence');
      }
      assert.equal(
        (await server.request('GET', '/healthz', { headers: ip })).status,
        200,
        'health checks are not fenced',
      );
      server.clock.advance(MINUTE);
      assert.equal((await server.request('GET', '/api/v1/pricing', { headers: ip })).status, 200);
    });
  });

  test('requests with a refused credential count against the fence and carry its headers', async () => {
    await withServer({}, async (server) => {
      const ip = { 'x-forwarded-for': '203.0.113.11' };
      const statuses: number[] = [];
      let first: Awaited<ReturnType<TestServer['request']>> | undefined;
      for (let i = 0; i < 101; i++) {
        const res = await server.request('GET', '/api/v1/data/equities/stock-prices?limit=1', {
          headers: { ...ip, authorization: `Bearer tmd_live_${'x'.repeat(43)}` },
        });
        first ??= res;
        statuses.push(res.status);
      }
      assert.equal(first?.json.code, 'invalid_key');
      assert.match(first?.headers.get('ratelimit') ?? '', /"ip";r=99/);
      assert.deepEqual([...new Set(statuses.slice(0, 100))], [401]);
      assert.equal(statuses[100], 429, 'the 101st guess from that IP is fenced');
    });
  });
});

describe('loyalty tiers', () => {
  test('burning across 500, 2000 and 5000 tokens moves the account to levels 2, 3 and 4 with exact charges and limits', async () => {
    await withServer({}, async (server) => {
      const { key, account } = await walletAccount(server, 10_000);
      // filings/documents: list cost 10, P0; levels per spec 2.4: discount 0, 2, 5, 8 %.
      const expected = [
        { level: 1, until: 500, charge: 10, perMinute: 60 },
        { level: 2, until: 2000, charge: 9.8, perMinute: 72 },
        { level: 3, until: 5000, charge: 9.5, perMinute: 90 },
      ];
      let burnedMicros = 0;
      let inMinute = 0;
      for (const step of expected) {
        const me = await server.request('GET', '/api/v1/me', { headers: bearer(key) });
        inMinute++;
        assert.equal(me.json.tier.level, step.level);
        assert.equal(me.json.limits.per_minute, step.perMinute);
        while (burnedMicros < step.until * 1_000_000) {
          if (inMinute >= 50) {
            server.clock.advance(MINUTE);
            inMinute = 0;
          }
          const res = await server.request('GET', '/api/v1/data/filings/documents?limit=1', {
            headers: bearer(key),
          });
          inMinute++;
          assert.equal(res.status, 200, res.text);
          assert.equal(Number(res.headers.get('x-request-tokens')), step.charge, `level ${step.level}`);
          burnedMicros += Math.round(step.charge * 1_000_000);
        }
      }
      server.clock.advance(MINUTE);
      const me = await server.request('GET', '/api/v1/me', { headers: bearer(key) });
      assert.equal(me.json.tier.level, 4);
      assert.equal(me.json.tier.discount_pct, 8);
      assert.equal(me.json.limits.per_minute, 120);
      assert.equal(me.json.next_tier.level, 5);
      assert.equal(Number(me.json.burned_this_month), burnedMicros / 1_000_000);
      assert.equal(Number(me.json.next_tier.tokens_needed), 15000 - burnedMicros / 1_000_000);
      const read = await server.request('GET', '/api/v1/data/filings/documents?limit=1', {
        headers: bearer(key),
      });
      assert.equal(read.headers.get('x-request-tokens'), '9.2');
      // 120 a minute at level 4: 2 requests used in this minute so far.
      for (let i = 0; i < 118; i++)
        assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(key) })).status, 200);
      assert.equal((await server.request('GET', '/api/v1/me', { headers: bearer(key) })).status, 429);
      const wallet = await server.deps.store.getWallet(account.walletId);
      assert.equal(wallet?.balanceMicros, 10_000_000_000n - BigInt(burnedMicros) - 9_200_000n);
      // A new UTC month starts over at level 1.
      server.clock.t = Date.parse('2026-12-01T00:00:00Z');
      const december = await server.request('GET', '/api/v1/me', { headers: bearer(key) });
      assert.equal(december.json.tier.level, 1);
      assert.equal(december.json.burned_this_month, '0');
    });
  });
});

describe('login throttling', () => {
  test('five wrong passwords lock the account for the window; other accounts are untouched', async () => {
    await withServer({}, async (server) => {
      const { email, password } = await walletAccount(server, 0);
      const other = await walletAccount(server, 0);
      for (let i = 0; i < 5; i++) {
        const res = await server.request('POST', '/api/v1/auth/login', {
          body: { email, password: 'wrong password!' },
        });
        assert.equal(res.status, 401);
        assert.equal(res.json.code, 'invalid_login');
      }
      const throttled = await server.request('POST', '/api/v1/auth/login', { body: { email, password } });
      assert.equal(throttled.status, 429);
      assert.equal(throttled.json.code, 'login_throttled');
      assert.equal(throttled.headers.get('retry-after'), String(15 * 60));
      const fine = await server.request('POST', '/api/v1/auth/login', {
        body: { email: other.email, password: other.password },
      });
      assert.equal(fine.status, 200);
      server.clock.advance(15 * MINUTE);
      assert.equal(
        (await server.request('POST', '/api/v1/auth/login', { body: { email, password } })).status,
        200,
      );
    });
  });

  test('twenty wrong passwords from one IP throttle that IP for every account', async () => {
    await withServer({}, async (server) => {
      const victim = await walletAccount(server, 0);
      const ip = { 'x-forwarded-for': '198.51.100.200' };
      for (let i = 0; i < 20; i++) {
        const res = await server.request('POST', '/api/v1/auth/login', {
          headers: ip,
          body: { email: `nobody${i}@example.com`, password: 'guess guess guess' },
        });
        assert.equal(res.status, 401);
      }
      const res = await server.request('POST', '/api/v1/auth/login', {
        headers: ip,
        body: { email: victim.email, password: victim.password },
      });
      assert.equal(res.status, 429);
      assert.equal(res.json.code, 'login_throttled');
    });
  });

  test('guesses sent in parallel are counted as strictly as one at a time', async () => {
    await withServer({}, async (server) => {
      const { email, password } = await walletAccount(server, 0);
      const statuses: number[] = [];
      for (let burst = 0; burst < 8; burst++) {
        const replies = await Promise.all(
          Array.from({ length: 10 }, () =>
            server.request('POST', '/api/v1/auth/login', { body: { email, password: 'wrong password!' } }),
          ),
        );
        for (const reply of replies) {
          statuses.push(reply.status);
          if (reply.status === 429) {
            assert.equal(reply.json.code, 'login_throttled');
            assert.ok(Number(reply.headers.get('retry-after')) >= 1);
          }
        }
      }
      // One guess per account is checked at a time: exactly five wrong passwords were ever tried.
      assert.equal(statuses.filter((s) => s === 401).length, 5, statuses.join());
      assert.equal(statuses.filter((s) => s === 429).length, 75);
      const right = await server.request('POST', '/api/v1/auth/login', { body: { email, password } });
      assert.equal(right.status, 429, 'the right password is throttled too once five were wrong');
    });
  });

  test('parallel guesses on many accounts from one IP stop at the per-IP count, give or take the checks in flight', async () => {
    await withServer({}, async (server) => {
      const ip = { 'x-forwarded-for': '198.51.100.201' };
      let wrong = 0;
      // 7 x 12 requests: under the IP fence of 100 a minute.
      for (let burst = 0; burst < 7; burst++) {
        const replies = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            server.request('POST', '/api/v1/auth/login', {
              headers: ip,
              body: { email: `nobody${burst}-${i}@example.com`, password: 'guess guess guess' },
            }),
          ),
        );
        wrong += replies.filter((r) => r.status === 401).length;
        for (const r of replies) assert.ok(r.status === 401 || r.json.code === 'login_throttled', r.text);
      }
      // Four checks at once per IP: the last ones may have started when 19 had failed.
      assert.ok(wrong >= 20 && wrong <= 20 + LOGIN_GUESSES_PER_IP - 1, `${wrong} wrong passwords checked`);
    });
  });
});

describe('in-flight slots and early disconnects', () => {
  test('a client that goes away while its credential is still being checked leaves no slot behind', async () => {
    let slow = false;
    const server = await startServer({
      listen: true,
      wrapStore: (store) =>
        new Proxy(store, {
          get(target, property, receiver) {
            if (property === 'getSession') {
              return async (id: string) => {
                if (slow) await sleep(300);
                return target.getSession(id);
              };
            }
            const value = Reflect.get(target, property, receiver);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
    });
    try {
      const wallet = await walletAccount(server, 10);
      slow = true;
      const aborts = Array.from({ length: 20 }, () => new AbortController());
      const sent = aborts.map((abort) =>
        fetch(`${server.url}/api/v1/me`, { headers: bearer(wallet.session), signal: abort.signal }).catch(
          () => 'aborted',
        ),
      );
      await sleep(100);
      for (const abort of aborts) abort.abort();
      await Promise.all(sent);
      await sleep(600); // the slow checks finish and take their slots after the clients left
      slow = false;
      assert.equal(
        await server.deps.limiter.inFlight(`slot:acct:${wallet.account.id}`, server.clock.now()),
        0,
      );
      assert.equal(
        (await server.request('GET', '/api/v1/me', { headers: bearer(wallet.session) })).status,
        200,
      );
    } finally {
      await server.close();
    }
  });
});

describe('in-flight slot leases', () => {
  test('a request that outlives the slot lease keeps its slot: the lease is renewed while it runs', async () => {
    let gate: PromiseWithResolvers<void> | null = null;
    const server = await startServer({
      wrapStore: (store) =>
        new Proxy(store, {
          get(target, property, receiver) {
            if (property === 'queryRows' || property === 'queryPage') {
              return async (query: Parameters<Store['queryPage']>[0]) => {
                await gate?.promise;
                return property === 'queryRows' ? target.queryRows(query) : target.queryPage(query);
              };
            }
            const value = Reflect.get(target, property, receiver);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
    });
    try {
      const { key } = await publicTestKey(server);
      const slotKey = `slot:acct:${await accountOf(server, key)}`;
      const lease = server.deps.config.limits.slot_lease_seconds * 1000;
      const inFlightAt = (at: number) => server.deps.limiter.inFlight(slotKey, at);
      gate = Promise.withResolvers<void>();
      const pending = server.request('GET', '/api/v1/data/cftc/legacy_futures-facts?limit=1', {
        headers: bearer(key),
      });
      for (let i = 0; i < 100 && (await inFlightAt(server.clock.now())) === 0; i++) await sleep(10);
      const takenAt = server.clock.now();
      assert.equal(await inFlightAt(takenAt), 1);
      assert.equal(await inFlightAt(takenAt + lease), 0, 'as taken, the lease ends after slot_lease_seconds');

      // Twice: past half the lease, the next renewal (once a second) extends it by a full lease.
      for (const elapsed of [0.6, 1.2]) {
        server.clock.advance(lease * 0.6);
        const beyond = takenAt + (elapsed + 0.55) * lease;
        for (let i = 0; i < 30 && (await inFlightAt(beyond)) === 0; i++) await sleep(100);
        assert.equal(await inFlightAt(beyond), 1, `renewed after ${elapsed} leases`);
      }
      assert.equal(await inFlightAt(server.clock.now()), 1, 'still held 1.2 leases after it was taken');

      gate.resolve();
      assert.equal((await pending).status, 200);
      for (let i = 0; i < 100 && (await inFlightAt(server.clock.now())) > 0; i++) await sleep(10);
      assert.equal(await inFlightAt(server.clock.now()), 0, 'released when the response is sent');
      assert.equal(server.deps.slots.size, 0, 'no longer renewed');
    } finally {
      gate?.resolve();
      await server.close();
    }
  });
});

describe('HeldSlots', () => {
  test('a renewal that fails is tried again on the next tick, not half a lease later', async () => {
    const limiter = new MemoryLimiter();
    let failures = 1;
    const flaky = new Proxy(limiter, {
      get(target, property, receiver) {
        if (property === 'renew') {
          return async (...args: Parameters<Limiter['renew']>) => {
            if (failures-- > 0) throw new Error('Redis went away for a moment');
            return target.renew(...args);
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    let now = Date.parse('2026-11-21T15:00:00Z');
    const errors: unknown[] = [];
    const slots = new HeldSlots(
      flaky,
      () => now,
      (error) => errors.push(error),
    );
    try {
      const lease = 10_000;
      const taken = await limiter.admit({ now, windows: [], slot: { key: 'k', max: 1, leaseMs: lease } });
      assert.ok(taken.allowed && taken.slotId);
      slots.hold('k', taken.slotId, lease, now);
      const takenAt = now;
      now += 6000;
      for (let i = 0; i < 40 && (await limiter.inFlight('k', takenAt + 12_000)) === 0; i++) await sleep(100);
      assert.equal(errors.length, 1, 'the first renewal failed');
      assert.equal(await limiter.inFlight('k', takenAt + 12_000), 1, 'the retry a second later renewed it');
      assert.equal(slots.size, 1);
    } finally {
      slots.close();
    }
  });
});
