/**
 * Time and peak memory of `tmd import` on a large CSV: generates a file of ROWS rows (1,000,000 by
 * default), imports it into a fresh database in a child process run with the Node flags of `bin/tmd.ts`
 * (its heap settings), and prints the rows, seconds, rows a second and the child's peak resident set.
 *   node bench/import-rss.ts [rows] [--shape=h15|prices] [--backend=sqlite|postgres]
 * `h15` (the default): one H.15 series, imported into macro/fed-h15-series. `prices`: the rows of the
 * data bench (bench/data.ts), 12 columns, imported with --replace into equities/stock-prices. With
 * `--backend=postgres` the database is a new one on BENCH_DATABASE_URL's server (dropped after).
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runCli } from '../src/tmd.ts';
import { parseArgs } from './lib.ts';

const DAY_MS = 86_400_000;
/** bench/data.ts's days per symbol. */
const DAYS = 250;

type Shape = 'h15' | 'prices';

const SHAPES: Record<
  Shape,
  { dataset: string; header: string; line: (i: number) => string; flags: string[] }
> = {
  h15: {
    dataset: 'macro/fed-h15-series',
    header: 'series_id,h15_series,title,date,value',
    line: (i) => {
      const date = new Date(Date.UTC(1000, 0, 1) + i * DAY_MS).toISOString().slice(0, 10);
      const value = i % 7 === 0 ? '' : (2 + (i % 500) / 100).toFixed(2);
      return `DGS10,RIFLGFCY10_N.B,"Market yield on U.S. Treasury securities at 10-year constant maturity",${date},${value}`;
    },
    flags: [],
  },
  prices: {
    dataset: 'equities/stock-prices',
    header: 'symbol,exchange,mic,date,open,high,low,close,adj_close,vwap,volume,currency',
    line: (i) => {
      const symbol = Math.floor(i / DAYS);
      const day = i % DAYS;
      const date = new Date(Date.UTC(2025, 0, 1) + Math.floor((day * 365) / DAYS) * DAY_MS)
        .toISOString()
        .slice(0, 10);
      const close = Math.round((50 + (symbol % 400) + Math.sin(day / 9) * 5) * 100) / 100;
      const nyse = symbol % 3 === 0;
      const volume = 1_000_000 + ((symbol * 7919 + day * 104_729) % 5_000_000);
      return `S${String(symbol).padStart(5, '0')},${nyse ? 'NYSE,XNYS' : 'NASDAQ,XNAS'},${date},${close - 0.5},${close + 1},${close - 1},${close},${close},${close + 0.1},${volume},USD`;
    },
    flags: ['--replace'],
  },
};

async function generate(file: string, rows: number, shape: Shape): Promise<void> {
  const out = createWriteStream(file);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const { header, line } = SHAPES[shape];
  let chunk = `${header}\n`;
  for (let i = 0; i < rows; i++) {
    chunk += `${line(i)}\n`;
    if (chunk.length > 1 << 20) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  out.end();
  await once(out, 'finish');
}

if (process.argv[2] === '--child') {
  const [file, databaseUrl, dir, shape] = process.argv.slice(3) as [string, string, string, Shape];
  const started = performance.now();
  let stdout = '';
  const { dataset, flags } = SHAPES[shape];
  const code = await runCli(['import', dataset, file, ...flags, '--json'], {
    env: { DATABASE_URL: databaseUrl, DATA_DIR: dir, LOG_LEVEL: 'warn' },
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => process.stderr.write(text),
  });
  const result = JSON.parse(stdout || '{}');
  const seconds = (performance.now() - started) / 1000;
  console.log(
    JSON.stringify({
      code,
      rows: result.total_rows,
      seconds: Number(seconds.toFixed(1)),
      rows_per_second: Math.round((result.total_rows ?? 0) / seconds),
      peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    }),
  );
} else {
  const args = parseArgs(process.argv.slice(2));
  const rows = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 1_000_000);
  const shape = (args.get('shape') ?? 'h15') as Shape;
  if (!(shape in SHAPES)) throw new Error('--shape is h15 or prices');
  const postgres = args.get('backend') === 'postgres';
  const dir = mkdtempSync(join(tmpdir(), 'tmd-import-rss-'));
  const server = postgres
    ? new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres')
    : null;
  const database = `tmd_import_bench_${process.pid}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: server?.toString() });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  try {
    const file = join(dir, `${shape}.csv`);
    await generate(file, rows, shape);
    console.log(`generated ${rows} rows, ${(statSync(file).size / 1e6).toFixed(1)} MB`);
    let databaseUrl = join(dir, 'tmd.sqlite');
    if (server) {
      await admin(`CREATE DATABASE ${database}`);
      const url = new URL(server);
      url.pathname = `/${database}`;
      databaseUrl = url.toString();
    }
    // The flags on the command's first line (`#!/usr/bin/env -S node --flag ...`): what `tmd` runs with.
    const shebang = readFileSync(new URL('../bin/tmd.ts', import.meta.url), 'utf8').split('\n')[0] ?? '';
    const flags = shebang.split(' ').filter((word) => word.startsWith('--'));
    const child = spawnSync(
      process.execPath,
      [...flags, new URL(import.meta.url).pathname, '--child', file, databaseUrl, dir, shape],
      { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
    );
    process.stdout.write(child.stdout);
    process.exitCode = child.status ?? 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (server) await admin(`DROP DATABASE IF EXISTS ${database}`);
  }
}
