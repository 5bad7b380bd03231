/** Who is calling, as authentication found it. Transports build it; the domain only reads it. */
import type { AccountRecord, KeyRecord, WalletRecord } from '../store/port.ts';
import type { CredentialKind } from './credential-kinds.ts';
import { credentialKinds } from './credential-kinds.ts';
import type { Channel } from './pricing.ts';

export type { CredentialKind };

export interface Caller {
  kind: CredentialKind;
  key: KeyRecord | null;
  account: AccountRecord | null;
  /** The wallet as it was when the request was authenticated (balance used only for a fast refusal). */
  wallet: WalletRecord;
  channel: Channel;
  /** When the credential stops working (ms), null for no expiry. */
  expiresAt: number | null;
  /** Set for session callers, so logout can end the session. */
  sessionId?: string;
}

/** Keys that may only make P0 reads and never burn beyond their own grant (spec 5, DECISIONS). */
export function isFreeCredential(caller: Caller): boolean {
  return credentialKinds[caller.kind].p0Only;
}
