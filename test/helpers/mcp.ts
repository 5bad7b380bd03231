/** MCP test helpers: the official SDK Client over real HTTP, raw JSON-RPC POSTs, and ledger snapshots. */
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { TestResponse, TestServer } from './server.ts';

export const MCP_PATH = '/mcp/jsonrpc';
/** The 2025-era revision (initialize handshake) and the newest one the SDK serves (per-request envelope). */
export const eras = ['2025-11-25', '2026-07-28'] as const;
export type Era = (typeof eras)[number];

export interface ConnectedClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Headers of the last HTTP response the client received (cost headers included). */
  lastHeaders(): Headers;
  close(): Promise<void>;
}

export async function connectClient(
  server: TestServer,
  credentialHeaders: Record<string, string>,
  era: Era,
): Promise<ConnectedClient> {
  let last = new Headers();
  const client = new Client(
    { name: 'tmd-test-agent', version: '1.0.0' },
    { versionNegotiation: { mode: era === '2025-11-25' ? 'legacy' : { pin: era } } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}${MCP_PATH}`), {
    requestInit: { headers: credentialHeaders },
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      last = response.headers;
      return response;
    },
  });
  await client.connect(transport);
  return { client, transport, lastHeaders: () => last, close: () => client.close() };
}

/** Where a refused tool result carries its problem (src/mcp/tools.ts). */
export const PROBLEM_META_KEY = 'tmd.example/problem';

// biome-ignore lint/suspicious/noExplicitAny: problems are asserted field by field
type Problem = Record<string, any>;

/**
 * The problem of a refused tool call, once the result is checked to be exactly a refusal: isError, one
 * text line naming the code and status, the problem in `_meta` and no structuredContent (which would
 * break the tool's output schema).
 */
export function refusalOf(result: unknown): Problem {
  // The 2026-07-28 encoding adds resultType and the SDK's own io.modelcontextprotocol/ _meta keys.
  const { isError, content, _meta, resultType, ...rest } = result as {
    isError?: unknown;
    content?: { type: string; text: string }[];
    _meta?: Record<string, Problem>;
    resultType?: unknown;
  };
  assert.equal(isError, true, JSON.stringify(result));
  assert.ok(resultType === undefined || resultType === 'complete', String(resultType));
  assert.deepEqual(rest, {}, 'nothing but isError, content and _meta: no structuredContent');
  assert.deepEqual(
    Object.keys(_meta ?? {}).filter((name) => !name.startsWith('io.modelcontextprotocol/')),
    [PROBLEM_META_KEY],
  );
  const problem = (_meta as Record<string, Problem>)[PROBLEM_META_KEY] as Problem;
  assert.equal(content?.length, 1);
  assert.equal(content?.[0]?.type, 'text');
  assert.ok(
    content?.[0]?.text.startsWith(`Refused: ${problem.code} (${problem.status}). `),
    content?.[0]?.text,
  );
  return problem;
}

/** The per-request envelope a 2026-07-28 client sends in `_meta`. */
export const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'tmd-test-agent', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/**
 * A raw tools/call as a client of `era` sends it: the 2026-07-28 one with its envelope and headers.
 * `meta` adds keys to `_meta`.
 */
export function eraCall(
  era: Era,
  name: string,
  args: unknown,
  options: { id?: number | string; meta?: Record<string, unknown> } = {},
): { headers: Record<string, string>; message: unknown } {
  const id = options.id ?? 1;
  const modern = era === '2026-07-28';
  const meta = { ...(modern && envelope), ...options.meta };
  const params = { name, arguments: args, ...(Object.keys(meta).length > 0 && { _meta: meta }) };
  return {
    headers: {
      'mcp-protocol-version': era,
      ...(modern && { 'mcp-method': 'tools/call', 'mcp-name': name }),
    },
    message: { jsonrpc: '2.0', id, method: 'tools/call', params },
  };
}

export function toolCall(name: string, args: Record<string, unknown>, id: number | string = 1) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

/** One raw JSON-RPC POST, as curl would send it (no initialize: the endpoint is stateless). */
export function rpc(
  server: TestServer,
  headers: Record<string, string>,
  message: unknown,
  contentType = 'application/json',
): Promise<TestResponse> {
  return server.request('POST', MCP_PATH, {
    headers: { 'content-type': contentType, ...headers },
    raw: typeof message === 'string' ? message : JSON.stringify(message),
  });
}

/** A wallet's ledger entries, balance and usage events: "nothing changed" compares two of these. */
export async function walletSnapshot(server: TestServer, walletId: string, accountId: string) {
  const { store } = server.deps;
  const entries = await store.listEntries(walletId);
  const wallet = await store.getWallet(walletId);
  const usage = await store.listUsage({ accountId }, null, 1000);
  return {
    entries: entries.map((e) => ({ kind: e.kind, amountMicros: e.amountMicros })),
    balanceMicros: wallet?.balanceMicros,
    usage: usage.length,
  };
}
