/** Where the page's rows came from and how fresh the dataset is, with the credit a licence asks for. */
import type { ReadPage } from '../../types.ts';

export interface ProvenanceProps {
  meta: ReadPage['meta'];
}

export function Provenance({ meta }: ProvenanceProps) {
  const source = meta.source;
  if (!source || source.kind === 'sample') return null;
  const asOf = meta.as_of ? ` Newest observation: ${meta.as_of}.` : '';
  if (source.kind === 'records') {
    return <p class="provenance">From the service's own records.{asOf}</p>;
  }
  return (
    <div class="provenance">
      <p>Imported from published files.{asOf}</p>
      <ul class="provenance-list">
        {source.imports.map((run) => (
          <li key={`${run.file}-${run.imported_at}`}>
            {run.publisher}: {run.file}, imported {run.imported_at.slice(0, 10)}; licence {run.licence}
            {run.attribution ? `. ${run.attribution}` : ''}
          </li>
        ))}
      </ul>
    </div>
  );
}
