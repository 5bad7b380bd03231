/** The rows of the page read, as text (an importer's markup is never markup here). */
import { ScrollRegion } from '../../components/scroll-region.tsx';
import type { ReadPage } from '../../types.ts';

export interface RowsTableProps {
  dsKey: string;
  page: ReadPage;
}

export function RowsTable({ dsKey, page }: RowsTableProps) {
  const columns = page.meta.fields;
  return (
    <ScrollRegion label="Rows (scrollable)">
      <table>
        <caption class="visually-hidden">Rows read from {dsKey}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" key={c}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {page.data.map((row, i) => (
            <tr key={i}>
              {columns.map((c) => (
                <td key={c} class={typeof row[c] === 'number' ? 'num' : undefined}>
                  {row[c] === null || row[c] === undefined ? '' : String(row[c])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
