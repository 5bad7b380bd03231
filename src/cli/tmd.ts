/**
 * `tmd`: the operator's command line. It builds the same deps as the server and calls the same domain
 * functions as the admin API (no HTTP), printing the same JSON shapes. Exit codes: 0 done, 1 refused or
 * failed, 2 usage error. The commands are in commands/, one module per group; this module holds the
 * usage, the table that dispatches to them, and how a failure is reported.
 */
import { readFileSync } from 'node:fs';
import { ImportError } from '../catalog/import-file.ts';
import { importers } from '../catalog/importers/registry.ts';
import { ConfigError } from '../config.ts';
import { AppError } from '../errors.ts';
import { packagePath } from '../package-files.ts';
import type { Services } from '../services.ts';
import { CommandFailed, UsageError } from './args.ts';
import { accountCommand, earlyBirdCommand, packageCommand } from './commands/accounts.ts';
import { collectCommand } from './commands/collect.ts';
import type { CommandGroup } from './commands/command.ts';
import { creditCommand, monthlyCreditCommand } from './commands/credits.ts';
import { importCommand } from './commands/import.ts';
import { keyCommand } from './commands/keys.ts';
import { tokenRequestsCommand } from './commands/token-requests.ts';
import type { CliIo } from './io.ts';

export type { CliIo } from './io.ts';

export const usage = `tmd: operator commands for the token-metered data service

Usage:
  tmd account create <email> [--password-stdin]
  tmd account show <account>
  tmd package assign <account> <package>        starter | pro | workbench | partner; credits this month at once
  tmd package clear <account>
  tmd early-bird set <account>                  only accounts created before early_bird.cohort_cutoff
  tmd early-bird clear <account>
  tmd credit <account> <tokens> --idempotency-key <key> [--kind topup|grant|refund|adjustment] [--memo <text>]
  tmd key create <account> [--name <name>] [--expires-at <ISO time>]
  tmd key caps <key-id> [--daily <tokens>|none] [--monthly <tokens>|none]
  tmd monthly-credit                            credit every package's monthly_credits for this month (idempotent)
  tmd import <file> [--format <importer>] [--dataset <domain/name>] [--set <field>=<value>]...
             [--partial] [--dry-run] [--json]     a published format, detected when --format is absent:
             ${importers.map((i) => i.name).join(', ')}
  tmd import <domain/name> <file> [--format csv|ndjson|json] [--map <field>=<column>]... [--map <file.json>]
             [--set <field>=<value>]... [--null <token>]... [--merge | --replace] [--dry-run]

  tmd token-requests                            open token requests (docs/billing.md)
  tmd token-requests credit <request-id>        credit its tokens (once)
  tmd token-requests decline <request-id> --reason <text>
  tmd collect <source> [--since <YYYY-MM-DD>] [--backfill]   one run of a collector now (docs/collectors.md)
  tmd collect --status                          every source: last success, next run, lag, last error

  tmd --version

<account> is an account id (acc_...) or its email. On a terminal the answer is printed for a person; with
--json, or when the output is not a terminal, it is JSON. \`tmd <command> --help\` shows one command. The
environment configures the store as for the server (DATABASE_URL, CONFIG_FILE, CATALOG_FILE, ...).
`;

/** The usage lines of one command (`tmd import --help`), or null for a command there is none of. */
export function commandUsage(command: string): string | null {
  const lines: string[] = [];
  let inCommand = false;
  for (const line of usage.split('\n')) {
    if (line.startsWith('  tmd '))
      inCommand = line.startsWith(`  tmd ${command} `) || line === `  tmd ${command}`;
    else if (!line.startsWith('             ')) inCommand = false;
    if (inCommand) lines.push(line);
  }
  return lines.length === 0
    ? null
    : `Usage:\n${lines.join('\n')}\n\nAdd --json for JSON. \`tmd help\` lists every command.\n`;
}

/** The version of the service this `tmd` belongs to, and the Node it runs on. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as {
    version: string;
  };
  return `tmd ${pkg.version} (node ${process.versions.node})\n`;
}

/** Each command, by its first word: the group reads its sub-command and arguments. */
const commands: Readonly<Record<string, CommandGroup>> = {
  account: accountCommand,
  package: packageCommand,
  'early-bird': earlyBirdCommand,
  credit: creditCommand,
  key: keyCommand,
  'monthly-credit': monthlyCreditCommand,
  import: importCommand,
  'token-requests': tokenRequestsCommand,
  collect: collectCommand,
};

export async function dispatch(deps: Services, cliIo: CliIo, args: string[]): Promise<void> {
  // --json anywhere asks for JSON; `import` reads it itself.
  const json = args.includes('--json');
  const io = json ? { ...cliIo, isTTY: false } : cliIo;
  const argv = args[0] === 'import' ? args : args.filter((a) => a !== '--json');
  const [command, sub, ...rest] = argv;
  const group = command !== undefined && Object.hasOwn(commands, command) ? commands[command] : undefined;
  if (group && (await group({ deps, io, now: () => deps.now() }, sub, rest))) return;
  throw new UsageError(
    command === undefined ? 'no command' : `unknown command: ${[command, sub].filter(Boolean).join(' ')}`,
  );
}

/** Whether the arguments ask for the usage text (no command is a usage error, exit 2). */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.length === 0 || argv[0] === 'help' || argv.includes('--help') || argv.includes('-h');
}

/** The help the arguments ask for: one command's (`tmd import --help`, `tmd help import`), else all. */
export function helpFor(argv: readonly string[]): string {
  const command = argv[0] === 'help' ? argv[1] : argv[0];
  return (command !== undefined && !command.startsWith('-') && commandUsage(command)) || usage;
}

/** The process log of a command: stdout carries its JSON only, so warnings go to stderr. */
export function cliLog(io: CliIo) {
  return {
    info: () => {},
    warn: (msg: string, fields: Record<string, unknown> = {}) =>
      io.stderr(`tmd: warning: ${msg} ${JSON.stringify(fields)}\n`),
    error: (msg: string, fields: Record<string, unknown> = {}) =>
      io.stderr(`tmd: error: ${msg} ${JSON.stringify(fields)}\n`),
  };
}

/** A failed command's one line on stderr, and its exit code: 2 for a usage error, else 1. */
export function reportError(error: unknown, io: CliIo): number {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    io.stderr(`tmd: ${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  if (error instanceof AppError) io.stderr(`tmd: ${error.code}: ${error.message}\n`);
  else if (error instanceof ImportError || error instanceof ConfigError || error instanceof CommandFailed)
    io.stderr(`tmd: ${error.message}\n`);
  else if ((error as NodeJS.ErrnoException).syscall !== undefined)
    // A file that cannot be read (missing, a directory, no permission): the system's message says which.
    io.stderr(`tmd: ${(error as Error).message}\n`);
  else io.stderr(`tmd: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
  return 1;
}
