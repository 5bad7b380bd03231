/** The page's rows charted: one numeric field over time, one line per entity; close or main value first. */
import { useMemo, useState } from 'preact/hooks';
import { defaultChartField } from '../../chart/default-field.ts';
import { seriesOf } from '../../chart/series.ts';
import { Chart } from '../../components/chart.tsx';
import type { Dataset, ReadPage } from '../../types.ts';

export interface DatasetChartProps {
  ds: Dataset;
  page: ReadPage;
}

export function DatasetChart({ ds, page }: DatasetChartProps) {
  const [field, setField] = useState(() => defaultChartField(ds.fields));
  const chart = useMemo(
    () => (field ? seriesOf(page.data, ds.time_field, ds.entity_fields, [field]) : null),
    [ds, page, field],
  );
  const numericFields = ds.fields.filter((f) => f.type === 'number' || f.type === 'integer');
  return (
    <>
      <h2>Chart</h2>
      {numericFields.length > 0 ? (
        <>
          <label>
            Field to chart
            <select value={field} onChange={(e) => setField(e.currentTarget.value)}>
              {numericFields.map((f) => (
                <option key={f.name} value={f.name}>
                  {f.name}
                  {f.unit ? ` (${f.unit})` : ''}
                </option>
              ))}
            </select>
          </label>
          {chart && chart.series.length > 0 ? (
            <Chart label={`${field} over ${ds.time_field}, one line per entity`} {...chart} />
          ) : (
            <p class="muted">Nothing numeric to chart in this page (read the field to chart it).</p>
          )}
        </>
      ) : (
        <p class="muted">This dataset has no numeric field to chart.</p>
      )}
    </>
  );
}
