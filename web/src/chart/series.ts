/** Chart data from rows, without the chart library (the pages import this eagerly, uPlot lazily). */

export interface Series {
  label: string;
  /** One value per x, null where this series has none. */
  values: (number | null)[];
}

/** Rows to chart data: x is the time field, one series per entity (and per field when several). */
export function seriesOf(
  rows: readonly Record<string, unknown>[],
  timeField: string,
  entityFields: readonly string[],
  valueFields: readonly string[],
): { xs: number[]; series: Series[] } {
  const times = new Set<number>();
  const byLine = new Map<string, Map<number, number>>();
  for (const row of rows) {
    const t = Date.parse(String(row[timeField])) / 1000;
    if (!Number.isFinite(t)) continue;
    times.add(t);
    const entity = entityFields.map((f) => String(row[f] ?? '')).join(' ');
    for (const field of valueFields) {
      const v = row[field];
      if (typeof v !== 'number') continue;
      const label = valueFields.length > 1 ? `${entity} ${field}`.trim() : entity || field;
      let line = byLine.get(label);
      if (!line) {
        line = new Map();
        byLine.set(label, line);
      }
      line.set(t, v);
    }
  }
  const xs = [...times].sort((a, b) => a - b);
  const series = [...byLine].map(([label, points]) => ({
    label,
    values: xs.map((x) => points.get(x) ?? null),
  }));
  return { xs, series };
}
