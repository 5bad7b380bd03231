/** `tmd import` against stand-in services: the generic form's checks, dry run, load and summary. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { CatalogEntry } from '../../../src/catalog/catalog.ts';
import type { Row } from '../../../src/catalog/types.ts';
import type { CommandContext } from '../../../src/cli/commands/command.ts';
import { formatOf, importCommand, printImport } from '../../../src/cli/commands/import.ts';
import type { CliIo } from '../../../src/cli/io.ts';
import type { ImportSummary } from '../../../src/domain/imports.ts';
import type { ImportedRows } from '../../../src/domain/operator.ts';
import type { Services } from '../../../src/services.ts';
import { rates } from '../../helpers/import-dataset.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmd-import-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// The helper's dataset without its integer field: rows here have a date, a series and a value.
const entry = {
  key: 'macro/rates',
  dataset: { ...rates, fields: rates.fields.slice(0, 3) },
  columns: ['date', 'series', 'value'],
} as unknown as CatalogEntry;

interface Loaded {
  key: string;
  rows: Row[];
  options: unknown;
}

function context(isTTY = false) {
  let out = '';
  const loads: Loaded[] = [];
  const io: CliIo = {
    isTTY,
    stdout: (text) => {
      out += text;
    },
    stderr: () => {},
  };
  const deps = {
    now: () => 0,
    catalog: {
      resolve: (key: string) => (key === 'macro/rates' ? entry : null),
      suggest: () => ['macro/rates'],
    },
    operator: {
      importRows: async (
        key: string,
        given: readonly Row[] | AsyncIterable<readonly Row[]>,
        options: unknown,
      ): Promise<ImportedRows> => {
        const rows: Row[] = [];
        if (Symbol.asyncIterator in given) for await (const batch of given) rows.push(...batch);
        else rows.push(...given);
        loads.push({ key, rows, options });
        return { dataset: key, rows: 10, kept: 0, read: rows.length, inserted: 1, replaced: 1, importId: 4 };
      },
    },
  } as unknown as Services;
  const ctx: CommandContext = { deps, io, now: () => 0 };
  return { ctx, out: () => out, loads };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

test('formatOf: as given, else from the extension; anything else is a usage error', () => {
  assert.equal(formatOf('a.CSV', undefined), 'csv');
  assert.equal(formatOf('a.jsonl', undefined), 'ndjson');
  assert.equal(formatOf('a.ndjson', undefined), 'ndjson');
  assert.equal(formatOf('a.json', undefined), 'json');
  assert.equal(formatOf('a.txt', 'ndjson'), 'ndjson');
  assert.throws(() => formatOf('a.csv', 'xml'), { message: '--format must be one of csv, ndjson, json' });
  assert.throws(() => formatOf('a.dat', undefined), {
    name: 'UsageError',
    message: 'cannot tell the format of a.dat from its extension: pass --format csv|ndjson|json',
  });
});

test('a dry run reads and checks every row and loads none', async () => {
  const { ctx, out, loads } = context();
  const path = file('rates.ndjson', '{"date":"2024-01-02","series":"DGS10","value":"4.1","extra":1}\n');
  assert.equal(await importCommand(ctx, 'macro/rates', [path, '--dry-run']), true);
  assert.deepEqual(JSON.parse(out()), {
    dataset: 'macro/rates',
    file: path,
    rows: 1,
    fields: { date: 'column "date"', series: 'column "series"', value: 'column "value"' },
    ignored_columns: ['extra'],
    dry_run: true,
    loaded: false,
  });
  assert.equal(loads.length, 0);
});

test('a CSV file is loaded as it is read: the rows, the mode and the file reach importRows', async () => {
  const { ctx, out, loads } = context();
  const text = 'Date,Value\n2024-01-02,4.1\n2024-01-03,.\n';
  const path = file('dgs10.csv', text);
  await importCommand(ctx, 'macro/rates', [path, '--set', 'series=DGS10', '--null', '.', '--json']);
  assert.deepEqual(loads, [
    {
      key: 'macro/rates',
      rows: [
        { date: '2024-01-02', series: 'DGS10', value: 4.1 },
        { date: '2024-01-03', series: 'DGS10', value: null },
      ],
      options: { mode: 'upsert', file: { name: 'dgs10.csv', sha256: sha256(text), format: 'csv' } },
    },
  ]);
  assert.deepEqual(JSON.parse(out()), {
    dataset: 'macro/rates',
    file: path,
    rows: 2,
    fields: { date: 'column "Date"', series: 'set "DGS10"', value: 'column "Value"' },
    ignored_columns: [],
    loaded: true,
    mode: 'upsert',
    imported_rows: 1,
    replaced_rows: 1,
    import_id: 4,
    total_rows: 10,
  });
});

test('--merge reports the rows kept; the mapping may come from --map pairs', async () => {
  const { ctx, out, loads } = context();
  const path = file('rates.json', '[{"d":"2024-01-02","s":"DGS2","v":3}]');
  const args = [path, '--map', 'date=d', '--map', 'series=s', '--map', 'value=v', '--merge'];
  await importCommand(ctx, 'macro/rates', args);
  assert.deepEqual(
    loads.map((load) => [(load.options as { mode: string }).mode, load.rows]),
    [['merge', [{ date: '2024-01-02', series: 'DGS2', value: 3 }]]],
  );
  const printed = JSON.parse(out());
  assert.equal(printed.mode, 'merge');
  assert.equal(printed.kept_rows, 0);
  assert.equal(printed.import_id, undefined);
});

test('the generic form refuses, before reading, what does not go together or does not exist', async () => {
  const { ctx } = context();
  const path = file('x.csv', 'date,series,value\n2024-01-02,A,1\n');
  await assert.rejects(importCommand(ctx, 'macro/rates', [path, '--merge', '--replace']), {
    name: 'UsageError',
    message: '--merge and --replace do not go together',
  });
  await assert.rejects(importCommand(ctx, 'macro/ratez', [path]), {
    code: 'dataset_not_found',
    message: 'No dataset "macro/ratez". Did you mean macro/rates?',
  });
  await assert.rejects(importCommand(ctx, undefined, []), { message: 'missing <file>' });
  await assert.rejects(importCommand(ctx, 'x.dat', ['--format', 'nope']), {
    name: 'UsageError',
    message: /^--format must be an importer \(.+\) or, with <domain\/name> <file>, one of csv, ndjson, json$/,
  });
});

const summary: ImportSummary = {
  dataset: 'transport/airports',
  format: 'openflights-airports',
  fileName: 'airports.dat',
  sha256: 'ab12',
  read: 3,
  imported: 1,
  replaced: 0,
  rejected: 2,
  duplicates: 1,
  rejections: [{ where: 'line 2', reason: 'no IATA code' }],
  run: { id: 9, licence: 'ODbL', attribution: 'OpenFlights' },
} as unknown as ImportSummary;

test('a named import is summed up in a few lines for a person', () => {
  let out = '';
  const io: CliIo = {
    stdout: (text) => {
      out += text;
    },
    stderr: () => {},
  };
  printImport(io, summary, false, true);
  assert.equal(
    out,
    'checked (dry run, nothing loaded) airports.dat (openflights-airports) into transport/airports\n' +
      '  read 3, imported 1, replaced 0, rejected 2, duplicates 1\n' +
      '  sha256 ab12\n' +
      '  import 9; licence: ODbL\n' +
      '  attribution: OpenFlights\n' +
      '  rejected (the first 1):\n' +
      '    line 2: no IATA code\n',
  );
});

test('a named import with --json prints every field of its summary', () => {
  let out = '';
  const io: CliIo = {
    stdout: (text) => {
      out += text;
    },
    stderr: () => {},
  };
  printImport(io, { ...summary, run: null, rejections: [], rejected: 0 } as ImportSummary, true, false);
  assert.deepEqual(JSON.parse(out), {
    dataset: 'transport/airports',
    format: 'openflights-airports',
    file: 'airports.dat',
    sha256: 'ab12',
    read: 3,
    imported: 1,
    replaced: 0,
    rejected: 0,
    duplicates: 1,
    rejections: [],
    dry_run: false,
    import_id: null,
    licence: null,
    attribution: null,
  });
});
