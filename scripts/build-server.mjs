/**
 * npm run build:server (run by prepare and prestart too): src/ compiled by tsc into dist/, which
 * `npm start` runs. Skipped when dist/ was built from the same sources (a digest of them is kept in
 * dist/.sources), so a start after an install does not build again. One build at a time: several nodes
 * started together wait for the first build, then find dist/ current, and none of them loads a module
 * another build is rewriting. Plain JavaScript, so any Node can run it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

const INPUTS = [
  'src',
  'config/import-maps',
  'bench/serve-service.ts',
  'bench/serve-bare.ts',
  'tsconfig.json',
  'tsconfig.build.json',
  'package-lock.json',
];
const STAMP = join('dist', '.sources');
const LOCK = 'dist.build-lock';
/** A lock older than this was left by a build that died. */
const STALE_LOCK_MS = 120_000;

function files(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

function digest() {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap(files)) hash.update(`${file}\0`).update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

function lock() {
  const deadline = Date.now() + STALE_LOCK_MS;
  for (;;) {
    try {
      closeSync(openSync(LOCK, 'wx'));
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const age = Date.now() - statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs;
      if (age > STALE_LOCK_MS || Date.now() > deadline) rmSync(LOCK, { force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
}

const sources = digest();
const current = () => existsSync(STAMP) && readFileSync(STAMP, 'utf8') === sources;
const force = process.argv.includes('--force');
// A current build needs no lock (nor a writable package directory).
if (force || !current()) {
  lock();
  try {
    if (force || !current()) {
      rmSync(STAMP, { force: true });
      execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
        stdio: 'inherit',
      });
      mkdirSync('dist', { recursive: true });
      writeFileSync(STAMP, sources);
    }
  } finally {
    rmSync(LOCK, { force: true });
  }
}
