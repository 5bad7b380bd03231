/** Which credential pays: this Terminal session, or an API key pasted into the page (never stored). */
import type { ReadForm, SetReadField } from './read-query.ts';

export interface ReadAsProps {
  form: ReadForm;
  set: SetReadField;
}

export function ReadAs({ form, set }: ReadAsProps) {
  return (
    <fieldset>
      <legend>Read as</legend>
      <div class="row">
        <label class="inline">
          <input
            type="radio"
            name="read-as"
            checked={form.readAs === 'session'}
            onChange={() => set('readAs', 'session')}
          />
          This Terminal session (Terminal price)
        </label>
        <label class="inline">
          <input
            type="radio"
            name="read-as"
            checked={form.readAs === 'key'}
            onChange={() => set('readAs', 'key')}
          />
          An API key (API price)
        </label>
        {form.readAs === 'key' && (
          <label>
            API key (kept in this page only)
            <input
              type="password"
              autocomplete="off"
              value={form.key}
              onInput={(e) => set('key', e.currentTarget.value)}
            />
          </label>
        )}
      </div>
    </fieldset>
  );
}
