/** The datasets the filters keep, with what a read costs you and who may read each (cards on a phone). */
import { ScrollRegion } from '../../components/scroll-region.tsx';
import { Link } from '../../router.tsx';
import { AccessBadge } from './access-badge.tsx';
import type { Line, Sort } from './catalog-lines.ts';
import { SortHeader } from './sort-header.tsx';

const sourceLabel = {
  sample: 'sample',
  imported: 'imported',
  external: 'operator table',
  none_yet: 'sample',
} as const;

export interface CatalogTableProps {
  lines: Line[];
  sort: Sort | null;
  onSort: (sort: Sort) => void;
}

export function CatalogTable({ lines, sort, onSort }: CatalogTableProps) {
  const sorting = { sort, onSort };
  return (
    <ScrollRegion label="Datasets (scrollable)">
      <table class="cards">
        <caption class="visually-hidden">Datasets and what a read costs you</caption>
        <thead>
          <tr>
            <SortHeader by="key" label="Dataset" {...sorting} />
            <th scope="col">Access</th>
            <th scope="col">Data</th>
            <SortHeader by="list" label="List price" numeric {...sorting} />
            <SortHeader by="terminal" label="You pay (Terminal)" numeric {...sorting} />
            <SortHeader by="api" label="You pay (API key)" numeric {...sorting} />
            <th scope="col">Who may read it</th>
          </tr>
        </thead>
        <tbody>
          {lines.map((l) => (
            <CatalogRow key={l.key} line={l} />
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

function CatalogRow({ line: l }: { line: Line }) {
  return (
    <tr>
      <td class="card-title">
        <div>
          <Link href={`/dataset/${l.key}`}>{l.key}</Link>
          <div class="muted small">{l.title}</div>
        </div>
      </td>
      <td data-label="Access">
        <AccessBadge line={l} />
      </td>
      <td data-label="Data">
        {l.price && (
          <span class={`badge ${l.price.data_source === 'imported' ? '' : 'sample'}`}>
            {sourceLabel[l.price.data_source]}
          </span>
        )}
      </td>
      <td class="num" data-label="List price">
        {l.list_cost}
      </td>
      <td class="num" data-testid="terminal-price" data-label="You pay (Terminal)">
        {l.price?.terminal_cost}
      </td>
      <td class="num" data-label="You pay (API key)">
        {l.price?.api_key_cost}
      </td>
      <td class="small who">
        {l.price?.entitled === false ? (
          <span class="badge no">402 not_entitled</span>
        ) : (
          <span>You, from the Terminal and with wallet keys.</span>
        )}{' '}
        {l.p0 ? (
          <span class="muted">Free keys too (public test: no burn).</span>
        ) : (
          <span class="muted">
            Not free keys: a sandbox or public-test key gets 402 not_entitled; a wallet key or the Terminal
            entitles you.
          </span>
        )}
      </td>
    </tr>
  );
}
