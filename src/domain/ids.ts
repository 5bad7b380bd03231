import { randomBytes } from 'node:crypto';

/** Random identifiers with a readable type prefix: acc_, wal_, key_, ses_. */
export function newId(prefix: 'acc' | 'wal' | 'key' | 'ses' | 'treq'): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

const processPrefix = randomBytes(6).toString('base64url');
let requestCounter = 0;

/** Request ids: unique per process start plus a counter, cheap enough for every request. */
export function newRequestId(): string {
  requestCounter = (requestCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `req_${processPrefix}${requestCounter.toString(36)}`;
}
