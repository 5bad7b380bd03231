/** GET /api/v1/data/{domain}/{name}: the metered read, as JSON or CSV. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  type ReadParams,
  readOptionsShape,
  SCAN_CAP,
} from '../../catalog/read-plan.ts';
import type { StoredResponse } from '../../domain/idempotency.ts';
import { readRequestFrom } from '../../domain/reads.ts';
import { chooseType } from '../../edge/accept.ts';
import type { TypedApp } from '../../edge/server.ts';
import { AppError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { encodeReadCsv, encodeReadJson } from '../../views/read-encoders.ts';
import { readEnvelope } from '../../views/reads.ts';
import { edge, problems, queryInt } from '../schemas.ts';

export const filterValue = z.union([z.string().max(4096), z.array(z.string().max(4096)).max(100)]);

export const readQuerystring = z
  .object({
    ...readOptionsShape,
    limit: queryInt(1, MAX_LIMIT, DEFAULT_LIMIT)
      .optional()
      .describe(
        `Rows per page, a whole number from 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}). One request is one read, whatever the page size.`,
      ),
    start_date: readOptionsShape.from.describe('Alias of from.'),
    end_date: readOptionsShape.to.describe('Alias of to.'),
    order: readOptionsShape.sort.describe('Alias of sort.'),
    format: z
      .string()
      .max(4096)
      .optional()
      .describe(
        'json (default) or csv; Accept: text/csv also selects CSV. On a dataset with an entity field named format, it filters that field instead (use Accept for CSV).',
      ),
  })
  .catchall(filterValue)
  .describe('Any other parameter is an entity filter named by the dataset (e.g. symbol=AAPL,MSFT).');

type ReadQuery = z.infer<typeof readQuerystring>;
const optionNames = new Set([
  'from',
  'to',
  'fields',
  'limit',
  'cursor',
  'sort',
  'start_date',
  'end_date',
  'order',
  'format',
]);

function conflict(a: unknown, b: unknown, names: string): void {
  if (a !== undefined && b !== undefined && a !== b) {
    throw new AppError('invalid_request', `Give only one of ${names}.`, {
      errors: [{ path: names, message: 'conflict' }],
    });
  }
}

/**
 * A query name the parsing dropped (`__proto__`) would otherwise be a filter silently ignored on a paid
 * read: refused like any other name the dataset does not know.
 */
function refuseDroppedNames(url: string, query: object): void {
  const start = url.indexOf('?');
  if (start < 0) return;
  const search = url.slice(start + 1);
  // Names with no escape read as they are written; only an escaped one needs the full parser.
  if (/[%+]/.test(search)) {
    for (const name of new URLSearchParams(search).keys()) refuseUnknown(query, name);
    return;
  }
  // One pass: the next '=' is looked for again only once a pair has gone past it.
  let eq = search.indexOf('=');
  for (let from = 0; from <= search.length; ) {
    let end = search.indexOf('&', from);
    if (end < 0) end = search.length;
    if (eq >= 0 && eq < from) eq = search.indexOf('=', from);
    // An empty pair (a=1&&b=2) names nothing.
    if (end > from) refuseUnknown(query, search.slice(from, eq >= 0 && eq < end ? eq : end));
    from = end + 1;
  }
}

function refuseUnknown(query: object, name: string): void {
  if (!Object.hasOwn(query, name)) {
    throw new AppError('invalid_request', `Unknown parameter or filter "${name}".`, {
      errors: [{ path: name, message: 'unknown parameter' }],
    });
  }
}

/** The read request of a query: its aliases resolved, every other name an entity filter. */
export function readParamsFromQuery(query: ReadQuery): ReadParams {
  conflict(query.from, query.start_date, 'from/start_date');
  conflict(query.to, query.end_date, 'to/end_date');
  conflict(query.sort, query.order, 'sort/order');
  const filters: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(query)) {
    if (optionNames.has(name) || value === undefined) continue;
    filters[name] = Array.isArray(value) ? value : String(value);
  }
  return readRequestFrom({
    filters,
    from: (query.from ?? query.start_date) as string | undefined,
    to: (query.to ?? query.end_date) as string | undefined,
    fields: typeof query.fields === 'string' ? query.fields : undefined,
    limit: typeof query.limit === 'number' ? query.limit : undefined,
    cursor: query.cursor as string | undefined,
    sort: (query.sort ?? query.order) as 'asc' | 'desc' | undefined,
  });
}

/** format= chooses; without it, Accept does, and one that admits neither type is refused unpaid (406). */
function wantsCsv(request: FastifyRequest, format: string | undefined): boolean {
  if (format !== undefined) return format === 'csv';
  return chooseType(request.headers.accept, ['application/json', 'text/csv']) === 'text/csv';
}

export function sendStored(reply: FastifyReply, response: StoredResponse): FastifyReply {
  return reply.code(response.status).headers(response.headers).type(response.contentType).send(response.body);
}

export function registerDataRoutes(app: TypedApp, deps: Services): void {
  app.get(
    '/api/v1/data/:domain/:name',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'readDataset',
        tags: ['data'],
        summary: 'Read a dataset page (metered: one request is one read, whatever the page size)',
        description: `Filters: any field of the dataset (see GET /api/v1/catalog/{domain}/{name}), comma-separated or repeated. Entity fields are indexed; any other filter is checked on at most ${SCAN_CAP} stored rows per read, and meta.next_cursor then goes on with the scan even when the page is short. Sample data is marked in meta.sample and X-Data-Sample.`,
        security: [{ bearer: [] }, { apiKey: [] }],
        params: z.object({ domain: z.string().max(64), name: z.string().max(128) }),
        querystring: readQuerystring,
        response: {
          200: {
            description:
              'The page as the JSON envelope or, with format=csv or Accept: text/csv, as CSV (RFC 4180, a header row; the next cursor in X-Next-Cursor).',
            content: {
              'application/json': { schema: readEnvelope },
              'text/csv': { schema: z.string() },
            },
          },
          ...problems(
            ...edge.required,
            'invalid_request',
            'invalid_cursor',
            'not_entitled',
            'insufficient_tokens',
            'spending_cap_reached',
            'dataset_not_found',
            'not_acceptable',
            'idempotency_key_reused',
            'conflict',
          ),
        },
      },
    },
    async (request, reply) => {
      const caller = request.caller;
      if (!caller) throw new AppError('missing_credentials', 'This endpoint needs a key.');
      refuseDroppedNames(request.url, request.query);
      const key = `${request.params.domain}/${request.params.name}`;
      const params = readParamsFromQuery(request.query);
      let format = request.query.format as string | undefined;
      if (format !== undefined && deps.reads.resolve(key).dataset.entity_fields.includes('format')) {
        // The dataset's own field: `format` filters it, as on MCP; the output is chosen by Accept.
        params.filters.format = [format];
        format = undefined;
      } else if (format !== undefined && format !== 'json' && format !== 'csv') {
        throw new AppError('invalid_request', 'format: must be json or csv.', {
          errors: [{ path: 'format', message: 'must be json or csv' }],
        });
      }
      const csv = wantsCsv(request, format);
      const read = async () => {
        const metered = await deps.reads.read(caller, request.id, key, params, { as: csv ? 'csv' : 'json' });
        return csv ? encodeReadCsv(metered) : encodeReadJson(metered);
      };
      const idempotencyKey = request.headers['idempotency-key'];
      if (typeof idempotencyKey !== 'string') return sendStored(reply, await read());
      // A retry of this request with this key gets the first answer, uncharged.
      const { response, replayed } = await deps.idempotency.run(
        caller,
        idempotencyKey,
        `GET ${request.url} ${csv ? 'csv' : 'json'}`,
        read,
      );
      if (replayed) reply.header('idempotent-replayed', 'true');
      return sendStored(reply, response);
    },
  );
}
