/** The low-balance notice: the threshold now, and a new one (empty for none). */
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { refreshMe } from '../../session.ts';

export interface LowBalanceFormProps {
  /** The threshold now, in tokens (null: none). */
  current: string | null | undefined;
  onError: (e: unknown) => void;
}

export function LowBalanceForm({ current, onError }: LowBalanceFormProps) {
  const [threshold, setThreshold] = useState('');
  return (
    <form
      class="row"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          const tokens = threshold.trim() === '' ? null : threshold.trim();
          await api('/api/v1/me/low-balance', { method: 'PUT', body: { tokens } });
          setThreshold('');
          await refreshMe();
        } catch (caught) {
          onError(caught);
        }
      }}
    >
      <label>
        {current ? `Below ${current} tokens` : 'None'}; new threshold (tokens, empty for none)
        <input
          inputMode="decimal"
          value={threshold}
          onInput={(e) => setThreshold((e.target as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" class="secondary">
        Save
      </button>
    </form>
  );
}
