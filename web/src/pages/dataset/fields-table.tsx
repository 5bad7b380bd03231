/** A dataset's fields, folded away under a summary: name, type, unit and description. */
import type { Dataset } from '../../types.ts';

export interface FieldsTableProps {
  ds: Dataset;
}

export function FieldsTable({ ds }: FieldsTableProps) {
  return (
    <details>
      <summary>Fields ({ds.fields.length})</summary>
      <table>
        <caption class="visually-hidden">Fields of {ds.key}</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Type</th>
            <th scope="col">Unit</th>
            <th scope="col">Description</th>
          </tr>
        </thead>
        <tbody>
          {ds.fields.map((f) => (
            <tr key={f.name}>
              <td>
                <code>{f.name}</code>
              </td>
              <td>{f.type}</td>
              <td>{f.unit ?? ''}</td>
              <td>{f.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
