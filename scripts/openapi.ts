/**
 * Writes the service's OpenAPI document (as GET /api/v1/openapi.json serves it) to the file named by the
 * first argument, for `npm run lint` to check with Redocly.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { openapiDocument } from './openapi-document.ts';

const out = process.argv[2];
if (!out) throw new Error('usage: node scripts/openapi.ts <file>');
const document = await openapiDocument();
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(document, null, 2)}\n`);
