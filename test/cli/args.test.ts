/** The pieces of a `tmd` command line: a usage error names what is missing or wrong. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { arg, CommandFailed, pairs, parsed, UsageError } from '../../src/cli/args.ts';

test('arg returns the positional, or a usage error naming <name>', () => {
  assert.equal(arg(['acc_1', 'pro'], 1, 'package'), 'pro');
  assert.throws(() => arg(['acc_1'], 1, 'package'), { name: 'UsageError', message: 'missing <package>' });
});

test('pairs splits at the first "=": a value may hold "=" itself', () => {
  assert.deepEqual(pairs(['series_id=DGS10', 'note=a=b', 'empty='], '--set'), {
    series_id: 'DGS10',
    note: 'a=b',
    empty: '',
  });
  assert.deepEqual(pairs([], '--set'), {});
});

test('pairs refuses an item with no field name, naming the flag', () => {
  assert.throws(() => pairs(['=x'], '--map'), {
    name: 'UsageError',
    message: '--map takes <field>=<value>, got "=x"',
  });
  assert.throws(() => pairs(['nofield'], '--set'), { message: '--set takes <field>=<value>, got "nofield"' });
});

test('parsed returns the schema output, or a usage error listing its messages under the name', () => {
  const schema = z
    .string()
    .min(3, 'too short')
    .regex(/^[a-z]+$/, 'lowercase only');
  assert.equal(
    parsed(
      z.string().transform((s) => s.length),
      'four',
      '--name',
    ),
    4,
  );
  assert.throws(() => parsed(schema, 'A', '--name'), {
    name: 'UsageError',
    message: '--name: too short; lowercase only',
  });
});

test('the two errors are told apart by their names (exit 2 and exit 1)', () => {
  assert.equal(new UsageError('x').name, 'UsageError');
  assert.equal(new CommandFailed('x').name, 'CommandFailed');
  assert.ok(!(new CommandFailed('x') instanceof UsageError));
});
