/**
 * OpenAPI 3.1 from the same zod schemas that validate requests. Response headers are added here from one
 * table, so every documented response lists X-Request-Id, the rate-limit headers of limited routes, the
 * cost headers of metered routes, Retry-After on 429, WWW-Authenticate on 401 and Allow on 405. The MCP
 * endpoint speaks JSON-RPC and has no route schema: its entry is written here.
 */
import { jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { type ErrorCode, errorCatalogue, jsonRpc } from '../errors.ts';
import { MCP_PATH } from '../mcp/route.ts';
import { edge } from './schemas.ts';

type Json = Record<string, unknown>;

/** operationIds whose 200 responses carry the four cost headers. */
export const meteredOperations = new Set(['readDataset', 'runRecipe', 'exportDataset', 'mcpJsonRpc']);
/** operationIds that are not limited (and so carry no RateLimit headers). */
export const unlimitedOperations = new Set(['healthz', 'readyz']);

const header = (description: string, type = 'string') => ({ description, schema: { type } });

export const documentedHeaders = {
  'X-Request-Id': header(
    'Echoes a valid client X-Request-Id (1-64 of A-Z a-z 0-9 . _ -) or a generated one.',
  ),
  'X-Token-Cost': header(
    'Cost of this call in tokens after loyalty discount and Terminal surcharge; notional on zero-burn reads.',
  ),
  'X-Request-Tokens': header(
    'Tokens actually burned by this request (0 for notional or grandfathered reads).',
  ),
  'X-Request-Cost-EUR': header('X-Request-Tokens times eur_per_token, as an exact decimal.'),
  'X-Credits-Remaining': header('Wallet balance in tokens after this request.'),
  'RateLimit-Policy': header(
    'IETF draft: the policies that limit this request, e.g. `"minute";q=60;w=60, "day";q=5000;w=86400`.',
  ),
  RateLimit: header(
    'IETF draft: per policy, requests left and seconds until room, e.g. `"minute";r=59;t=60`.',
  ),
  'Retry-After': header('Seconds to wait before retrying.', 'integer'),
  'WWW-Authenticate': header('Bearer challenge on 401.'),
  Allow: header('The methods the path takes.'),
  'X-Next-Cursor': header('CSV responses: the cursor of the next page, absent on the last page.'),
  'X-Data-Sample': header('`true` when the rows are generated sample data, not imported real data.'),
  'X-Export-Rows': header('Rows in the export, which its charge is for.', 'integer'),
  'Idempotent-Replayed': header('`true` when a repeated Idempotency-Key returned the first entry.'),
  'Content-Disposition': header('An attachment named after the dataset, e.g. `macro_fed-h15-series.ndjson`.'),
  'Set-Cookie': header('The `tmd_session` cookie: set at login, cleared (`Max-Age=0`) at logout.'),
  'Set-Cookie (401)': header(
    'Sent when the refused credential was a `tmd_session` cookie: clears it (`Max-Age=0`).',
  ),
};

/** Headers of an operation's success (2xx) beyond the common ones. */
const okHeaders: Record<string, (keyof typeof documentedHeaders)[]> = {
  readDataset: ['X-Next-Cursor', 'X-Data-Sample'],
  exportDataset: ['X-Export-Rows', 'X-Data-Sample', 'Content-Disposition'],
  adminCreditTokens: ['Idempotent-Replayed'],
  login: ['Set-Cookie'],
  logout: ['Set-Cookie'],
};

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
function mcpPathItem(): Record<string, Json> {
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

export function transformObject(input: Parameters<typeof jsonSchemaTransformObject>[0]) {
  const document = jsonSchemaTransformObject(input) as Json;
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  if (paths[MCP_PATH]) paths[MCP_PATH] = mcpPathItem();
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const id = String(operation.operationId ?? '');
      const responses = (operation.responses ?? {}) as Record<string, Json>;
      for (const [status, response] of Object.entries(responses)) {
        const headers: Json = { 'X-Request-Id': documentedHeaders['X-Request-Id'] };
        if (!unlimitedOperations.has(id)) {
          headers['RateLimit-Policy'] = documentedHeaders['RateLimit-Policy'];
          headers.RateLimit = documentedHeaders.RateLimit;
        }
        if (status.startsWith('2')) {
          const names = [
            ...(meteredOperations.has(id) && status === '200'
              ? (['X-Token-Cost', 'X-Request-Tokens', 'X-Request-Cost-EUR', 'X-Credits-Remaining'] as const)
              : []),
            ...(okHeaders[id] ?? []),
          ];
          for (const name of names) headers[name] = documentedHeaders[name];
        }
        if (status === '429') headers['Retry-After'] = documentedHeaders['Retry-After'];
        if (status === '401') {
          headers['WWW-Authenticate'] = documentedHeaders['WWW-Authenticate'];
          headers['Set-Cookie'] = documentedHeaders['Set-Cookie (401)'];
        }
        if (status === '405') headers.Allow = documentedHeaders.Allow;
        response.headers = { ...((response.headers as Json | undefined) ?? {}), ...headers };
      }
    }
  }
  // The zod provider emits an input twin (ProblemInput) of every registered schema: keep those referred to.
  const schemas = ((document.components as Json | undefined)?.schemas ?? {}) as Json;
  for (const name of Object.keys(schemas)) {
    const { [name]: _, ...others } = schemas;
    if (!JSON.stringify([paths, others]).includes(`"#/components/schemas/${name}"`)) delete schemas[name];
  }
  return document;
}
