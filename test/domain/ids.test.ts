import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId, newRequestId } from '../../src/domain/ids.ts';

test('an id is its prefix and 16 base64url characters, and two are never the same', () => {
  for (const prefix of ['acc', 'wal', 'key', 'ses', 'treq'] as const) {
    assert.match(newId(prefix), new RegExp(`^${prefix}_[A-Za-z0-9_-]{16}$`));
  }
  const ids = new Set(Array.from({ length: 1000 }, () => newId('acc')));
  assert.equal(ids.size, 1000);
});

test('request ids share the process prefix and count up in base 36', () => {
  const first = newRequestId();
  const second = newRequestId();
  assert.match(first, /^req_[A-Za-z0-9_-]{8}[0-9a-z]+$/);
  assert.equal(first.slice(0, 12), second.slice(0, 12));
  assert.equal(Number.parseInt(second.slice(12), 36), Number.parseInt(first.slice(12), 36) + 1);
});
