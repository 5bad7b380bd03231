/** The saved analyses: open one in the composer, duplicate it, or delete it. */
import type { Analysis } from '../../types.ts';

export interface SavedListProps {
  saved: Analysis[];
  /** The id of the analysis open in the composer. */
  currentId: string | null;
  onOpen: (a: Analysis) => void;
  onDuplicate: (a: Analysis) => void;
  onRemove: (a: Analysis) => void;
}

export function SavedList({ saved, currentId, onOpen, onDuplicate, onRemove }: SavedListProps) {
  return (
    <section aria-labelledby="saved-title">
      <h2 id="saved-title">Saved analyses</h2>
      <ul class="analyze-saved" aria-label="Saved analyses">
        {saved.map((a) => (
          <li key={a.id}>
            <button
              type="button"
              class="secondary"
              onClick={() => onOpen(a)}
              aria-pressed={currentId === a.id}
            >
              {a.name}
            </button>{' '}
            <button
              type="button"
              class="secondary"
              onClick={() => onDuplicate(a)}
              aria-label={`Duplicate ${a.name}`}
            >
              Duplicate
            </button>{' '}
            <button type="button" class="danger" onClick={() => onRemove(a)} aria-label={`Delete ${a.name}`}>
              Delete
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
