/** The read parameters, the price before the read, and the Read button (not offered when refused). */
import type { Dataset, Estimate } from '../../types.ts';
import { FieldPicker } from './field-picker.tsx';
import { PriceBefore } from './price-before.tsx';
import { ReadAs } from './read-as.tsx';
import { ReadFilters } from './read-filters.tsx';
import type { ReadForm as Form, SetReadField } from './read-query.ts';

export interface ReadFormProps {
  ds: Dataset;
  form: Form;
  set: SetReadField;
  suggestions: string[];
  estimate: Estimate | null;
  estimateError: unknown;
  /** What is wrong with the input, found before anything is sent. */
  invalid: string | null;
  busy: boolean;
  onRead: () => void;
}

export function ReadForm(props: ReadFormProps) {
  const { ds, form, set, estimate } = props;
  return (
    <form
      class="card"
      aria-label="Read parameters"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        props.onRead();
      }}
    >
      <ReadFilters ds={ds} form={form} set={set} suggestions={props.suggestions} />
      <FieldPicker ds={ds} fields={form.fields} onChange={(fields) => set('fields', fields)} />
      <ReadAs form={form} set={set} />
      <PriceBefore estimate={estimate} error={props.estimateError} />
      {props.invalid && (
        <p class="problem" role="alert">
          {props.invalid}
        </p>
      )}
      {/* A read the price says would be refused is not offered: the reason and the way out are above. */}
      <button type="submit" disabled={props.busy || Boolean(estimate?.would_refuse)}>
        {estimate ? `Read (${estimate.token_cost} tokens)` : 'Read'}
      </button>
    </form>
  );
}
