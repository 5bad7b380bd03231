import { request as httpRequest } from 'node:http';
import { startServer, walletAccount, bearer } from '../test/helpers/server.ts';

const server = await startServer();
const { key } = await walletAccount(server, 1000);
const post = async (body: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${server.url}/mcp/jsonrpc`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json', ...headers }, body });
  return [res.status, Object.fromEntries([...res.headers].filter(([n]) => n.startsWith('x-') || n === 'content-type' || n==='allow' || n === 'www-authenticate')), await res.text()];
};
const call = (name: string, args: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } });
console.log(await post(call('read_dataset', { dataset: 'equities/stock-prices', limit: 1 })));
console.log(await post('{"jsonrpc":'));
console.log(await post('[' + call('get_account', {}) + ']'));
console.log(await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'foo/bar' })));
console.log(await post(JSON.stringify({ jsonrpc: '2.0', id: 1 })));
console.log(await post(JSON.stringify({ hello: 1 })));
console.log(await post(call('read_dataset', { dataset: 'equities/stock-prices', limit: 'x', symbol: 'AAPL' })));
console.log(await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_dataset', arguments: { dataset: 'x/y', pad: 'a'.repeat(70_000) } } })));
console.log(await post(call('get_account', {}), { 'content-type': 'text/plain' }));
console.log(await post(call('get_account', {}), { authorization: 'Bearer nope' }));
console.log(await post(call('get_account', {}), { origin: 'https://evil.example' }));
console.log(await post(call('get_account', {}), { origin: 'http://localhost:5173' }));
const g = await fetch(`${server.url}/mcp/jsonrpc`); console.log(g.status, [...g.headers].filter(([n]) => n === 'allow'), await g.text());
const d = await fetch(`${server.url}/mcp/jsonrpc`, { method: 'DELETE' }); console.log(d.status, await d.text());
await new Promise<void>((resolve) => {
  const u = new URL(server.url);
  const r = httpRequest({ host: u.hostname, port: u.port, path: '/mcp/jsonrpc', method: 'POST', headers: { host: 'evil.example', authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => { let b = ''; res.on('data', (c) => b += c); res.on('end', () => { console.log('host', res.statusCode, b); resolve(); }); });
  r.end(call('get_account', {}));
});
console.log(await post(call('get_account', {}), { accept: 'text/html' }));
await server.close();
