/** The fields a read returns: none ticked reads them all. */
import type { Dataset } from '../../types.ts';

export interface FieldPickerProps {
  ds: Dataset;
  fields: string[];
  onChange: (fields: string[]) => void;
}

export function FieldPicker({ ds, fields, onChange }: FieldPickerProps) {
  return (
    <fieldset>
      <legend>Fields to read (none ticked: all)</legend>
      <div class="row">
        {ds.fields.map((f) => (
          <label class="inline" key={f.name}>
            <input
              type="checkbox"
              checked={fields.includes(f.name)}
              onChange={(e) =>
                onChange(e.currentTarget.checked ? [...fields, f.name] : fields.filter((x) => x !== f.name))
              }
            />
            {f.name}
          </label>
        ))}
      </div>
    </fieldset>
  );
}
