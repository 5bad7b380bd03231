/**
 * The package's own files (the Terminal's build, the manual, package.json), named from the package root:
 * the same path whether this module runs from src/ or from its build in dist/src/.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('no package.json above the service code');
    dir = up;
  }
  return dir;
}

const packageRoot = findPackageRoot();

/** A path inside the package, e.g. packagePath('web', 'dist'). */
export function packagePath(...parts: string[]): string {
  return join(packageRoot, ...parts);
}
