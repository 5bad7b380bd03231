import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyExpiresAt, publicTestEndsAt, publicTestWindowEnd } from '../../src/domain/public-test.ts';
import { account, serviceConfig, T0 } from './support.ts';

const DAY = 86_400_000;

function configEnding(endsAt: string | null) {
  const config = serviceConfig();
  config.pricing.free_public_test.ends_at = endsAt;
  return config;
}

test('the public test ends at ends_at, or never when it is null', () => {
  assert.equal(publicTestEndsAt(configEnding(null)), null);
  assert.equal(publicTestEndsAt(configEnding('2027-01-01T00:00:00Z')), Date.parse('2027-01-01T00:00:00Z'));
});

test("an account's window is 90 days from its start, or ends_at when that is sooner", () => {
  const started = account({ publicTestStartedAt: T0 });
  assert.equal(publicTestWindowEnd(configEnding(null), started), T0 + 90 * DAY);
  assert.equal(
    publicTestWindowEnd(configEnding('2027-01-01T00:00:00Z'), started),
    Date.parse('2027-01-01T00:00:00Z'),
  );
  assert.equal(publicTestWindowEnd(configEnding('2030-01-01T00:00:00Z'), started), T0 + 90 * DAY);
  assert.equal(publicTestWindowEnd(configEnding(null), account()), null);
});

test("a public-test key expires at its own expiry or the test's end, whichever is first; others at their own", () => {
  const end = T0 + 10 * DAY;
  assert.equal(keyExpiresAt({ kind: 'public_test', expiresAt: T0 + 30 * DAY }, end), end);
  assert.equal(keyExpiresAt({ kind: 'public_test', expiresAt: T0 + 5 * DAY }, end), T0 + 5 * DAY);
  assert.equal(keyExpiresAt({ kind: 'public_test', expiresAt: null }, end), end);
  assert.equal(keyExpiresAt({ kind: 'public_test', expiresAt: T0 }, null), T0);
  assert.equal(keyExpiresAt({ kind: 'sandbox', expiresAt: T0 + 30 * DAY }, end), T0 + 30 * DAY);
  assert.equal(keyExpiresAt({ kind: 'live', expiresAt: null }, end), null);
});
