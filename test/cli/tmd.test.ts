/**
 * The `tmd` dispatcher without a service: the usage per command, the table that finds a command, and
 * how each kind of failure ends (its line on stderr and its exit code).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ImportError } from '../../src/catalog/import-file.ts';
import { CommandFailed, UsageError } from '../../src/cli/args.ts';
import {
  type CliIo,
  cliLog,
  commandUsage,
  dispatch,
  helpFor,
  reportError,
  usage,
  wantsHelp,
} from '../../src/cli/tmd.ts';
import type { MonthlyCreditRun } from '../../src/domain/packages.ts';
import { AppError } from '../../src/errors.ts';
import type { Services } from '../../src/services.ts';

function capture(isTTY = false): { io: CliIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    io: {
      isTTY,
      stdout: (text) => {
        out += text;
      },
      stderr: (text) => {
        err += text;
      },
    },
    out: () => out,
    err: () => err,
  };
}

const run: MonthlyCreditRun = {
  month: '2026-11',
  credited: [{ accountId: 'acc_1', packageId: 'pro', tokens: '50000', entryId: 'ent_7' }],
  alreadyCredited: 2,
};
let runs = 0;
// Only what `tmd monthly-credit` reaches; the other commands are never run here.
const deps = {
  now: () => 0,
  operator: {
    runMonthlyCredits: async () => {
      runs++;
      return run;
    },
  },
} as unknown as Services;

test('commandUsage gives the lines of one command, continuation lines included', () => {
  assert.equal(
    commandUsage('key'),
    'Usage:\n' +
      '  tmd key create <account> [--name <name>] [--expires-at <ISO time>]\n' +
      '  tmd key caps <key-id> [--daily <tokens>|none] [--monthly <tokens>|none]\n' +
      '\nAdd --json for JSON. `tmd help` lists every command.\n',
  );
  const importUsage = commandUsage('import') ?? '';
  assert.equal(importUsage.split('\n').filter((l) => l.startsWith('  tmd import ')).length, 2);
  assert.match(importUsage, /\n {13}\[--partial\] \[--dry-run\] \[--json\]/);
  assert.equal(commandUsage('nothing'), null);
  assert.equal(commandUsage('token'), null);
});

test('help: one command when it is named and known, else the whole usage', () => {
  assert.equal(helpFor(['help', 'credit']), commandUsage('credit'));
  assert.equal(helpFor(['early-bird', '--help']), commandUsage('early-bird'));
  assert.equal(helpFor(['--help']), usage);
  assert.equal(helpFor(['nothing', '-h']), usage);
  assert.equal(wantsHelp([]), true);
  assert.equal(wantsHelp(['help']), true);
  assert.equal(wantsHelp(['key', 'create', '-h']), true);
  assert.equal(wantsHelp(['key', 'create', 'acc_1']), false);
});

test('an unknown command or sub-command is a usage error naming it', async () => {
  for (const [argv, message] of [
    [[], 'no command'],
    [['frob'], 'unknown command: frob'],
    [['account', 'frob'], 'unknown command: account frob'],
    [['key'], 'unknown command: key'],
    [['package', 'show', 'acc_1'], 'unknown command: package show'],
    // Names a plain object carries are not commands.
    [['constructor'], 'unknown command: constructor'],
    [['toString', 'x'], 'unknown command: toString x'],
  ] as const) {
    await assert.rejects(dispatch(deps, capture().io, [...argv]), (error: unknown) => {
      assert.ok(error instanceof UsageError);
      assert.equal(error.message, message);
      return true;
    });
  }
});

test('a known command runs once and prints its answer: JSON off a terminal, --json on one', async () => {
  runs = 0;
  const piped = capture(false);
  await dispatch(deps, piped.io, ['monthly-credit']);
  const json =
    '{\n  "month": "2026-11",\n  "credited": [\n    {\n      "account_id": "acc_1",\n      "package": "pro",\n' +
    '      "tokens": "50000",\n      "entry_id": "ent_7"\n    }\n  ],\n  "already_credited": 2\n}\n';
  assert.equal(piped.out(), json);
  const asked = capture(true);
  await dispatch(deps, asked.io, ['monthly-credit', '--json']);
  assert.equal(asked.out(), json);
  const person = capture(true);
  await dispatch(deps, person.io, ['monthly-credit']);
  assert.equal(
    person.out(),
    'month             2026-11\n' +
      'credited:\n' +
      '  account_id  package  tokens  entry_id\n' +
      '  acc_1       pro      50000   ent_7\n' +
      'already credited  2\n',
  );
  assert.equal(runs, 3);
});

test('reportError: a usage error exits 2 with the usage; the rest exit 1 with one line', () => {
  const cases: [unknown, number, string][] = [
    [new UsageError('missing <file>'), 2, `tmd: missing <file>\n\n${usage}`],
    [
      Object.assign(new Error("Unknown option '--nope'"), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' }),
      2,
      `tmd: Unknown option '--nope'\n\n${usage}`,
    ],
    [new AppError('not_found', 'No account acc_9.'), 1, 'tmd: not_found: No account acc_9.\n'],
    [new ImportError('The file holds no rows.', []), 1, 'tmd: The file holds no rows.\n'],
    [new CommandFailed('fred: the run failed: timeout'), 1, 'tmd: fred: the run failed: timeout\n'],
    [
      Object.assign(new Error("ENOENT: no such file or directory, open 'x.csv'"), { syscall: 'open' }),
      1,
      "tmd: ENOENT: no such file or directory, open 'x.csv'\n",
    ],
  ];
  for (const [error, code, stderr] of cases) {
    const { io, err, out } = capture();
    assert.equal(reportError(error, io), code);
    assert.equal(err(), stderr);
    assert.equal(out(), '');
  }
  const { io, err } = capture();
  assert.equal(reportError(new TypeError('boom'), io), 1);
  assert.match(err(), /^tmd: unexpected error: TypeError: boom\n {4}at /);
});

test('the process log writes warnings and errors to stderr only', () => {
  const { io, out, err } = capture();
  const log = cliLog(io);
  log.info();
  log.warn('slow store', { ms: 900 });
  log.error('gone');
  assert.equal(out(), '');
  assert.equal(err(), 'tmd: warning: slow store {"ms":900}\ntmd: error: gone {}\n');
});
