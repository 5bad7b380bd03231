/**
 * The system/* datasets made from the service's records are paged like stored rows: each row's id comes
 * from its natural key, so a next page follows the rows of the page before it even when the list is
 * made again, in another order, with rows added, for that next read.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Row } from '../../src/catalog/types.ts';
import { pageOfRecords } from '../../src/domain/system-datasets.ts';

const usage = (endpoint: string, requests: number): Row => ({
  hour: '2026-11-21T15:00:00Z',
  endpoint,
  method: 'GET',
  requests,
});

test('a next page neither repeats nor skips rows when the list is made again in another order', () => {
  const first = [usage('a/one', 1), usage('b/two', 1), usage('c/three', 1), usage('d/four', 1)];
  const query = { dataset: 'system/api-usage', filters: {}, descending: false, limit: 2 };
  const page1 = pageOfRecords(first, 'hour', query);
  const last = page1.at(-1);
  assert.ok(last);
  // The next read makes the list again: another group first, counts changed, the order changed.
  const again = [usage('e/new', 1), ...first.map((r) => ({ ...r, requests: 2 })).reverse()];
  const page2 = pageOfRecords(again, 'hour', { ...query, limit: 10, after: { t: last.t, id: last.id } });
  const seen = [...page1, ...page2].map((r) => (JSON.parse(r.json) as Row).endpoint);
  assert.equal(new Set(seen).size, seen.length, `no row twice: ${seen.join(', ')}`);
  for (const endpoint of ['a/one', 'b/two', 'c/three', 'd/four'])
    assert.ok(seen.includes(endpoint), endpoint);
});

test("a row's id is the same whatever its figures and its place in the list", () => {
  const [one] = pageOfRecords([usage('a/one', 1), usage('b/two', 1)], 'hour', {
    dataset: 'system/api-usage',
    filters: { endpoint: ['a/one'] },
    descending: false,
    limit: 1,
  });
  const [same] = pageOfRecords([usage('z/other', 9), usage('a/one', 7)], 'hour', {
    dataset: 'system/api-usage',
    filters: { endpoint: ['a/one'] },
    descending: false,
    limit: 1,
  });
  assert.equal(one?.id, same?.id);
  assert.ok(Number.isSafeInteger(one?.id) && (one?.id ?? 0) > 0);
});
