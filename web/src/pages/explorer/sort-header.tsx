/** A column header that sorts by it: once ascending, again descending. */
import type { Sort, SortKey } from './catalog-lines.ts';

export interface SortHeaderProps {
  by: SortKey;
  label: string;
  numeric?: boolean;
  sort: Sort | null;
  onSort: (sort: Sort) => void;
}

export function SortHeader({ by, label, numeric = false, sort, onSort }: SortHeaderProps) {
  const active = sort?.by === by;
  return (
    <th
      scope="col"
      class={numeric ? 'num' : undefined}
      aria-sort={active ? (sort?.descending ? 'descending' : 'ascending') : 'none'}
    >
      <button
        type="button"
        class="sort"
        onClick={() => onSort({ by, descending: active ? !sort?.descending : false })}
      >
        {label}
        <span aria-hidden="true">{active ? (sort?.descending ? ' ▼' : ' ▲') : ''}</span>
      </button>
    </th>
  );
}
