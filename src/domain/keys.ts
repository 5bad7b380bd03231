/** Key strings: `tmd_<kind>_` plus 32 random bytes in base64url. Only a SHA-256 digest is stored. */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

import { type KeyKind, keyKinds } from '../store/port.ts';

export { type KeyKind, keyKinds };

const prefixByKind: Record<KeyKind, string> = {
  sandbox: 'tmd_sbx_',
  public_test: 'tmd_fpt_',
  live: 'tmd_live_',
};
const prefixes = Object.values(prefixByKind).join('|');
const keyPattern = new RegExp(`^(${prefixes})[A-Za-z0-9_-]{43}$`);

/** Anything shaped like a key of any kind, for masking in logs: the prefix is kept, the rest hidden. */
export const keyShapes = new RegExp(`(${prefixes})[A-Za-z0-9_-]*`, 'g');

export interface NewKey {
  secret: string;
  digest: string;
  /** Shown in listings so a user can tell keys apart; never enough to use the key. */
  displayPrefix: string;
}

export function newKey(kind: KeyKind): NewKey {
  const secret = `${prefixByKind[kind]}${randomBytes(32).toString('base64url')}`;
  return {
    secret,
    digest: digestKey(secret),
    displayPrefix: `${secret.slice(0, prefixByKind[kind].length + 4)}…`,
  };
}

/** Rejects junk before any store lookup; a well-formed key still has to match a stored digest. */
export function looksLikeKey(candidate: string): boolean {
  return keyPattern.test(candidate);
}

export function digestKey(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
