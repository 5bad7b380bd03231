/** Revoke a key or a connection, after a confirmation; nothing for one no longer active. */
import type { Key } from '../../types.ts';

export interface RevokeControlProps {
  credential: Pick<Key, 'id' | 'status'>;
  /** How the credential is named in the button's accessible name: "Revoke <label>". */
  label: string;
  /** Whether this credential's confirmation is open. */
  confirming: boolean;
  onConfirm: (open: boolean) => void;
  onRevoke: () => void;
}

export function RevokeControl({ credential, label, confirming, onConfirm, onRevoke }: RevokeControlProps) {
  if (credential.status !== 'active') return null;
  if (confirming) {
    return (
      <span>
        Revoke for good?{' '}
        <button type="button" class="danger" onClick={onRevoke}>
          Yes, revoke
        </button>{' '}
        <button type="button" class="secondary" onClick={() => onConfirm(false)}>
          Cancel
        </button>
      </span>
    );
  }
  return (
    <button type="button" class="secondary" aria-label={`Revoke ${label}`} onClick={() => onConfirm(true)}>
      Revoke
    </button>
  );
}
