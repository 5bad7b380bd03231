/**
 * OpenAPI 3.1 from the same zod schemas that validate requests. Response headers are added here from one
 * table, so every documented response lists X-Request-Id, the rate-limit headers of limited routes, the
 * cost headers of metered routes, Retry-After on 429, WWW-Authenticate on 401 and Allow on 405.
 */
import { jsonSchemaTransformObject } from 'fastify-type-provider-zod';

export type Json = Record<string, unknown>;

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
  'Cache-Control': header(
    '`public, no-cache` on the free metadata (revalidate with its ETag); `private, no-store` on everything else.',
  ),
  ETag: header('A weak validator of the free metadata: send it back as If-None-Match for a 304.'),
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

/** operationIds of the free metadata: ETag, `Cache-Control: public, no-cache` and 304 (edge/conventions.ts). */
export const publicMetadataOperations = new Set([
  'listCatalog',
  'describeDataset',
  'getPricing',
  'listRecipes',
  'describeSandbox',
  'describePublicTest',
  'openapi',
]);

/** The data read's filters: any entity field of the dataset, as one form-exploded object parameter. */
const entityFilters: Json = {
  name: 'filters',
  in: 'query',
  style: 'form',
  explode: true,
  description:
    "Entity filters: each of the dataset's `entity_fields` (see `GET /api/v1/catalog/{domain}/{name}`, which lists its fields, types and an example read) as its own parameter, e.g. `symbol=AAPL,MSFT` or `symbol=AAPL&symbol=MSFT` (any of the values). A name that is neither an option above nor an entity field is 400 invalid_request.",
  schema: { type: 'object', additionalProperties: { type: 'string', maxLength: 4096 } },
};

/**
 * Operations that take an Idempotency-Key header (true: required): a retry with the same key gets the
 * first answer and is applied or charged once. Generated clients send one key across their retries.
 */
const idempotentOperations: Record<string, boolean> = { readDataset: false, adminCreditTokens: true };

const idempotencyKey = (required: boolean): Json => ({
  name: 'Idempotency-Key',
  in: 'header',
  required,
  description:
    'A key for this request (1 to 255 visible ASCII characters; a UUID will do): a retry with the same key, from the same credential within 24 hours, gets the first answer and is applied or charged once.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
});

/** Headers of an operation's success (2xx) beyond the common ones. */
const okHeaders: Record<string, (keyof typeof documentedHeaders)[]> = {
  readDataset: ['X-Next-Cursor', 'X-Data-Sample', 'Idempotent-Replayed'],
  exportDataset: ['X-Export-Rows', 'X-Data-Sample', 'Content-Disposition'],
  adminCreditTokens: ['Idempotent-Replayed'],
  login: ['Set-Cookie'],
  logout: ['Set-Cookie'],
};

/**
 * The document's final touches: `written` replaces the entries of paths that have no route schema (the
 * MCP endpoint speaks JSON-RPC: its face writes its own), then the headers of every response.
 */
export const transformObject =
  (written: Record<string, Record<string, Json>>) =>
  (input: Parameters<typeof jsonSchemaTransformObject>[0]) => {
    const document = jsonSchemaTransformObject(input) as Json;
    const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
    for (const [path, item] of Object.entries(written)) if (paths[path]) paths[path] = item;
    for (const operations of Object.values(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        // An operation that never succeeds (the MCP endpoint's other methods, a checkout not live yet) is
        // no operation a client can use: its 405 or 501 is described where the path's real one is.
        const statuses = Object.keys((operation.responses ?? {}) as Json);
        if (!statuses.some((status) => status.startsWith('2'))) {
          delete operations[method];
          continue;
        }
        // No security named: the operation takes no credential, or takes one optionally.
        operation.security ??= [];
        if (publicMetadataOperations.has(String(operation.operationId))) {
          (operation.responses as Json)['304'] = {
            description: 'Not Modified: the ETag sent in If-None-Match is still current; no body.',
          };
        }
        if (operation.operationId === 'readDataset') {
          (operation.parameters as Json[] | undefined)?.push(entityFilters);
        }
        const keyRequired = idempotentOperations[String(operation.operationId)];
        if (keyRequired !== undefined) {
          operation.parameters = [
            ...((operation.parameters as Json[] | undefined) ?? []),
            idempotencyKey(keyRequired),
          ];
        }
      }
    }
    for (const [path, operations] of Object.entries(paths)) {
      if (Object.keys(operations).length === 0) delete paths[path];
    }
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
          headers['Cache-Control'] = documentedHeaders['Cache-Control'];
          if (publicMetadataOperations.has(id) && (status === '200' || status === '304'))
            headers.ETag = documentedHeaders.ETag;
          if (status === '429' || status === '503') headers['Retry-After'] = documentedHeaders['Retry-After'];
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
  };
