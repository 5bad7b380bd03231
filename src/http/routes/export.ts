/** GET /api/v1/export/{domain}/{name}: a whole dataset as NDJSON or CSV, charged once before it streams. */
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { csvLine } from '../../catalog/csv.ts';
import type { Caller } from '../../domain/caller.ts';
import { EXPORT_ROWS_PER_UNIT } from '../../domain/export.ts';
import { projectRow, storedCsvLines } from '../../domain/reads.ts';
import { chooseType } from '../../edge/accept.ts';
import type { CutOutcome, OpenExports } from '../../edge/open-exports.ts';
import type { TypedApp } from '../../edge/server.ts';
import type { Services } from '../../services.ts';
import { costHeaders, costView } from '../../views/cost.ts';
import { edge, problems } from '../schemas.ts';

const exportSchema = {
  operationId: 'exportDataset',
  tags: ['data'],
  summary: 'Export a whole dataset as NDJSON or CSV (packages with bulk_export)',
  description: `For live keys and sessions of accounts whose package has bulk_export (Pro, Workbench, Partner); 403 for everyone else. Charged once, before the stream starts: ceil(rows / ${EXPORT_ROWS_PER_UNIT}) (at least 1) times the dataset's list cost, discounted and surcharged like any read; the cost headers and X-Export-Rows are set before the first row. Rows come oldest first.`,
  security: [{ bearer: [] }, { apiKey: [] }] as Record<string, string[]>[],
  params: z.object({ domain: z.string().max(64), name: z.string().max(128) }),
  querystring: z.strictObject({
    format: z
      .enum(['ndjson', 'csv'])
      .optional()
      .describe('ndjson (default: one JSON object per line) or csv; Accept: text/csv also selects CSV.'),
  }),
  response: {
    200: {
      description:
        'Every row, oldest first: NDJSON (one JSON object per line) or, with format=csv or Accept: text/csv, CSV (RFC 4180, a header row).',
      // Streamed, so not typed as a string body.
      content: {
        'application/x-ndjson': { schema: z.unknown() },
        'text/csv': { schema: z.unknown() },
      },
    },
    ...problems(
      ...edge.required,
      'invalid_request',
      'insufficient_tokens',
      'spending_cap_reached',
      'forbidden',
      'dataset_not_found',
      'not_acceptable',
    ),
  },
};

type Exports = Services['exports'];
type Started = Awaited<ReturnType<Exports['start']>>;
type Page = Parameters<typeof storedCsvLines>[0];

/** One page as it goes out: its stored CSV lines, CSV rendered from the JSON, or NDJSON. */
function pageText(page: Page, csv: boolean, columns: readonly string[]): string {
  const stored = csv ? storedCsvLines(page) : null;
  if (stored) return `${stored.join('\r\n')}\r\n`;
  if (!csv) return page.map((row) => `${row.json}\n`).join('');
  return page
    .map((row) => {
      const projected = projectRow(row, columns);
      return csvLine(columns.map((c) => projected[c]));
    })
    .join('');
}

/** One export being streamed: what it has sent, and its refund, made once whatever asks for it. */
interface ExportRun {
  exports: Exports;
  started: Started;
  log: FastifyBaseLogger;
  sent: number;
  /** Whether a refund was asked for (a shutdown cut the stream, or it failed). */
  refunding(): boolean;
  /** True when the refund committed. */
  refund(detail: string): Promise<boolean>;
}

function exportRun(
  exports: Exports,
  caller: Caller,
  started: Started,
  requestId: string,
  log: FastifyBaseLogger,
): ExportRun {
  let refunded: Promise<boolean> | undefined;
  return {
    exports,
    started,
    log,
    sent: 0,
    refunding: () => refunded !== undefined,
    // Once, whichever comes first: the stream failing on our side, or a shutdown cutting it.
    refund(detail) {
      refunded ??= exports.refund(caller, started, requestId, detail).then(
        () => true,
        (refundError: unknown) => {
          log.error({ err: refundError }, 'export refund failed: the export stays charged');
          return false;
        },
      );
      return refunded;
    },
  };
}

/** The rows, page by page; a failure on our side after the charge refunds it. */
async function* exportBody(run: ExportRun, csv: boolean, response: ServerResponse): AsyncGenerator<string> {
  const { entry } = run.started.value;
  const columns = entry.columns;
  try {
    if (csv) yield csvLine(columns);
    for await (const page of run.exports.pages(entry, { csv })) {
      yield pageText(page, csv, columns);
      run.sent += page.length;
      // Compressed, the first page reaches the connection (and sends the status line) only once the
      // compressor has run: wait for it, so a failure after the charge breaks a 200 stream here too.
      while (!response.headersSent && !response.destroyed) {
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  } catch (error) {
    if (run.refunding()) throw error; // cut by a shutdown: refunded already
    // The client hung up (a compressed response's pipeline destroys its source with this error):
    // as uncompressed, what it abandoned stays charged.
    if ((error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') throw error;
    run.log.error({ err: error, sent: run.sent }, 'export stream failed after the charge; refunding');
    await run.refund(`export of ${entry.key} failed after ${run.sent} rows`);
    throw error;
  }
}

export function registerExportRoutes(app: TypedApp, deps: Services, openExports: OpenExports): void {
  const { exports } = deps;
  app.get(
    '/api/v1/export/:domain/:name',
    // A HEAD would charge a whole export and deliver nothing.
    { config: { auth: 'required' }, exposeHeadRoute: false, schema: exportSchema },
    async (request, reply) => {
      const caller = request.caller as Caller;
      const format = request.query.format;
      // format= chooses; without it, Accept does (406, unpaid, when it admits neither).
      const csv =
        format === undefined
          ? chooseType(request.headers.accept, ['application/x-ndjson', 'text/csv']) === 'text/csv'
          : format === 'csv';
      const key = `${request.params.domain}/${request.params.name}`;
      const started = await exports.start(caller, request.id, key);
      const { entry, rows, source } = started.value;
      const run = exportRun(exports, caller, started, request.id, request.log);
      const response = reply.raw;
      const stream = Readable.from(exportBody(run, csv, response));
      openExports.track(
        {
          async cut(): Promise<CutOutcome> {
            // Handed whole to the connection: served, nothing to give back.
            if (response.writableFinished) return 'delivered';
            // Broken first, so nothing more is delivered while the refund commits; the stream may be
            // waiting on the database for its next page, so the connection goes too.
            stream.destroy(new Error('export cut by a shutdown'));
            response.destroy();
            request.log.warn({ sent: run.sent }, 'export cut by shutdown; refunding');
            const done = await run.refund(`export of ${entry.key} cut by a shutdown after ${run.sent} rows`);
            return done ? 'refunded' : 'refund_failed';
          },
        },
        new Promise((resolve) => response.once('close', resolve)),
      );
      reply
        .headers(costHeaders(costView(deps.pricing, started.cost)))
        .header('x-export-rows', String(rows))
        .header('x-data-sample', String(source === 'sample'))
        .header(
          'content-disposition',
          `attachment; filename="${entry.key.replace('/', '_')}.${csv ? 'csv' : 'ndjson'}"`,
        )
        .type(csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
      return reply.send(stream);
    },
  );
}
