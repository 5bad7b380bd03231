/** A dataset read as clients see it: the JSON envelope `{data, meta}` shared by REST and MCP. */
import { z } from 'zod';
import { SCAN_CAP } from '../catalog/read-plan.ts';
import type { MeteredRead } from '../domain/reads.ts';
import type { ImportRun } from '../store/port.ts';
import { tokens } from './common.ts';
import type { CostView } from './cost.ts';

export const importRunOut = z.object({
  id: z.int(),
  format: z.string().describe('The importer that read the file.'),
  publisher: z.string().describe('Who publishes the data.'),
  file: z.string(),
  sha256: z.string(),
  imported_at: z.string(),
  licence: z.string(),
  attribution: z.string().nullable().describe('The credit the licence asks for; show it with the data.'),
});

export function presentImportRun(run: ImportRun): z.infer<typeof importRunOut> {
  return {
    id: run.id,
    format: run.importer,
    publisher: run.sourceName,
    file: run.fileName,
    sha256: run.sha256,
    imported_at: new Date(run.importedAt).toISOString(),
    licence: run.licence,
    attribution: run.attribution,
  };
}

export const readSource = z
  .object({
    kind: z
      .enum(['sample', 'import', 'external', 'records'])
      .describe(
        "sample: generated rows, not real observations; import: loaded from published files; external: read from the operator's own database; records: the service's own records.",
      ),
    origin: z
      .string()
      .optional()
      .describe('For external rows: what the operator says they are and where from.'),
    imports: z.array(importRunOut).describe('The imports that supplied the rows of this page.'),
  })
  .describe('Where the rows came from.');

export const readEnvelope = z.object({
  data: z.array(z.record(z.string(), z.unknown())),
  meta: z.object({
    dataset: z.string(),
    canonical_key: z.string(),
    count: z.int(),
    next_cursor: z.string().nullable(),
    examined: z
      .int()
      .describe(
        `Stored rows this read looked at. A filter on a field that is not an entity field is checked on at most ${SCAN_CAP} rows per read: next_cursor then continues the scan, even when the page holds fewer rows than asked for.`,
      ),
    fields: z.array(z.string()),
    time_field: z.string(),
    sample: z.boolean(),
    notice: z.string().optional(),
    source: readSource,
    as_of: z.string().nullable().describe("The dataset's newest observation (its latest time field)."),
    cost: z.object({
      list_cost: tokens.describe("The dataset's list cost per read, before discount."),
      token_cost: tokens,
      tokens_burned: tokens,
      credits_remaining: tokens,
      outcome: z.enum(['charged', 'notional', 'grandfathered']),
    }),
  }),
});

export type ReadMeta = z.infer<typeof readEnvelope>['meta'];

/** The `meta` of a read, with its cost figures as rendered once (`readCostView`). */
export function readMeta(result: MeteredRead, cost: CostView): ReadMeta {
  const { value } = result;
  return {
    dataset: value.entry.key,
    canonical_key: value.entry.dataset.key,
    count: value.count,
    next_cursor: value.nextCursor,
    examined: value.examined,
    fields: value.fields ?? [...value.entry.columns],
    time_field: value.entry.dataset.time_field,
    sample: value.source === 'sample',
    ...(value.source === 'sample' ? { notice: 'Generated sample data, not real observations.' } : {}),
    source: {
      kind: value.source,
      ...(value.origin === undefined ? {} : { origin: value.origin }),
      imports: value.imports.map(presentImportRun),
    },
    as_of: value.asOf,
    cost: {
      list_cost: String(value.entry.listCost),
      token_cost: cost.token_cost,
      tokens_burned: cost.tokens_burned,
      credits_remaining: cost.credits_remaining,
      outcome: cost.outcome as ReadMeta['cost']['outcome'],
    },
  };
}
