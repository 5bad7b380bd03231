import assert from 'node:assert/strict';
import { test } from 'node:test';
import { issuedKeyOut, keyOut, presentKey } from '../../src/views/keys.ts';
import { keyRecord, T0 } from '../domain/support.ts';

const DAY = 86_400_000;

test('an active key shows its prefix, times and caps as exact token strings, never its digest', () => {
  const key = keyRecord({ name: 'ci', dailyCapMicros: 12_500_000n, monthlyCapMicros: null });
  const view = presentKey(key, T0);
  assert.deepEqual(view, {
    id: 'key_1',
    kind: 'live',
    prefix: 'tmd_live_abcd…',
    name: 'ci',
    created_at: '2026-11-21T15:00:00.000Z',
    expires_at: null,
    revoked_at: null,
    status: 'active',
    spending_caps: { daily: '12.5', monthly: null },
  });
  assert.deepEqual(keyOut.parse(view), view);
  assert.equal(issuedKeyOut.safeParse(view).success, false, 'an issued key carries the key itself');
});

test('a key past its expiry is expired; a revoked key is revoked whatever its expiry', () => {
  const expiring = keyRecord({ kind: 'sandbox', expiresAt: T0 + DAY });
  assert.equal(presentKey(expiring, T0 + DAY - 1).status, 'active');
  assert.equal(presentKey(expiring, T0 + DAY).status, 'expired');
  const revoked = presentKey(keyRecord({ expiresAt: T0 + DAY, revokedAt: T0 }), T0 + 2 * DAY);
  assert.equal(revoked.status, 'revoked');
  assert.equal(revoked.revoked_at, '2026-11-21T15:00:00.000Z');
});

test("a public-test key shows the public test's end when that comes first", () => {
  const key = keyRecord({ kind: 'public_test', expiresAt: T0 + 30 * DAY });
  assert.equal(presentKey(key, T0).expires_at, '2026-12-21T15:00:00.000Z');
  const view = presentKey(key, T0 + DAY, T0 + DAY);
  assert.equal(view.expires_at, '2026-11-22T15:00:00.000Z');
  assert.equal(view.status, 'expired');
});
