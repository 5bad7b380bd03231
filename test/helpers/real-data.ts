/**
 * The real public files the importer tests read (shared/data/real, kept beside the repository and never
 * copied into it). Found in the nearest folder above the repository that holds `shared/data/real`, else
 * above the repository a clone was made from, or where TMD_REAL_DATA says; a test that needs them fails
 * when they are nowhere.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repository = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The nearest `shared/data/real` in `start` or a folder above it. */
function above(start: string): string | null {
  let dir = start;
  for (;;) {
    const candidate = join(dir, 'shared', 'data', 'real');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** A clone made from a repository on this machine: the folder it was cloned from. */
function clonedFrom(): string | null {
  try {
    const url = execFileSync('git', ['remote', 'get-url', 'origin'], {
      cwd: repository,
      encoding: 'utf8',
    }).trim();
    const path = url.startsWith('file://') ? fileURLToPath(url) : url;
    return isAbsolute(path) && existsSync(path) ? path : null;
  } catch {
    return null;
  }
}

function find(): string | null {
  if (process.env.TMD_REAL_DATA) return resolve(process.env.TMD_REAL_DATA);
  const origin = clonedFrom();
  return above(repository) ?? (origin ? above(origin) : null);
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

/** The recorded answers of public data APIs (shared/data/recorded, beside `real`), with a trailing separator. */
export function recordedDataDir(): string {
  return `${join(dirname(realDataDir().replace(/\/$/, '')), 'recorded')}/`;
}
