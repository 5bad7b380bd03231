/** One series of the composer: id, dataset, entity, field and dates, each labelled with its number. */
import type { SeriesRow } from './draft.ts';

export interface SeriesFieldsetProps {
  row: SeriesRow;
  /** 0 for the first series. */
  index: number;
  /** Offered only when there is more than one series. */
  removable: boolean;
  onChange: (patch: Partial<SeriesRow>) => void;
  onRemove: () => void;
}

const inputs: { key: keyof SeriesRow; label: string; placeholder?: string }[] = [
  { key: 'id', label: 'id' },
  { key: 'dataset', label: 'dataset' },
  { key: 'entity', label: 'entity', placeholder: 'symbol=AAPL' },
  { key: 'field', label: 'field' },
  { key: 'from', label: 'from', placeholder: 'YYYY-MM-DD' },
  { key: 'to', label: 'to', placeholder: 'YYYY-MM-DD' },
];

export function SeriesFieldset({ row, index, removable, onChange, onRemove }: SeriesFieldsetProps) {
  const n = index + 1;
  return (
    <fieldset class="analyze-series">
      <legend>Series {n}</legend>
      {inputs.map(({ key, label, placeholder }) => (
        <label key={key}>
          Series {n} {label}
          <input
            value={row[key]}
            placeholder={placeholder}
            onInput={(e) => onChange({ [key]: (e.target as HTMLInputElement).value })}
          />
        </label>
      ))}
      {removable && (
        <button type="button" class="secondary" onClick={onRemove}>
          Remove series {n}
        </button>
      )}
    </fieldset>
  );
}
