/**
 * The MCP side of npm run bench: read_dataset through POST /mcp/jsonrpc, sent the way a 2025-era client
 * (after its initialize handshake) and a 2026-07-28 client send a tools/call, with its own wallet so the
 * run can check afterwards that every 2xx answer was a served, metered read and not a refused tool call.
 */
import type { Env } from '../src/config.ts';
import { buildDeps, closeDeps } from '../src/deps.ts';
import { fundedKey } from './lib.ts';

export interface McpLoad {
  name: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
}

export function mcpLoads(key: string, dataset: string, limit: number): McpLoad[] {
  const args = { name: 'read_dataset', arguments: { dataset, limit } };
  const base = {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'tmd-bench', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  return [
    {
      name: '(c) MCP read_dataset, 2025-11-25',
      method: 'POST',
      headers: { ...base, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: args }),
    },
    {
      name: '(d) MCP read_dataset, 2026-07-28',
      method: 'POST',
      headers: {
        ...base,
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'read_dataset',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { ...args, _meta: envelope },
      }),
    },
  ];
}

/** A wallet-backed key on its own account, for the MCP runs. */
export async function provisionMcpKey(env: Env): Promise<{ key: string; walletId: string }> {
  const deps = await buildDeps({ env });
  const { secret, walletId } = await fundedKey(deps, 'bench-mcp@example.com', 'bench-mcp');
  await closeDeps(deps);
  return { key: secret, walletId };
}

/** Burn entries on the MCP wallet: one per served read_dataset call. */
export async function countBurns(env: Env, walletId: string): Promise<number> {
  const deps = await buildDeps({ env });
  const entries = await deps.store.listEntries(walletId);
  await closeDeps(deps);
  return entries.filter((e) => e.kind === 'burn').length;
}
