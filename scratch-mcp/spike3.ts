import { startServer, walletAccount, bearer } from '../test/helpers/server.ts';
const server = await startServer();
const { key } = await walletAccount(server, 1000);
const call = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'read_dataset', arguments: { dataset: 'equities/stock-prices', limit: 1 } } });
let ok = 0;
for (let i = 0; i < 40; i++) { const r = await server.request('GET', '/api/v1/data/equities/stock-prices?limit=1', { headers: bearer(key) }); if (r.status === 200) ok++; }
for (let i = 0; i < 20; i++) { const r = await server.request('POST', '/mcp/jsonrpc', { headers: { ...bearer(key), 'content-type': 'application/json' }, raw: call }); if (r.status === 200 && !r.json.result.isError) ok++; }
console.log('ok', ok);
const r = await server.request('POST', '/mcp/jsonrpc', { headers: { ...bearer(key), 'content-type': 'application/json' }, raw: call });
console.log(r.status, [...r.headers], r.text);
const r2 = await server.request('GET', '/api/v1/data/equities/stock-prices?limit=1', { headers: bearer(key) });
console.log(r2.status, r2.text);
const r3 = await server.request('POST', '/mcp/jsonrpc', { headers: { ...bearer(key), 'content-type': 'application/json' }, raw: JSON.stringify({jsonrpc:'2.0', id: 1, method: 'tools/list'}) });
console.log(r3.status, r3.text);
await server.close();
