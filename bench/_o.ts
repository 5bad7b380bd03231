import { freePort, startServer } from '../test/helpers/server.ts';

const port = await freePort();
const server = await startServer({ listen: true, port, env: { BASE_URL: `http://127.0.0.1:${port}` } });
try {
  for (const path of [
    '/.well-known/oauth-protected-resource/mcp/jsonrpc',
    '/.well-known/oauth-authorization-server',
  ]) {
    const r = await fetch(`${server.url}${path}`);
    console.log(path, r.status, (await r.text()).slice(0, 1500));
  }
  const reg = await fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test',
      redirect_uris: ['http://127.0.0.1:9/cb'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }),
  });
  console.log('reg', reg.status, await reg.text());
  const mcp = await fetch(`${server.url}/mcp/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: '{}',
  });
  console.log('mcp', mcp.status, mcp.headers.get('www-authenticate'));
} finally {
  await server.close();
}
