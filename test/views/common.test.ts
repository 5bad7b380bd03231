import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { iso, keyExpiry, label, listOf, tokens } from '../../src/views/common.ts';

test('token amounts are decimal strings with at most six decimals', () => {
  for (const good of ['0', '12', '-3.5', '0.000001'])
    assert.equal(tokens.safeParse(good).success, true, good);
  for (const bad of ['1.0000001', '1e3', '', '.5', '1.'])
    assert.equal(tokens.safeParse(bad).success, false, bad);
});

test('times are ISO 8601 in UTC, and null stays null', () => {
  assert.equal(iso(Date.parse('2026-11-21T15:00:00Z')), '2026-11-21T15:00:00.000Z');
  assert.equal(iso(0), '1970-01-01T00:00:00.000Z');
  assert.equal(iso(null), null);
});

test('a label has a maximum length and no control characters', () => {
  const name = label(5);
  assert.equal(name.safeParse('ab cd').success, true);
  assert.equal(name.safeParse('abcdef').success, false);
  const withNewline = name.safeParse('a\nb');
  assert.equal(withNewline.success, false);
  assert.equal(withNewline.error?.issues[0]?.message, 'must not contain control characters');
});

test('a key expiry needs a zone, and a year before 10000; it may be left out', () => {
  assert.equal(keyExpiry.safeParse('2027-01-01T00:00:00+01:00').success, true);
  assert.equal(keyExpiry.safeParse('2027-01-01T00:00:00Z').success, true);
  assert.equal(keyExpiry.safeParse(undefined).success, true);
  assert.equal(keyExpiry.safeParse('2027-01-01T00:00:00').success, false, 'local time is refused');
  assert.equal(keyExpiry.safeParse('2027-01-01').success, false);
});

test('a list is its items in data and what describes the page in meta', () => {
  const list = listOf(z.object({ id: z.string() }), { next_cursor: z.string().nullable() });
  assert.deepEqual(list.parse({ data: [{ id: 'a' }], meta: { next_cursor: null } }), {
    data: [{ id: 'a' }],
    meta: { next_cursor: null },
  });
  assert.equal(list.safeParse({ data: [{ id: 1 }], meta: { next_cursor: null } }).success, false);
  assert.equal(list.safeParse({ data: [] }).success, false);
});
