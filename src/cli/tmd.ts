/**
 * `tmd`: the operator's command line. It builds the same deps as the server and calls the same domain
 * functions as the admin API (no HTTP), printing the same JSON shapes. Exit codes: 0 done, 1 refused or
 * failed, 2 usage error.
 */
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { parseArgs } from 'node:util';
import {
  CsvRowStream,
  ImportError,
  type ImportFormat,
  importFormats,
  parseImport,
  parseMapFile,
} from '../catalog/import-file.ts';
import { importers } from '../catalog/importers/registry.ts';
import { ConfigError } from '../config.ts';
import type { ImportSummary } from '../domain/imports.ts';
import { formatMicros } from '../domain/money.ts';
import {
  capAmount,
  creditKinds,
  type ImportedRows,
  newAccountInput,
  type Operator,
  type OperatorCreditKind,
  tokenAmount,
} from '../domain/operator.ts';
import { AppError } from '../errors.ts';
import { packagePath } from '../package-files.ts';
import type { Services } from '../services.ts';
import { presentAccountView } from '../views/accounts.ts';
import { presentTokenRequest } from '../views/billing.ts';
import { presentCollectionRun, presentCollectorStatus } from '../views/collectors.ts';
import { keyExpiry, label } from '../views/common.ts';
import { presentKey } from '../views/keys.ts';
import { presentLedgerEntry, presentMonthlyCreditRun } from '../views/ledger.ts';

/** A file's text; bytes that are not UTF-8 refuse the import rather than turning into U+FFFD. */
function readUtf8(file: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(file));
  } catch (error) {
    if (error instanceof TypeError) {
      throw new ImportError(
        `${file} is not UTF-8 text; convert it first (e.g. iconv -f latin1 -t utf-8).`,
        [],
      );
    }
    throw error;
  }
}

export interface CliIo {
  /** The environment to configure from; process.env (read by config.ts) when absent. */
  env?: Record<string, string | undefined>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Standard output is a terminal: answers are printed for a person unless --json is given. */
  isTTY?: boolean;
  /** Standard error is a terminal: a long import shows its progress there. */
  progress?: boolean;
  /** All of standard input, for --password-stdin. */
  readStdin?: () => Promise<string>;
  now?: () => number;
}

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

class UsageError extends Error {
  override name = 'UsageError';
}

/** A command that did its work and reported it, but whose work failed (exit 1). */
class CommandFailed extends Error {
  override name = 'CommandFailed';
}

/** The answer: JSON for scripts (--json, or not a terminal), else a few aligned lines for a person. */
const print = (io: CliIo, value: unknown) =>
  io.stdout(io.isTTY ? `${humanText(value, '')}\n` : `${JSON.stringify(value, null, 2)}\n`);

const scalarText = (value: unknown) =>
  value === null || value === undefined
    ? '-'
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value);
const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A list of objects as a table: a header of their keys, one line each, columns padded. */
function table(items: readonly Record<string, unknown>[], indent: string): string {
  const keys = [...new Set(items.flatMap((item) => Object.keys(item)))];
  const cells = [keys, ...items.map((item) => keys.map((k) => scalarText(item[k])))];
  const widths = keys.map((_, i) => Math.max(...cells.map((row) => (row[i] as string).length)));
  return cells
    .map(
      (row) =>
        indent +
        row
          .map((c, i) => c.padEnd(widths[i] as number))
          .join('  ')
          .trimEnd(),
    )
    .join('\n');
}

function humanText(value: unknown, indent: string): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return `${indent}(none)`;
    if (value.every(isRecord)) return table(value, indent);
    return indent + value.map(scalarText).join(', ');
  }
  if (!isRecord(value)) return indent + scalarText(value);
  const width = Math.max(0, ...Object.keys(value).map((k) => k.length));
  return Object.entries(value)
    .map(([key, item]) => {
      const name = `${indent}${key.replaceAll('_', ' ')}`;
      if (isRecord(item) || (Array.isArray(item) && item.length > 0 && item.every(isRecord)))
        return `${name}:\n${humanText(item, `${indent}  `)}`;
      return `${name.padEnd(indent.length + width)}  ${humanText(item, '').trimStart()}`;
    })
    .join('\n');
}

/** `read 250000 rows, 41000 rows/s, 6.1 s` on one line of the terminal, rewritten as it goes. */
function progressLine(io: CliIo, started: number) {
  return ({ rows, bytes }: { rows: number; bytes: number }) => {
    const seconds = (performance.now() - started) / 1000;
    const rate = seconds > 0 ? Math.round(rows / seconds) : 0;
    io.stderr(
      `\rtmd: read ${rows.toLocaleString('en')} rows (${(bytes / 1e6).toFixed(1)} MB), ${rate.toLocaleString('en')} rows/s, ${seconds.toFixed(1)} s`,
    );
  };
}

function arg(positionals: readonly string[], index: number, name: string): string {
  const value = positionals[index];
  if (value === undefined) throw new UsageError(`missing <${name}>`);
  return value;
}

function parsed<T>(
  schema: {
    safeParse(
      v: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { message: string }[] } };
  },
  value: unknown,
  name: string,
): T {
  const result = schema.safeParse(value);
  if (!result.success)
    throw new UsageError(`${name}: ${result.error.issues.map((i) => i.message).join('; ')}`);
  return result.data;
}

/** `field=value` pairs into an object; a value may itself hold '='. */
function pairs(list: readonly string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`${flag} takes <field>=<value>, got "${item}"`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

function formatOf(file: string, given: string | undefined): ImportFormat {
  if (given !== undefined) {
    if (!(importFormats as readonly string[]).includes(given))
      throw new UsageError(`--format must be one of ${importFormats.join(', ')}`);
    return given as ImportFormat;
  }
  const ext = extname(file).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.ndjson' || ext === '.jsonl') return 'ndjson';
  if (ext === '.json') return 'json';
  throw new UsageError(`cannot tell the format of ${file} from its extension: pass --format csv|ndjson|json`);
}

/** The summary of a named import: a few lines for a person, or the JSON with --json. */
function printImport(io: CliIo, summary: ImportSummary, json: boolean, dryRun: boolean): void {
  const out = {
    dataset: summary.dataset,
    format: summary.format,
    file: summary.fileName,
    sha256: summary.sha256,
    read: summary.read,
    imported: summary.imported,
    replaced: summary.replaced,
    rejected: summary.rejected,
    duplicates: summary.duplicates,
    rejections: summary.rejections.map((r) => ({ where: r.where, reason: r.reason })),
    dry_run: dryRun,
    import_id: summary.run?.id ?? null,
    licence: summary.run?.licence ?? null,
    attribution: summary.run?.attribution ?? null,
  };
  if (json) {
    print(io, out);
    return;
  }
  const lines = [
    `${dryRun ? 'checked (dry run, nothing loaded)' : 'imported'} ${summary.fileName} (${summary.format}) into ${summary.dataset}`,
    `  read ${summary.read}, imported ${summary.imported}, replaced ${summary.replaced}, rejected ${summary.rejected}${summary.duplicates ? `, duplicates ${summary.duplicates}` : ''}`,
    `  sha256 ${summary.sha256}`,
  ];
  if (summary.run) {
    lines.push(`  import ${summary.run.id}; licence: ${summary.run.licence}`);
    if (summary.run.attribution) lines.push(`  attribution: ${summary.run.attribution}`);
  }
  if (summary.rejections.length > 0) {
    lines.push(
      `  rejected${summary.rejected > summary.rejections.length ? ` (the first ${summary.rejections.length})` : ''}:`,
    );
    for (const r of summary.rejections) lines.push(`    ${r.where}: ${r.reason}`);
  }
  io.stdout(`${lines.join('\n')}\n`);
}

/** The SHA-256 of a file, read as a stream (a large CSV is never held whole). */
async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function runImport(deps: Services, operator: Operator, io: CliIo, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      format: { type: 'string' },
      dataset: { type: 'string' },
      map: { type: 'string', multiple: true, default: [] },
      set: { type: 'string', multiple: true, default: [] },
      null: { type: 'string', multiple: true, default: [] },
      merge: { type: 'boolean', default: false },
      replace: { type: 'boolean', default: false },
      partial: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
    },
  });
  // A published format (one file, a named importer) unless the generic form's two positionals are given.
  const generic =
    (importFormats as readonly string[]).includes(values.format ?? '') || positionals.length > 1;
  if (!generic) {
    if (values.format !== undefined && !importers.some((i) => i.name === values.format))
      throw new UsageError(
        `--format must be an importer (${importers.map((i) => i.name).join(', ')}) or, with <domain/name> <file>, one of ${importFormats.join(', ')}`,
      );
    const file = arg(positionals, 0, 'file');
    const summary = await deps.imports.importFile({
      bytes: readFileSync(file),
      fileName: basename(file),
      ...(values.format === undefined ? {} : { format: values.format }),
      ...(values.dataset === undefined ? {} : { dataset: values.dataset }),
      set: pairs(values.set, '--set'),
      partial: values.partial,
      dryRun: values['dry-run'],
    });
    printImport(io, summary, values.json || !io.isTTY, values['dry-run']);
    return;
  }
  const key = arg(positionals, 0, 'domain/name');
  const file = arg(positionals, 1, 'file');
  const entry = deps.catalog.resolve(key);
  if (!entry) {
    const suggestions = deps.catalog.suggest(key);
    throw new AppError(
      'dataset_not_found',
      `No dataset "${key}".${suggestions.length ? ` Did you mean ${suggestions.join(', ')}?` : ''}`,
    );
  }
  const map: Record<string, string> = {};
  for (const item of values.map) {
    // A mapping file, or one field=column pair.
    if (!item.includes('=') && /\.json$/i.test(item))
      Object.assign(map, parseMapFile(readFileSync(item, 'utf8'), item));
    else Object.assign(map, pairs([item], '--map'));
  }
  const format = formatOf(file, values.format);
  const set = pairs(values.set, '--set');
  if (values.merge && values.replace) throw new UsageError('--merge and --replace do not go together');
  const mode = values.replace ? 'replace' : values.merge ? 'merge' : 'upsert';
  const imported = { name: basename(file), sha256: await fileSha256(file), format };
  const started = performance.now();
  let read: { rows: number; sources: Record<string, string | null>; ignoredColumns: string[] };
  let loaded: ImportedRows | null = null;
  if (format === 'csv') {
    // Read as a stream and loaded batch by batch as it is parsed, in one transaction: neither the
    // file nor its rows are held whole. NDJSON and JSON are read whole.
    const input = createReadStream(file);
    const csv = new CsvRowStream(entry.dataset, input, {
      name: file,
      map,
      set,
      nullTokens: values.null,
      ...(io.progress ? { onProgress: progressLine(io, started) } : {}),
    });
    try {
      if (values['dry-run']) {
        for await (const _batch of csv.batches()) {
          // A dry run reads and checks every row, and loads none.
        }
      } else {
        loaded = await operator.importRows(key, csv.batches(), { mode, file: imported });
      }
    } finally {
      input.destroy();
      if (io.progress) io.stderr('\n');
    }
    read = csv;
  } else {
    const parsed = parseImport(entry.dataset, readUtf8(file), { format, map, set, nullTokens: values.null });
    read = { rows: parsed.rows.length, sources: parsed.sources, ignoredColumns: parsed.ignoredColumns };
    if (!values['dry-run']) loaded = await operator.importRows(key, parsed.rows, { mode, file: imported });
  }
  const summary = {
    dataset: entry.dataset.key,
    file,
    rows: read.rows,
    fields: read.sources,
    ignored_columns: read.ignoredColumns,
  };
  if (loaded === null) {
    print(io, { ...summary, dry_run: true, loaded: false });
    return;
  }
  if (io.progress)
    io.stderr(
      `tmd: loaded ${loaded.rows.toLocaleString('en')} rows in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
  print(io, {
    ...summary,
    loaded: true,
    mode,
    ...(mode === 'upsert'
      ? {
          imported_rows: loaded.inserted ?? 0,
          replaced_rows: loaded.replaced ?? 0,
          import_id: loaded.importId,
        }
      : {}),
    ...(mode === 'merge' ? { kept_rows: loaded.kept } : {}),
    total_rows: loaded.rows,
  });
}

export async function dispatch(deps: Services, cliIo: CliIo, args: string[]): Promise<void> {
  const { operator } = deps;
  // --json anywhere asks for JSON; `import` reads it itself.
  const json = args.includes('--json');
  const io = json ? { ...cliIo, isTTY: false } : cliIo;
  const argv = args[0] === 'import' ? args : args.filter((a) => a !== '--json');
  const [command, sub, ...rest] = argv;
  const now = () => deps.now();
  switch (command) {
    case 'account': {
      if (sub === 'create') {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: { 'password-stdin': { type: 'boolean', default: false } },
        });
        let password: string | undefined;
        if (values['password-stdin']) {
          if (!io.readStdin) throw new UsageError('--password-stdin: no standard input');
          password = (await io.readStdin()).replace(/\r?\n$/, '');
        }
        const input = parsed(
          newAccountInput,
          { email: arg(positionals, 0, 'email'), ...(password === undefined ? {} : { password }) },
          'account',
        );
        const account = await operator.createAccount(input);
        print(io, presentAccountView(deps.config, await operator.view(account), now()));
        return;
      }
      if (sub === 'show') {
        const account = await operator.findAccount(arg(rest, 0, 'account'));
        print(io, presentAccountView(deps.config, await operator.view(account), now()));
        return;
      }
      break;
    }
    case 'package': {
      if (sub === 'assign' || sub === 'clear') {
        const ref = arg(rest, 0, 'account');
        const packageId = sub === 'assign' ? arg(rest, 1, 'package') : null;
        const { account, monthlyCredit } = await operator.assignPackage(ref, packageId);
        print(io, {
          account: presentAccountView(deps.config, await operator.view(account), now()),
          monthly_credit: monthlyCredit
            ? { ...presentLedgerEntry(monthlyCredit.entry), duplicate: monthlyCredit.duplicate }
            : null,
        });
        return;
      }
      break;
    }
    case 'early-bird': {
      if (sub === 'set' || sub === 'clear') {
        const account = await operator.setEarlyBird(arg(rest, 0, 'account'), sub === 'set');
        print(io, presentAccountView(deps.config, await operator.view(account), now()));
        return;
      }
      break;
    }
    case 'credit': {
      const { values, positionals } = parseArgs({
        args: sub === undefined ? rest : [sub, ...rest],
        allowPositionals: true,
        options: {
          'idempotency-key': { type: 'string' },
          kind: { type: 'string', default: 'topup' },
          memo: { type: 'string' },
        },
      });
      const ref = arg(positionals, 0, 'account');
      const amountMicros = parsed(tokenAmount, arg(positionals, 1, 'tokens'), '<tokens>');
      const idempotencyKey = values['idempotency-key'];
      if (!idempotencyKey)
        throw new UsageError('--idempotency-key is required: a credit is applied once per key');
      if (!(creditKinds as readonly string[]).includes(values.kind))
        throw new UsageError(`--kind must be one of ${creditKinds.join(', ')}`);
      const outcome = await operator.creditTokens(ref, {
        amountMicros,
        idempotencyKey,
        kind: values.kind as OperatorCreditKind,
        ...(values.memo === undefined ? {} : { memo: parsed(label(200), values.memo, '--memo') }),
        actor: 'cli',
      });
      print(io, {
        entry: presentLedgerEntry(outcome.entry),
        balance: formatMicros(outcome.balanceMicros),
        replayed: outcome.duplicate,
      });
      return;
    }
    case 'key': {
      if (sub === 'create') {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: { name: { type: 'string' }, 'expires-at': { type: 'string' } },
        });
        const expires = values['expires-at'];
        // The API's rules: an ISO 8601 time with its zone (Z or an offset), never the local time; a
        // name of 1 to 100 characters without control characters.
        if (expires !== undefined && !keyExpiry.safeParse(expires).success)
          throw new UsageError(
            '--expires-at must be an ISO 8601 time with Z or an offset, e.g. 2027-01-01T00:00:00Z',
          );
        const expiresAt = expires === undefined ? null : Date.parse(expires);
        const name = values.name === undefined ? null : parsed(label(100).min(1), values.name, '--name');
        const issued = await operator.createKey(arg(positionals, 0, 'account'), name, expiresAt);
        print(io, { ...presentKey(issued.record, now()), key: issued.secret });
        return;
      }
      if (sub === 'caps') {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: { daily: { type: 'string' }, monthly: { type: 'string' } },
        });
        const keyId = arg(positionals, 0, 'key-id');
        // A cap not given keeps its stored value.
        const cap = (given: string | undefined, flag: string) =>
          given === undefined ? undefined : given === 'none' ? null : parsed(capAmount, given, flag);
        const key = await operator.setKeyCaps(keyId, {
          dailyCapMicros: cap(values.daily, '--daily'),
          monthlyCapMicros: cap(values.monthly, '--monthly'),
        });
        print(io, presentKey(key, now()));
        return;
      }
      break;
    }
    case 'monthly-credit': {
      const run = await operator.runMonthlyCredits();
      print(io, presentMonthlyCreditRun(run));
      return;
    }
    case 'import':
      await runImport(deps, operator, io, sub === undefined ? rest : [sub, ...rest]);
      return;
    case 'token-requests': {
      if (sub === undefined) {
        print(io, { data: (await deps.billing.openRequests()).map(presentTokenRequest) });
        return;
      }
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { reason: { type: 'string' } },
      });
      const id = arg(positionals, 0, 'request-id');
      if (sub === 'credit') {
        print(io, presentTokenRequest(await deps.billing.settle(id, { credit: true, actor: 'tmd' })));
        return;
      }
      if (sub === 'decline') {
        if (!values.reason?.trim())
          throw new UsageError('decline needs --reason <text>: the account sees it');
        print(
          io,
          presentTokenRequest(await deps.billing.settle(id, { credit: false, reason: values.reason.trim() })),
        );
        return;
      }
      break;
    }
    case 'collect': {
      const { values, positionals } = parseArgs({
        args: sub === undefined ? rest : [sub, ...rest],
        allowPositionals: true,
        options: {
          since: { type: 'string' },
          backfill: { type: 'boolean', default: false },
          status: { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
        },
      });
      if (values.status) {
        const at = now();
        print(io, { data: (await deps.collections.status()).map((s) => presentCollectorStatus(s, at)) });
        return;
      }
      if (values.since !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(values.since))
        throw new UsageError('--since must be a date, YYYY-MM-DD');
      const run = await deps.collections.run(arg(positionals, 0, 'source'), {
        ...(values.since === undefined ? {} : { since: values.since }),
        backfill: values.backfill,
      });
      print(io, presentCollectionRun(run));
      if (run.outcome === 'failed') throw new CommandFailed(`${run.source}: the run failed: ${run.error}`);
      return;
    }
  }
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
