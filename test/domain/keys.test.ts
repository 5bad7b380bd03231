import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { digestKey, digestsEqual, keyKinds, keyShapes, looksLikeKey, newKey } from '../../src/domain/keys.ts';

test('a new key has its kind prefix, 43 base64url characters, its SHA-256 digest and a display prefix', () => {
  const prefixes = { sandbox: 'tmd_sbx_', public_test: 'tmd_fpt_', live: 'tmd_live_' } as const;
  assert.deepEqual([...keyKinds].sort(), ['live', 'public_test', 'sandbox']);
  for (const kind of keyKinds) {
    const key = newKey(kind);
    const prefix = prefixes[kind];
    assert.ok(key.secret.startsWith(prefix));
    assert.equal(key.secret.length, prefix.length + 43);
    assert.equal(key.digest, createHash('sha256').update(key.secret).digest('hex'));
    assert.equal(key.displayPrefix, `${key.secret.slice(0, prefix.length + 4)}…`);
    assert.equal(looksLikeKey(key.secret), true);
  }
});

test('looksLikeKey refuses unknown prefixes and wrong lengths before any lookup', () => {
  const { secret } = newKey('live');
  assert.equal(looksLikeKey(`${secret}x`), false);
  assert.equal(looksLikeKey(secret.slice(0, -1)), false);
  assert.equal(looksLikeKey(secret.replace('tmd_live_', 'tmd_prod_')), false);
  assert.equal(looksLikeKey(`${secret.slice(0, -1)}!`), false);
});

test('keyShapes finds every key in a text, for masking', () => {
  const a = newKey('sandbox').secret;
  const b = newKey('public_test').secret;
  const text = `first ${a}, then ${b} and tmd_live_short`;
  assert.deepEqual(text.match(keyShapes), [a, b, 'tmd_live_short']);
});

test('digests compare equal only when the same, also across lengths', () => {
  const digest = digestKey('tmd_live_x');
  assert.equal(digest, createHash('sha256').update('tmd_live_x').digest('hex'));
  assert.equal(digestsEqual(digest, digestKey('tmd_live_x')), true);
  assert.equal(digestsEqual(digest, digestKey('tmd_live_y')), false);
  assert.equal(digestsEqual(digest, digest.slice(0, 62)), false);
});
