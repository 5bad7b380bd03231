/**
 * Peak memory of `tmd import` on a large CSV: generates an H.15-shaped file (ROWS rows, 1,000,000 by
 * default), imports it into a fresh SQLite database in a child process run with the Node flags of
 * `bin/tmd.ts` (its heap settings), and prints the child's peak resident set size. Run:
 * `node bench/import-rss.ts [rows]` on the project's Node.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../src/tmd.ts';

const DAY_MS = 86_400_000;

async function generate(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write('series_id,h15_series,title,date,value\n');
  const from = Date.UTC(1000, 0, 1);
  let chunk = '';
  for (let i = 0; i < rows; i++) {
    const date = new Date(from + i * DAY_MS).toISOString().slice(0, 10);
    const value = i % 7 === 0 ? '' : (2 + (i % 500) / 100).toFixed(2);
    chunk += `DGS10,RIFLGFCY10_N.B,"Market yield on U.S. Treasury securities at 10-year constant maturity",${date},${value}\n`;
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
  const [file, dir] = process.argv.slice(3) as [string, string];
  const started = performance.now();
  let stdout = '';
  const code = await runCli(['import', 'macro/fed-h15-series', file, '--json'], {
    env: { DATABASE_URL: join(dir, 'tmd.sqlite'), DATA_DIR: dir, LOG_LEVEL: 'warn' },
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => process.stderr.write(text),
  });
  const result = JSON.parse(stdout || '{}');
  console.log(
    JSON.stringify({
      code,
      rows: result.total_rows,
      seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
      peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    }),
  );
} else {
  const rows = Number(process.argv[2] ?? 1_000_000);
  const dir = mkdtempSync(join(tmpdir(), 'tmd-import-rss-'));
  try {
    const file = join(dir, 'h15.csv');
    await generate(file, rows);
    console.log(`generated ${rows} rows, ${(statSync(file).size / 1e6).toFixed(1)} MB`);
    // The flags on the command's first line (`#!/usr/bin/env -S node --flag ...`): what `tmd` runs with.
    const shebang = readFileSync(new URL('../bin/tmd.ts', import.meta.url), 'utf8').split('\n')[0] ?? '';
    const flags = shebang.split(' ').filter((word) => word.startsWith('--'));
    const child = spawnSync(
      process.execPath,
      [...flags, new URL(import.meta.url).pathname, '--child', file, dir],
      { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
    );
    process.stdout.write(child.stdout);
    process.exitCode = child.status ?? 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
