/** A small dataset to import into: a date, an entity and two typed values. */
import type { DatasetDef } from '../../src/catalog/types.ts';

export const rates: DatasetDef = {
  key: 'macro/rates',
  aliases: [],
  title: 'Rates',
  description: 'Rates.',
  source: 'Test',
  frequency: 'daily',
  time_field: 'date',
  entity_fields: ['series'],
  fields: [
    { name: 'date', type: 'date', description: 'Day.' },
    { name: 'series', type: 'string', description: 'Series.' },
    { name: 'value', type: 'number', description: 'Value.' },
    { name: 'open_interest_all', type: 'integer', description: 'Contracts.' },
  ],
  sample: { from: '2024-01-01', step: 'day', periods: 1, entities: 1 },
};
