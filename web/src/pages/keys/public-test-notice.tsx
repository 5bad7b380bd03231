/** When the public-test key expires, told apart from when the public-test window ends. */
import type { Key } from '../../types.ts';
import { when } from './when.ts';

export interface PublicTestNoticeProps {
  publicTest: Key;
  /** The end of the account's public-test window, if it has one. */
  windowEndsAt: string | null | undefined;
}

export function PublicTestNotice({ publicTest, windowEndsAt }: PublicTestNoticeProps) {
  return (
    <p class="notice">
      Your public-test key <code>{publicTest.prefix}</code> expires{' '}
      <strong data-testid="public-test-expires">{when(publicTest.expires_at)}</strong>.
      {windowEndsAt && (
        <>
          {' '}
          Public-test window: free reads of P0 datasets until{' '}
          <strong data-testid="public-test-window">{when(windowEndsAt)}</strong>.
        </>
      )}
    </p>
  );
}
