/** One output of a run: a chart over dates, or a table (a table output, statistics, or values by label). */
import { Chart } from '../../components/chart.tsx';
import { ScrollRegion } from '../../components/scroll-region.tsx';
import type { AnalysisOutput } from '../../types.ts';

export interface OutputViewProps {
  output: AnalysisOutput;
  index: number;
}

export function OutputView({ output, index }: OutputViewProps) {
  if ((output.kind === 'line' || output.kind === 'bar') && output.x === 'date') {
    const dates = [...new Set(output.series.flatMap((s) => s.x))].sort();
    const xs = dates.map((d) => Date.parse(d.length === 10 ? `${d}T00:00:00Z` : d) / 1000);
    const series = output.series.map((s) => {
      const byDate = new Map(s.x.map((d, i) => [d, s.y[i] ?? null]));
      return { label: s.name, values: dates.map((d) => byDate.get(d) ?? null) };
    });
    return (
      <section class="card" aria-label={`Output ${index + 1}: ${output.title}`}>
        <h3>{output.title}</h3>
        <Chart label={`Chart: ${output.title}`} xs={xs} series={series} bars={output.kind === 'bar'} />
      </section>
    );
  }
  const table =
    output.kind === 'table'
      ? { columns: output.columns, rows: output.rows }
      : output.kind === 'stats'
        ? {
            columns: ['series', 'count', 'first date', 'last date', 'mean', 'std', 'min', 'max', 'last'],
            rows: output.rows.map((r) => [
              r.name,
              r.count,
              r.first_date,
              r.last_date,
              r.mean,
              r.std,
              r.min,
              r.max,
              r.last,
            ]),
          }
        : {
            columns: ['', ...output.series.map((s) => s.name)],
            rows: (output.series[0]?.x ?? []).map((label, i) => [
              label,
              ...output.series.map((s) => s.y[i] ?? null),
            ]),
          };
  const fmt = (v: unknown) =>
    typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toPrecision(6)) : (v ?? '—');
  return (
    <section class="card" aria-label={`Output ${index + 1}: ${output.title}`}>
      <h3>{output.title}</h3>
      <ScrollRegion label={`Table: ${output.title}`}>
        <table>
          <thead>
            <tr>
              {table.columns.map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {table.rows.slice(-200).map((row, i) => (
              <tr key={i}>
                {row.map((cell, k) => (
                  <td key={k} class={typeof cell === 'number' ? 'num' : ''}>
                    {String(fmt(cell))}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </section>
  );
}
