/**
 * The baseline: the same data read as the service's, through a bare Fastify route with no auth, no
 * limits and no metering. Built here only, to measure what metering costs.
 */
import Fastify from 'fastify';
import { isPostgresUrl } from '../src/deps.ts';
import type { Store } from '../src/store/port.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';

const url = process.env.DATABASE_URL as string;
const store: Store = isPostgresUrl(url) ? new PostgresStore(url) : new SqliteStore(url);
const app = Fastify({ logger: false });
app.get<{ Params: { domain: string; name: string }; Querystring: { limit?: string } }>(
  '/bare/:domain/:name',
  async (request, reply) => {
    // The same page query as the service's JSON read.
    const page = await store.queryPage({
      dataset: `${request.params.domain}/${request.params.name}`,
      filters: {},
      descending: true,
      limit: Number(request.query.limit ?? 100),
    });
    const meta = { count: page.count };
    return reply
      .type('application/json; charset=utf-8')
      .send(`{"data":[${page.json}],"meta":${JSON.stringify(meta)}}`);
  },
);
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
