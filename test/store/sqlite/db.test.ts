/** SqliteDb's statement cache: bounded, least recently used dropped first, objects and arrays apart. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SqliteDb } from '../../../src/store/sqlite/db.ts';

test('the statement cache keeps 256 statements and drops the least recently used', () => {
  const db = new SqliteDb(':memory:');
  const kept = db.stmt('SELECT 1 AS n');
  const first = db.stmt('SELECT 2 AS n');
  let newest = first;
  for (let i = 3; i <= 300; i++) {
    newest = db.stmt(`SELECT ${i} AS n`);
    // Used all along: never the least recently used.
    assert.equal(db.stmt('SELECT 1 AS n'), kept);
  }
  assert.equal(db.cachedStatements, 256);
  assert.equal(db.stmt('SELECT 300 AS n'), newest);
  // The oldest of the rest was dropped: it is prepared anew.
  assert.notEqual(db.stmt('SELECT 2 AS n'), first);
  assert.equal(db.cachedStatements, 256);
});

test('one SQL as objects and as arrays is two statements, each returning its shape', () => {
  const db = new SqliteDb(':memory:');
  const sql = 'SELECT 1 AS n, 2 AS m';
  assert.deepEqual(db.stmt(sql, true).get(), [1, 2]);
  assert.deepEqual({ ...db.stmt(sql).get() }, { n: 1n, m: 2n });
  assert.notEqual(db.stmt(sql), db.stmt(sql, true));
  assert.equal(db.cachedStatements, 2);
});
