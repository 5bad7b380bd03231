/**
 * OpenAPI 3.1 from the same zod schemas that validate requests. Response headers are added here from one
 * table, so every documented response lists X-Request-Id, the rate-limit headers of keyed routes, the
 * cost headers of metered routes, Retry-After on 429 and WWW-Authenticate on 401.
 */
import { jsonSchemaTransformObject } from 'fastify-type-provider-zod';

type Json = Record<string, unknown>;

/** operationIds whose 2xx responses carry the four cost headers. */
export const meteredOperations = new Set(['readDataset', 'runRecipe', 'exportDataset']);
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
  'RateLimit-Policy': header('IETF draft: the per-minute policy of this credential, e.g. `60;w=60`.'),
  RateLimit: header(
    'IETF draft: remaining requests and seconds to reset, e.g. `limit=60, remaining=59, reset=60`.',
  ),
  'Retry-After': header('Seconds to wait before retrying.', 'integer'),
  'WWW-Authenticate': header('Bearer challenge on 401.'),
  'X-Next-Cursor': header('CSV responses: the cursor of the next page, absent on the last page.'),
  'X-Data-Sample': header('`true` when the rows are generated sample data, not imported real data.'),
};

export function transformObject(input: Parameters<typeof jsonSchemaTransformObject>[0]) {
  const document = jsonSchemaTransformObject(input) as Json;
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
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
        if (meteredOperations.has(id) && status.startsWith('2')) {
          for (const name of [
            'X-Token-Cost',
            'X-Request-Tokens',
            'X-Request-Cost-EUR',
            'X-Credits-Remaining',
          ] as const) {
            headers[name] = documentedHeaders[name];
          }
          if (id === 'readDataset') {
            headers['X-Next-Cursor'] = documentedHeaders['X-Next-Cursor'];
            headers['X-Data-Sample'] = documentedHeaders['X-Data-Sample'];
          }
        }
        if (status === '429') headers['Retry-After'] = documentedHeaders['Retry-After'];
        if (status === '401') headers['WWW-Authenticate'] = documentedHeaders['WWW-Authenticate'];
        response.headers = { ...((response.headers as Json | undefined) ?? {}), ...headers };
      }
    }
  }
  return document;
}
