/** Problems: every one counted, the first 20 listed, one ImportError for them all. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ImportError, MAX_PROBLEMS, Problems } from '../../../src/catalog/import/problems.ts';

test('an ImportError lists its problems under the summary, one a line', () => {
  const error = new ImportError('The file does not fit x.', ['a', 'b']);
  assert.equal(error.name, 'ImportError');
  assert.equal(error.message, 'The file does not fit x.\n  a\n  b');
  assert.deepEqual(error.problems, ['a', 'b']);
  assert.equal(new ImportError('Empty.', []).message, 'Empty.');
});

test('no problem throws nothing; more than 20 keeps the first 20 and says so', () => {
  new Problems().throwIfAny();
  const problems = new Problems();
  for (let i = 1; i <= 25; i++) problems.add(`line ${i}: bad`);
  assert.equal(MAX_PROBLEMS, 20);
  assert.equal(problems.count, 25);
  assert.throws(
    () => problems.throwIfAny(),
    (error: ImportError) => {
      assert.equal(error.problems.length, 20);
      assert.equal(error.problems[19], 'line 20: bad');
      assert.match(
        error.message,
        /^25 invalid value\(s\) in the file; nothing was imported \(the first 20 are listed\)\.\n/,
      );
      return true;
    },
  );
  const few = new Problems();
  few.add('line 3: bad');
  assert.throws(() => few.throwIfAny(), {
    message: '1 invalid value(s) in the file; nothing was imported.\n  line 3: bad',
  });
});
