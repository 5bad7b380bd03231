/** The field a dataset's chart opens on. */

// The value a reader of each kind of dataset looks at first: a price's close before its open.
const PREFERRED = [
  'close',
  'adj_close',
  'adjusted_close',
  'mid_price',
  'price',
  'value',
  'obs_value',
  'par_yield',
  'percent_rate',
  'rate',
];

/** The preferred numeric field the dataset has, else its first numeric field, else ''. */
export function defaultChartField(fields: readonly { name: string; type: string }[]): string {
  const numeric = fields.filter((f) => f.type === 'number' || f.type === 'integer').map((f) => f.name);
  return PREFERRED.find((name) => numeric.includes(name)) ?? numeric[0] ?? '';
}
