/** CursorCodec: cursors encoded again come from its cache, and stay bound to query and position. */
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { CursorCodec } from '../../src/catalog/read-plan.ts';

function macOf(secret: Buffer, cursor: string, fingerprint: string): string {
  const [payload] = cursor.split('.') as [string];
  return createHmac('sha256', secret)
    .update(`${payload}\n${fingerprint}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

test('a cursor encoded again is the same string, and each query and position keeps its own', () => {
  const secret = randomBytes(32);
  const codec = new CursorCodec(secret);
  const at = { t: '2026-11-25', id: 7 };
  const first = codec.encode('["a/b",{}]', at);
  assert.equal(codec.encode('["a/b",{}]', { ...at }), first);
  const otherQuery = codec.encode('["a/c",{}]', at);
  const otherRow = codec.encode('["a/b",{}]', { t: '2026-11-25', id: 8 });
  const otherTime = codec.encode('["a/b",{}]', { t: '2026-11-24', id: 7 });
  assert.equal(new Set([first, otherQuery, otherRow, otherTime]).size, 4);
  for (const [cursor, fingerprint] of [
    [first, '["a/b",{}]'],
    [otherQuery, '["a/c",{}]'],
    [otherRow, '["a/b",{}]'],
  ] as const) {
    assert.equal(cursor.split('.')[1], macOf(secret, cursor, fingerprint));
  }
  assert.deepEqual(codec.decode(otherTime, '["a/b",{}]'), { t: '2026-11-24', id: 7 });
  assert.throws(() => codec.decode(first, '["a/c",{}]'), /not valid/);
});

test('cursors past the cache, and of long fingerprints, are still signed for their query', () => {
  const secret = randomBytes(32);
  const codec = new CursorCodec(secret);
  const long = `["a/b",{"symbol":["${'X'.repeat(400)}"]}]`;
  for (let id = 0; id < 1100; id++) {
    const fingerprint = id % 2 === 0 ? long : '["a/b",{}]';
    const cursor = codec.encode(fingerprint, { t: '2026-01-01', id });
    assert.deepEqual(codec.decode(cursor, fingerprint), { t: '2026-01-01', id });
  }
  const again = codec.encode(long, { t: '2026-01-01', id: 2 });
  assert.equal(again.split('.')[1], macOf(secret, again, long));
});
