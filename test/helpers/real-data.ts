/**
 * The real public files the importer tests read (shared/data/real, kept beside the repository and never
 * copied into it). Found in the nearest folder above the repository that holds `shared/data/real`, or
 * where TMD_REAL_DATA says; a test that needs them fails when they are nowhere.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

function find(): string | null {
  if (process.env.TMD_REAL_DATA) return resolve(process.env.TMD_REAL_DATA);
  let dir = resolve(fileURLToPath(new URL('../..', import.meta.url)));
  for (;;) {
    const candidate = join(dir, 'shared', 'data', 'real');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The folder of the real files, with a trailing separator. Throws, naming what was looked for, when missing. */
export function realDataDir(): string {
  const found = find();
  if (!found) {
    throw new Error(
      'shared/data/real was not found above the repository (set TMD_REAL_DATA to its folder): the importer tests read the real files there',
    );
  }
  return `${found}/`;
}
