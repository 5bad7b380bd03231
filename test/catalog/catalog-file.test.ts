/** The catalog file's schema: every problem at once, each naming its dataset, field and path. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { catalogFileSchema, formatCatalogIssues, loadCatalogFile } from '../../src/catalog/catalog-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'catalog-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Breaks each cross-field rule once (keys, aliases, time and entity fields, sample sizes, field samples). */
const broken = {
  datasets: [
    {
      key: 'macro/rates',
      aliases: ['macro/rates', 'macro/r', 'macro/r'],
      title: 'Rates',
      description: 'Rates.',
      source: 'Test',
      frequency: 'daily',
      time_field: 'series',
      entity_fields: ['series', 'series', 'missing'],
      fields: [
        {
          name: 'date',
          type: 'date',
          description: 'Day.',
          sample: { values: ['2024-02-30'], null_rate: 0.1 },
        },
        {
          name: 'series',
          type: 'string',
          description: 'Series.',
          sample: { walk: true, values: ['A'], min: 1 },
        },
        {
          name: 'value',
          type: 'number',
          description: 'Value.',
          sample: { min: 5, max: 1, series: 'price', times: ['09:00'] },
        },
        { name: 'value', type: 'boolean', description: 'Again.', sample: { decimals: 2, values: ['maybe'] } },
      ],
      sample: {
        from: '2024-01-01',
        step: 'week',
        calendar: 'weekdays',
        periods: 1000,
        entities: 3,
        per_period: 20,
      },
    },
    {
      key: 'macro/other',
      aliases: ['macro/r'],
      title: 'Other',
      description: 'Other.',
      source: 'Test',
      frequency: 'hourly',
      time_field: 'day',
      entity_fields: [],
      fields: [{ name: 'day', type: 'date', description: 'Day.', sample: { times: ['09:00'] } }],
      sample: { from: '2024-01-01', step: 'hour', periods: 2, entities: 2 },
    },
  ],
};

const brokenIssues = [
  'datasets[0].fields[3].name: dataset "macro/rates" field "value": duplicate field name',
  'datasets[0].time_field: dataset "macro/rates" field "series": the time field must be of type date or datetime',
  'datasets[0].entity_fields[0]: dataset "macro/rates" field "series": the time field cannot also be an entity field',
  'datasets[0].entity_fields[1]: dataset "macro/rates" field "series": listed twice in entity_fields',
  'datasets[0].entity_fields[2]: dataset "macro/rates": entity field "missing" is not one of its fields',
  'datasets[0].sample.calendar: dataset "macro/rates": sample.calendar applies to a step of "day", not "week"',
  'datasets[0].aliases[0]: dataset "macro/rates": alias "macro/rates" repeats the dataset\'s own key',
  'datasets[0].aliases[2]: dataset "macro/rates": alias "macro/r" is listed twice',
  'datasets[0].sample: dataset "macro/rates": sample makes 60000 rows (entities x periods x per_period); the limit is 50000',
  'datasets[0].fields[0].sample.values[0]: dataset "macro/rates" field "date": sample value "2024-02-30" is not a date YYYY-MM-DD',
  'datasets[0].fields[1].sample.min: dataset "macro/rates" field "series": sample.min/max apply to numeric fields (and to dates, as day offsets)',
  'datasets[0].fields[1].sample.walk: dataset "macro/rates" field "series": sample.walk applies to integer and number fields',
  'datasets[0].fields[1].sample.walk: dataset "macro/rates" field "series": an entity field is constant per entity and cannot walk',
  'datasets[0].fields[1].sample: dataset "macro/rates" field "series": the time field takes its values from dataset.sample (from, step, periods); remove values/min/max',
  'datasets[0].fields[1].sample.values: dataset "macro/rates" field "series": entity field has 1 sample values but sample.entities is 3; entities would repeat',
  'datasets[0].fields[2].sample.min: dataset "macro/rates" field "value": sample.min (5) is greater than sample.max (1)',
  'datasets[0].fields[2].sample.series: dataset "macro/rates" field "value": sample.series needs a step of "day", not "week"',
  'datasets[0].fields[2].sample.times: dataset "macro/rates" field "value": sample.times applies to datetime fields',
  'datasets[0].fields[3].sample.values[0]: dataset "macro/rates" field "value": sample value "maybe" is not 1, 0, "true" or "false"',
  'datasets[0].fields[3].sample.decimals: dataset "macro/rates" field "value": sample.decimals applies to number fields',
  'datasets[1].sample.step: dataset "macro/other" field "day": sample.step "hour" needs a datetime time field',
  'datasets[1].sample.entities: dataset "macro/other": sample.entities must be 1 when entity_fields is empty',
  'datasets[1].fields[0].sample.times: dataset "macro/other" field "day": sample.times applies to datetime fields',
  'datasets[1].fields[0].sample.times: dataset "macro/other" field "day": sample.times on the time field needs a step of a day or more, not "hour"',
  'datasets[1].aliases[0]: dataset "macro/other": key "macro/r" is already used by dataset "macro/rates"',
];

test('the cross-field rules are checked in one pass and listed in order, path first', () => {
  const result = catalogFileSchema.safeParse(broken);
  assert.equal(result.success, false);
  assert.deepEqual(result.error && formatCatalogIssues(result.error, broken), brokenIssues);
});

test('a field-level zod problem is labelled with its dataset and field', () => {
  const input = {
    datasets: [
      {
        ...broken.datasets[1],
        key: 'Bad Key',
        fields: [{ name: 'Day', type: 'date', description: '' }],
      },
    ],
  };
  const result = catalogFileSchema.safeParse(input);
  const lines = result.error ? formatCatalogIssues(result.error, input) : [];
  assert.ok(
    lines.includes(
      'datasets[0].key: dataset "Bad Key": must look like domain/name: lowercase letters, digits and "-" (and "_" in the name)',
    ),
  );
  assert.ok(
    lines.includes('datasets[0].fields[0].description: dataset "Bad Key" field "Day": must not be empty'),
  );
});

test('loadCatalogFile reads the shipped catalog, and names the file and its problem count otherwise', () => {
  assert.ok(loadCatalogFile('config/catalog.json').datasets.length > 0);
  const path = join(dir, 'catalog.json');
  writeFileSync(path, JSON.stringify(broken));
  assert.throws(() => loadCatalogFile(path), {
    message: `Invalid catalog file ${path} (${brokenIssues.length} problems):\n${brokenIssues.map((l) => `  - ${l}`).join('\n')}`,
  });
  writeFileSync(path, '{');
  assert.throws(() => loadCatalogFile(path), { message: new RegExp(`^Cannot read catalog file ${path}: `) });
});
