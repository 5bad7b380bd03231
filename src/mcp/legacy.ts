/**
 * One 2025-era (stateless) exchange, served by the SDK's `Server` over a single-exchange transport that
 * hands the message in and the answer out as objects. It answers what the SDK's
 * WebStandardStreamableHTTPServerTransport answers in stateless JSON mode, with the same checks and the
 * same error messages, without building a web Request and Response for every call: on a metered read
 * that round trip (headers, body streams, JSON encoded then read back) cost more than the rest of the
 * MCP layer. The SDK still parses and validates the message, negotiates `initialize`, dispatches the
 * tool and validates its result.
 */
import {
  type AuthInfo,
  isInitializeRequest,
  isJSONRPCRequest,
  type JSONRPCMessage,
  parseJSONRPCMessage,
  type Server,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Transport,
} from '@modelcontextprotocol/server';
import { jsonRpc } from '../errors.ts';

/** A JSON-RPC error outside any request (id null), as the SDK transport writes it. */
interface RpcFault {
  jsonrpc: '2.0';
  id: null;
  error: { code: number; message: string };
}

export type LegacyAnswer =
  | { status: 200; message: JSONRPCMessage }
  | { status: 202 }
  | { status: 400 | 406; message: RpcFault };

/** Carries one message to a connected server and its one answer back. */
class ExchangeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  supportedProtocolVersions: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;
  readonly #answer: Promise<JSONRPCMessage>;
  #resolve!: (message: JSONRPCMessage) => void;
  #requestId: string | number;

  constructor(requestId: string | number) {
    this.#requestId = requestId;
    this.#answer = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  async start(): Promise<void> {}

  setSupportedProtocolVersions(versions: string[]): void {
    this.supportedProtocolVersions = versions;
  }

  /** The answer to the request; notifications sent before it are dropped, as in JSON mode. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (('result' in message || 'error' in message) && message.id === this.#requestId) {
      this.#resolve(message);
    }
  }

  async close(): Promise<void> {
    this.onclose?.();
  }

  answer(): Promise<JSONRPCMessage> {
    return this.#answer;
  }
}

const rpcError = (status: 400, code: number, message: string): LegacyAnswer => ({
  status,
  message: { jsonrpc: '2.0', id: null, error: { code, message } },
});

export async function serveLegacyExchange(
  server: Server,
  body: unknown,
  /** The route has already refused an Accept that admits no JSON. */
  headers: { protocolVersion: string | undefined },
  authInfo: AuthInfo,
): Promise<LegacyAnswer> {
  let message: JSONRPCMessage;
  try {
    message = parseJSONRPCMessage(body);
  } catch {
    return rpcError(400, jsonRpc.parseError, 'Parse error: Invalid JSON-RPC message');
  }
  const request = isJSONRPCRequest(message) ? message : null;
  const transport = new ExchangeTransport(request?.id ?? '');
  await server.connect(transport);
  // Only a message named initialize can be one (the schema check is skipped for every other call).
  if (!(request?.method === 'initialize' && isInitializeRequest(message))) {
    const version = headers.protocolVersion;
    const supported = transport.supportedProtocolVersions;
    if (version !== undefined && !supported.includes(version)) {
      return rpcError(
        400,
        jsonRpc.serverError,
        `Bad Request: Unsupported protocol version: ${version} (supported versions: ${supported.join(', ')})`,
      );
    }
  }
  transport.onmessage?.(message, { authInfo });
  // A notification or a posted response gets no answer: 202, as the SDK transport answers.
  if (!request) return { status: 202 };
  return { status: 200, message: await transport.answer() };
}
