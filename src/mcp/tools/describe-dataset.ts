/** describe_dataset: a dataset's fields and filters, what one read costs the caller, an example call. Free. */
import { z } from 'zod';
import type { Pricing } from '../../domain/pricing.ts';
import type { MeteredReads } from '../../domain/reads.ts';
import { describeDataset as datasetDescription, datasetOut, sourceLine } from '../../views/catalog.ts';
import { presentQuote, quoteOut } from '../../views/cost.ts';
import { datasetKey, defineTool, type McpTool, text } from '../tool-kit.ts';

export function describeDatasetTool(reads: MeteredReads, pricing: Pricing): McpTool {
  return defineTool({
    name: 'describe_dataset',
    title: 'Describe a dataset',
    description:
      "A dataset's fields, time field, entity filters, P0 flag, what one read costs you, and an example read_dataset call. Free: burns no tokens.",
    metered: false,
    input: z.strictObject({ dataset: datasetKey }),
    output: datasetOut.extend({
      your_cost: quoteOut.describe('What one read_dataset call on this key costs you now.'),
      example_call: z.object({
        tool: z.literal('read_dataset'),
        arguments: z.record(z.string(), z.unknown()),
      }),
    }),
    async run(args, context) {
      const entry = reads.resolve(args.dataset);
      const yours = presentQuote(pricing, await reads.estimate(context.caller, entry.key));
      const d = entry.dataset;
      const entity = d.entity_fields[0];
      const sampleValue = d.fields.find((f) => f.name === entity)?.sample?.values?.[0];
      const example = {
        dataset: entry.key,
        ...(entity && sampleValue !== undefined ? { filters: { [entity]: [String(sampleValue)] } } : {}),
        limit: 10,
      };
      const fields = d.fields
        .map((f) => `${f.name} (${f.type}${f.unit ? `, ${f.unit}` : ''}): ${f.description}`)
        .join('\n');
      const status = await reads.status(entry);
      const span = `${status.firstT ?? '-'} to ${status.lastT ?? '-'}`;
      const summary = [
        `${entry.key}: ${d.title}. ${d.description} Source: ${sourceLine(entry, status.source)}; ${d.frequency}.`,
        `P0: ${entry.p0 ? 'yes' : 'no'}. One read costs you ${yours.token_cost} tokens (list ${yours.list_cost}) and burns ${yours.tokens_burned}${yours.entitled ? '' : '; your key is not entitled to it (402 not_entitled)'}.`,
        `Time field: ${d.time_field}. Entity filters: ${d.entity_fields.join(', ') || 'none'}.`,
        `Fields:\n${fields}`,
        `Example: read_dataset ${JSON.stringify(example)}`,
      ];
      const loaded = status.loadedAt === null ? '' : `; generated ${new Date(status.loadedAt).toISOString()}`;
      const run = status.lastImport;
      const lastImport = run
        ? `; last import ${new Date(run.importedAt).toISOString()} (${run.sourceName}${run.attribution ? `; ${run.attribution}` : ''})`
        : '';
      summary.push(
        status.source === 'sample'
          ? `Data: ${status.rows} generated sample rows, not real observations, ${span}${loaded}.`
          : `Data: ${status.rows} ${status.source === 'external' ? 'external' : 'imported'} rows, ${span}${lastImport}.`,
      );
      return {
        content: [text(summary.join('\n'))],
        structuredContent: {
          ...datasetDescription(entry, status),
          your_cost: yours,
          example_call: { tool: 'read_dataset', arguments: example },
        },
      };
    },
  });
}
