/** Which rows to read: entities (with suggestions), dates, sort and page size. */
import type { Dataset } from '../../types.ts';
import type { ReadForm, SetReadField } from './read-query.ts';

export interface ReadFiltersProps {
  ds: Dataset;
  form: ReadForm;
  set: SetReadField;
  /** Entities the dataset holds, offered as the user types. */
  suggestions: string[];
}

export function ReadFilters({ ds, form, set, suggestions }: ReadFiltersProps) {
  return (
    <>
      <div class="row">
        {ds.entity_fields[0] && (
          <label>
            {ds.entity_fields[0]} (comma-separated)
            <input
              list="entity-suggestions"
              value={form.entities}
              maxLength={2000}
              onInput={(e) => set('entities', e.currentTarget.value)}
            />
            <datalist id="entity-suggestions">
              {suggestions.map((s) => (
                <option key={s} value={s} />
              ))}
            </datalist>
          </label>
        )}
        <label>
          From
          <input type="date" value={form.from} onInput={(e) => set('from', e.currentTarget.value)} />
        </label>
        <label>
          To
          <input type="date" value={form.to} onInput={(e) => set('to', e.currentTarget.value)} />
        </label>
        <label>
          Sort
          <select value={form.sort} onChange={(e) => set('sort', e.currentTarget.value as 'asc' | 'desc')}>
            <option value="desc">Newest first</option>
            <option value="asc">Oldest first</option>
          </select>
        </label>
        <label>
          Rows per page
          <input
            inputMode="numeric"
            size={5}
            value={form.limit}
            onInput={(e) => set('limit', e.currentTarget.value.trim())}
          />
        </label>
      </div>
      {suggestions.length > 0 && <p class="muted small">Suggested: {suggestions.slice(0, 12).join(', ')}</p>}
    </>
  );
}
