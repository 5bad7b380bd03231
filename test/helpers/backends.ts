/**
 * The real PostgreSQL and Redis servers for the scale-out tests. Each test file gets its own database
 * (created here, dropped after) and its own Redis key prefix, so runs never see each other's data.
 *
 * Gating: with CI=true a missing server fails the run; otherwise the tests skip and say how to run them.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';

const inCi = process.env.CI === 'true';
export const postgresAdminUrl =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const howToPostgres =
  'PostgreSQL is not reachable: start it on 127.0.0.1:5432 (trust auth, user postgres) or set TEST_DATABASE_URL to an admin URL; with CI=true this fails instead of skipping.';
const howToRedis =
  'Redis is not reachable: start it on 127.0.0.1:6379 or set TEST_REDIS_URL; with CI=true this fails instead of skipping.';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database `tmd_test_<random>` on the test server; `skip` says why there is none. */
export async function freshDatabase(): Promise<TestDatabase | { skip: string }> {
  const admin = new pg.Client({ connectionString: postgresAdminUrl, connectionTimeoutMillis: 3000 });
  admin.on('error', () => {});
  try {
    await admin.connect();
  } catch (error) {
    if (inCi) throw new Error(`${howToPostgres} (${(error as Error).message})`);
    return { skip: howToPostgres };
  }
  const name = `tmd_test_${randomBytes(5).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** Runs one statement on a database (assertions the port does not expose). */
export async function sqlOn(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

export interface TestRedis {
  url: string;
  prefix: string;
  /** A plain client for assertions (keys are not prefixed for you). */
  client: Redis;
  cleanup(): Promise<void>;
}

/** The test Redis and a key prefix of this file's own; `skip` says why there is none. */
export async function freshRedis(): Promise<TestRedis | { skip: string }> {
  const client = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    if (inCi) throw new Error(`${howToRedis} (${(error as Error).message})`);
    return { skip: howToRedis };
  }
  const prefix = `tmd_test_${randomBytes(5).toString('hex')}:`;
  return {
    url: redisUrl,
    prefix,
    client,
    async cleanup() {
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        if (keys.length > 0) await client.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      client.disconnect();
    },
  };
}
