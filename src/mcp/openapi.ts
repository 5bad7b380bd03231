/** The OpenAPI entry of the MCP endpoint: it speaks JSON-RPC and has no route schema to document it. */
import { edge } from '../edge/refusals.ts';
import { type ErrorCode, errorCatalogue, jsonRpc } from '../errors.ts';

type Json = Record<string, unknown>;

const jsonRpcMessage = {
  type: 'object',
  description: 'One JSON-RPC 2.0 message: a request, a notification or a response. Batches are refused.',
  required: ['jsonrpc'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer'] },
    method: { type: 'string' },
    params: { type: 'object' },
  },
};

const jsonRpcResponse = {
  type: 'object',
  description: 'A JSON-RPC 2.0 response: a result, or an error whose data names the problem code.',
  required: ['jsonrpc', 'id'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer', 'null'] },
    result: { type: 'object' },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'integer' },
        message: { type: 'string' },
        data: { type: 'object', properties: { code: { type: 'string' }, request_id: { type: 'string' } } },
      },
    },
  },
};

/** A code as the MCP route answers it: its JSON-RPC error code, then its own code. */
const rpcCode = (code: ErrorCode) => `${errorCatalogue[code].rpc}, ${code}`;

const rpcError = (description: string) => ({
  description: `JSON-RPC error: ${description}`,
  content: { 'application/json': { schema: jsonRpcResponse } },
});

/** A refusal of the app's onRequest hook: problem details, as on REST, before MCP runs. */
function edgeProblem(codes: readonly ErrorCode[], status: number, description: string) {
  const named = codes.filter((code) => errorCatalogue[code].status === status);
  return {
    description: `${description} Problem details. Codes: ${named.join(', ')}.`,
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
  };
}

/** What src/mcp/route.ts answers (test/mcp.*.test.ts): POST is served, the other methods are 405. */
export function mcpPathItem(): Record<string, Json> {
  const refused = {
    summary: 'Not served: the endpoint is stateless, so there is no stream to open and no session to end',
    tags: ['mcp'],
    responses: {
      400: edgeProblem(edge.none, 400, 'A broken %-escape in the query string.'),
      403: rpcError(
        `the Host or Origin header names a host this service does not answer for (${rpcCode('forbidden')}).`,
      ),
      405: rpcError(`POST one message per request (${rpcCode('method_not_allowed')}).`),
      429: edgeProblem(edge.none, 429, 'The IP fence.'),
    },
  };
  return {
    post: {
      operationId: 'mcpJsonRpc',
      tags: ['mcp'],
      summary: 'MCP over Streamable HTTP, stateless: one JSON-RPC message per POST, metered like REST',
      description:
        'Tools over the same keys, ledger and per-key limits as REST. A tools/call refused for its own reasons (402, 429, a bad argument) is answered 200 with a result that has isError, its code in the text and the problem in _meta["tmd.example/problem"]; the cost headers come with a metered call.',
      security: [{ bearer: [] }, { apiKey: [] }],
      requestBody: { required: true, content: { 'application/json': { schema: jsonRpcMessage } } },
      responses: {
        200: {
          description: `The JSON-RPC response (a JSON-RPC error too, e.g. ${jsonRpc.methodNotFound} for an unknown method). A 2026-07-28 subscriptions/listen is acknowledged as an event stream that ends at once.`,
          content: {
            'application/json': { schema: jsonRpcResponse },
            'text/event-stream': { schema: { type: 'string' } },
          },
        },
        202: { description: 'A notification or a posted response: accepted, no body.' },
        400: {
          description: `JSON-RPC error: the body is not JSON (${rpcCode('malformed_json')}), not one valid message, a batch (${rpcCode('invalid_request')}), or the MCP headers disagree with it. Problem details (invalid_request): a broken %-escape in the query string, refused before MCP runs.`,
          content: {
            'application/json': { schema: jsonRpcResponse },
            'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
          },
        },
        401: edgeProblem(edge.required, 401, 'The credential, refused before MCP runs.'),
        403: rpcError(
          `the Host or Origin header names a host this service does not answer for (${rpcCode('forbidden')}).`,
        ),
        406: rpcError(
          `Accept admits no JSON (${rpcCode('not_acceptable')}); text/event-stream alone is not enough.`,
        ),
        413: rpcError(`the body is larger than 64 KiB (${rpcCode('payload_too_large')}).`),
        415: rpcError(`the body is not application/json (${rpcCode('unsupported_media_type')}).`),
        429: edgeProblem(
          edge.required,
          429,
          'A limit refused a message that is not a tools/call (a refused tools/call is a 200 result).',
        ),
        500: rpcError(`a fault on our side (${rpcCode('internal_error')}).`),
        503: edgeProblem(edge.required, 503, 'The ledger cannot be reached to check the credential.'),
      },
    },
    get: refused,
    delete: refused,
    put: refused,
    patch: refused,
    head: refused,
    options: refused,
  };
}
