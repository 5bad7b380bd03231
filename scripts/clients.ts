/**
 * Writes the generated clients from the current OpenAPI document: the TypeScript client's types and the
 * Python client. `--check` writes nothing and fails, naming the files, when the committed ones differ
 * (`npm run lint` runs it). `--root <dir>` works on another copy of the repository's files.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateClients, staleFiles } from './clients/generate.ts';
import { openapiDocument } from './openapi-document.ts';

const { values } = parseArgs({
  options: { check: { type: 'boolean', default: false }, root: { type: 'string', default: '.' } },
});
const root = values.root;
const files = await generateClients(await openapiDocument());
const stale = staleFiles(root, files);
if (values.check) {
  if (stale.length > 0) {
    console.error(
      `Generated clients are stale (run npm run clients):\n${stale.map((p) => `  ${p}`).join('\n')}`,
    );
    process.exit(1);
  }
} else {
  for (const path of stale) {
    const content = files.get(path);
    if (content === undefined) {
      rmSync(join(root, path));
      continue;
    }
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  console.log(stale.length > 0 ? `Wrote ${stale.join(', ')}` : 'The clients are up to date.');
}
