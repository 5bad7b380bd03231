/** MCP tools answer what REST answers: example calls that work, filter values with commas, search filters. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ConnectedClient, connectClient } from './helpers/mcp.ts';
import { bearer, startServer, type TestServer, walletAccount } from './helpers/server.ts';

let server: TestServer;
let agent: ConnectedClient;
before(async () => {
  server = await startServer({ listen: true });
  agent = await connectClient(server, bearer((await walletAccount(server, 500)).key), '2026-07-28');
});
after(async () => {
  await agent.close();
  await server.close();
});

// biome-ignore lint/suspicious/noExplicitAny: structuredContent is checked field by field
const call = async (name: string, args: Record<string, unknown>): Promise<any> =>
  (await agent.client.callTool({ name, arguments: args })).structuredContent;

test("describe_dataset's example call returns rows, also when its filter value holds a comma", async () => {
  const described = await call('describe_dataset', { dataset: 'open-data/nasa-power-daily' });
  const [value] = Object.values(described.example_call.arguments.filters) as string[][];
  assert.ok(value?.[0]?.includes(','), 'the sample location has a comma');
  const read = await call('read_dataset', described.example_call.arguments);
  assert.ok(read.meta.count > 0, JSON.stringify(read.meta));
  // The same value in a string is a list unless quoted, as on REST.
  const quoted = await call('read_dataset', {
    ...described.example_call.arguments,
    filters: { location: `"${value?.[0]}"` },
  });
  assert.equal(quoted.meta.count, read.meta.count);
});

test('search_datasets free_only: false lists the datasets that are not P0, as free=false on REST', async () => {
  const paid = await call('search_datasets', { free_only: false, limit: 500 });
  const rest = await server.request('GET', '/api/v1/catalog?free=false');
  assert.ok(paid.data.length > 0);
  assert.ok(paid.data.every((d: { p0: boolean }) => !d.p0));
  assert.deepEqual(
    paid.data.map((d: { key: string }) => d.key),
    rest.json.data.map((d: { key: string }) => d.key),
  );
  const both = await call('search_datasets', { limit: 500 });
  assert.ok(both.meta.total > paid.meta.total);
});
