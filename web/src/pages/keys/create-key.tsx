/** Create a wallet key, named or not; the new key is shown once, to copy. */
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Key } from '../../types.ts';
import { CopyButton } from './copy-button.tsx';

export interface CreateKeyProps {
  onCreated: () => void;
  onError: (e: unknown) => void;
}

export function CreateKey({ onCreated, onError }: CreateKeyProps) {
  const [name, setName] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const [created, setCreated] = useState<(Key & { key: string }) | null>(null);

  const create = async (event: Event) => {
    event.preventDefault();
    onError(null);
    const trimmed = name.trim();
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
    if (trimmed.length > 100 || /[\u0000-\u001f\u007f]/.test(trimmed)) {
      setInvalid('A key name has at most 100 characters and no control characters.');
      return;
    }
    setInvalid(null);
    try {
      const { body } = await api<Key & { key: string }>('/api/v1/keys', {
        method: 'POST',
        body: trimmed ? { name: trimmed } : {},
      });
      setCreated(body);
      setName('');
      onCreated();
    } catch (e) {
      onError(e);
    }
  };

  return (
    <>
      <form class="card row" onSubmit={create} aria-label="Create a wallet key" noValidate>
        <label>
          New key name (optional)
          <input value={name} maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit">Create wallet key</button>
        {invalid && (
          <p class="problem" role="alert">
            {invalid}
          </p>
        )}
      </form>
      {created && <CreatedKey created={created} onDone={() => setCreated(null)} />}
    </>
  );
}

interface CreatedKeyProps {
  created: Key & { key: string };
  onDone: () => void;
}

function CreatedKey({ created, onDone }: CreatedKeyProps) {
  return (
    <section class="success" aria-labelledby="created-title">
      <h2 id="created-title">New key {created.name ? `“${created.name}”` : ''}</h2>
      <p>
        <strong>Copy it now: it is shown once.</strong> Only its digest is stored. It spends your wallet at
        the API price (your tier discount, no Terminal surcharge).
      </p>
      <div class="row">
        <label>
          New key
          <input readOnly value={created.key} size={60} />
        </label>
        <CopyButton text={created.key} label="Copy the new key" />
        <button type="button" class="secondary" onClick={onDone}>
          I have copied it
        </button>
      </div>
    </section>
  );
}
