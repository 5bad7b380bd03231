/**
 * Fails when a source file is over 500 lines (style.md: a file a newcomer can read). Biome checks
 * functions (over 100 lines); its file rule counts only some lines, so files are counted here, plainly.
 * Migrations and generated code are exempt.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const MAX_LINES = 500;
const ROOTS = ['src', 'web/src', 'bin', 'scripts', 'bench'];
const exempt = (path: string) => /(^|\/)migrations\.ts$/.test(path);

const over: string[] = [];
for (const root of ROOTS)
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.(ts|tsx|mjs)$/.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    if (exempt(path)) continue;
    const lines = readFileSync(path, 'utf8').split('\n').length - 1;
    if (lines > MAX_LINES) over.push(`${path}: ${lines} lines (at most ${MAX_LINES})`);
  }
if (over.length > 0) {
  console.error(`Split these files by capability:\n${over.join('\n')}`);
  process.exit(1);
}
