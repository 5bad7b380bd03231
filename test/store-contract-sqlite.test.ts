/** The Store contract against the embedded default: SqliteStore on a real file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { runStoreContract } from './contracts/store-contract.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmd-contract-'));
after(() => rmSync(dir, { recursive: true, force: true }));

runStoreContract('SqliteStore', async () => new SqliteStore(join(dir, 'contract.sqlite')));
