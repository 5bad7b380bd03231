import { randomBytes } from 'node:crypto';

/** Random identifiers with a readable type prefix: acc_, wal_, key_, ses_. */
export function newId(prefix: 'acc' | 'wal' | 'key' | 'ses' | 'req'): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
