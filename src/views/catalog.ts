/** Datasets as clients see them: the catalog list, one dataset's description, an example read. */
import { z } from 'zod';
import type { CatalogEntry } from '../catalog/catalog.ts';
import { quoteValue } from '../catalog/read-plan.ts';
import { fieldTypes } from '../catalog/types.ts';
import type { DatasetStatus } from '../domain/reads.ts';
import { importRunOut, presentImportRun } from './reads.ts';

export const entryOut = z.object({
  key: z.string(),
  domain: z.string(),
  name: z.string(),
  title: z.string(),
  description: z.string(),
  source: z.string(),
  frequency: z.string(),
  list_cost: z.int().describe('Tokens per read before loyalty discount.'),
  p0: z.boolean().describe('Readable by sandbox and public-test keys (free domains).'),
  canonical_key: z.string(),
  aliases: z
    .array(z.string())
    .describe('Every key that serves the same data; each keeps its own price and P0 flag.'),
  time_field: z.string(),
  entity_fields: z.array(z.string()),
});

export const fieldOut = z.object({
  name: z.string(),
  type: z.enum(fieldTypes),
  unit: z.string().nullable(),
  description: z.string(),
});

export const dataStatusOut = z
  .object({
    source: z
      .enum(['sample', 'import', 'external'])
      .describe(
        "sample: generated rows, not real observations; external: read from the operator's own database.",
      ),
    origin: z
      .string()
      .optional()
      .describe('For external rows: what the operator says they are and where from.'),
    rows: z.int(),
    first: z.string().nullable().describe('The earliest time field of its rows.'),
    last: z.string().nullable().describe('The latest time field of its rows (the newest observation).'),
    last_import: importRunOut
      .extend({ rows_read: z.int(), rows_inserted: z.int(), rows_replaced: z.int(), rows_rejected: z.int() })
      .nullable(),
  })
  .describe('What the dataset holds now.');

export const datasetOut = entryOut.extend({
  fields: z.array(fieldOut),
  example: z.string(),
  data_status: dataStatusOut,
});

export function presentDataStatus(status: DatasetStatus): z.infer<typeof dataStatusOut> {
  const run = status.lastImport;
  return {
    source: status.source,
    ...(status.origin === undefined ? {} : { origin: status.origin }),
    rows: status.rows,
    first: status.firstT,
    last: status.lastT,
    last_import: run
      ? {
          ...presentImportRun(run),
          rows_read: run.rowsRead,
          rows_inserted: run.rowsInserted,
          rows_replaced: run.rowsReplaced,
          rows_rejected: run.rowsRejected,
        }
      : null,
  };
}

export function presentDataset(entry: CatalogEntry): z.infer<typeof entryOut> {
  const d = entry.dataset;
  return {
    key: entry.key,
    domain: entry.domain,
    name: entry.name,
    title: d.title,
    description: d.description,
    source: d.source,
    frequency: d.frequency,
    list_cost: entry.listCost,
    p0: entry.p0,
    canonical_key: d.key,
    aliases: [d.key, ...d.aliases].filter((k) => k !== entry.key),
    time_field: d.time_field,
    entity_fields: [...d.entity_fields],
  };
}

/** A REST read of this dataset filtered on its first entity's first sample value. */
export function exampleRead(entry: CatalogEntry): string {
  const entity = entry.dataset.entity_fields[0];
  const field = entry.dataset.fields.find((f) => f.name === entity);
  const value = field?.sample?.values?.[0];
  const filter =
    entity && value !== undefined ? `${entity}=${encodeURIComponent(quoteValue(String(value)))}&` : '';
  return `/api/v1/data/${entry.key}?${filter}limit=10`;
}

export function describeDataset(entry: CatalogEntry, status: DatasetStatus): z.infer<typeof datasetOut> {
  return {
    ...presentDataset(entry),
    fields: entry.dataset.fields.map((f) => ({
      name: f.name,
      type: f.type,
      unit: f.unit ?? null,
      description: f.description,
    })),
    example: exampleRead(entry),
    data_status: presentDataStatus(status),
  };
}
