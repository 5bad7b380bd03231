/** How `tmd` prints an answer: indented JSON for scripts, aligned lines and tables for a person. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type CliIo, humanText, print } from '../../src/cli/io.ts';

function capture(isTTY: boolean): { io: CliIo; out: () => string } {
  let out = '';
  return {
    io: {
      isTTY,
      stdout: (text) => {
        out += text;
      },
      stderr: () => {},
    },
    out: () => out,
  };
}

test('not on a terminal the answer is indented JSON and a newline', () => {
  const { io, out } = capture(false);
  print(io, { id: 'key_1', caps: { daily: null } });
  assert.equal(out(), '{\n  "id": "key_1",\n  "caps": {\n    "daily": null\n  }\n}\n');
});

test('on a terminal keys are aligned, underscores read as spaces, null as "-"', () => {
  const { io, out } = capture(true);
  print(io, { id: 'key_1', expires_at: null, status: 'active' });
  assert.equal(out(), 'id          key_1\nexpires at  -\nstatus      active\n');
});

test('a nested object and a list of objects are indented, the list as a padded table', () => {
  const text = humanText(
    {
      month: '2026-11',
      credited: [
        { account_id: 'acc_1', tokens: '50000' },
        { account_id: 'acc_22', tokens: '5' },
      ],
      caps: { daily: '10', monthly: null },
    },
    '',
  );
  assert.equal(
    text,
    [
      'month     2026-11',
      'credited:',
      '  account_id  tokens',
      '  acc_1       50000',
      '  acc_22      5',
      'caps:',
      '  daily    10',
      '  monthly  -',
    ].join('\n'),
  );
});

test('an empty list reads "(none)", a list of scalars is joined by commas', () => {
  assert.equal(humanText({ data: [] }, ''), 'data  (none)');
  assert.equal(humanText({ tags: ['a', 1, null] }, ''), 'tags  a, 1, -');
  assert.equal(humanText([], '  '), '  (none)');
});
