import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startServer, walletAccount, bearer } from '../test/helpers/server.ts';

const server = await startServer();
const { key } = await walletAccount(server, 1000);
for (const mode of ['legacy', { pin: '2026-07-28' }] as const) {
  const client = new Client({ name: 'spike', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/jsonrpc`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  console.log('version', transport.protocolVersion, client.getServerVersion());
  const tools = await client.listTools();
  console.log(tools.tools.map((t) => t.name));
  const r = await client.callTool({ name: 'read_dataset', arguments: { dataset: 'equities/stock-prices', limit: 2, filters: { symbol: 'AAPL' } } });
  console.log(JSON.stringify(r).slice(0, 1500));
  const e = await client.callTool({ name: 'read_dataset', arguments: { dataset: 'equities/stock-price' } });
  console.log(JSON.stringify(e).slice(0, 800));
  try { await client.callTool({ name: 'nope', arguments: {} }); } catch (err) { console.log('unknown tool', String(err)); }
  await client.close();
}
const raw = await fetch(`${server.url}/mcp/jsonrpc`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_account', arguments: {} } }) });
console.log(raw.status, [...raw.headers], await raw.text());
await server.close();
