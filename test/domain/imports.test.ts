import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { ImportError } from '../../src/catalog/import-file.ts';
import { DataImports, decodeUtf8 } from '../../src/domain/imports.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { appError, memoryStore, serviceCatalog, T0 } from './support.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const fred = bytes('observation_date,DGS10\n2026-01-02,4.18\n2026-01-05,.\n2026-01-06,4.17\n');
let store: SqliteStore;
let imports: DataImports;
const changed: string[] = [];

before(async () => {
  store = await memoryStore();
  imports = new DataImports({
    datasets: store,
    catalog: serviceCatalog(),
    now: () => T0,
    onImported: (d) => void changed.push(d),
  });
});
after(() => store.close());

test('text that is not UTF-8 is refused naming its line', () => {
  assert.equal(decodeUtf8(bytes('a,b\né,1\n'), 'ok.csv'), 'a,b\né,1\n');
  const latin1 = new Uint8Array([0x61, 0x0a, 0x62, 0x0a, 0xe9, 0x0a]);
  assert.throws(
    () => decodeUtf8(latin1, 'latin1.csv'),
    (error: ImportError) => {
      assert.ok(error instanceof ImportError);
      assert.equal(error.message.split('\n')[0], 'latin1.csv is not UTF-8 text; nothing was imported.');
      assert.match(error.problems[0] ?? '', /^line 3: bytes that are not UTF-8/);
      return true;
    },
  );
});

test('a dry run checks the file and writes nothing', async () => {
  const summary = await imports.importFile({ bytes: fred, fileName: 'DGS10.csv', dryRun: true });
  assert.deepEqual(summary, {
    dataset: 'macro/fed-h15-series',
    format: 'fred-series',
    fileName: 'DGS10.csv',
    sha256: createHash('sha256').update(fred).digest('hex'),
    read: 3,
    rejected: 0,
    duplicates: 0,
    rejections: [],
    imported: 3,
    replaced: 0,
    run: null,
  });
  assert.deepEqual(await imports.runs(undefined), []);
  assert.deepEqual(changed, []);
});

test('an import is detected, loaded with its run, told, and listed by key or alias', async () => {
  const summary = await imports.importFile({ bytes: fred, fileName: 'DGS10.csv' });
  assert.deepEqual([summary.imported, summary.replaced, summary.read], [3, 0, 3]);
  assert.deepEqual(
    {
      importer: summary.run?.importer,
      fileName: summary.run?.fileName,
      importedAt: summary.run?.importedAt,
      rowsRead: summary.run?.rowsRead,
      rowsInserted: summary.run?.rowsInserted,
      outcome: summary.run?.outcome,
      licence: summary.run?.licence,
    },
    {
      importer: 'fred-series',
      fileName: 'DGS10.csv',
      importedAt: T0,
      rowsRead: 3,
      rowsInserted: 3,
      outcome: 'swapped',
      licence: 'Public domain (H.15 data of the Federal Reserve Board)',
    },
  );
  assert.deepEqual(changed, ['macro/fed-h15-series']);
  assert.equal((await imports.runs('rates/fed-h15-series')).length, 1, 'an alias lists the same runs');
  await assert.rejects(imports.runs('no/such'), appError('dataset_not_found', 404));
  const again = await imports.importFile({
    bytes: bytes('observation_date,DGS10\n2026-01-02,4.20\n2026-01-06,4.17\n'),
    fileName: 'DGS10-revised.csv',
    format: 'fred-series',
  });
  assert.deepEqual(
    [again.imported, again.replaced],
    [0, 1],
    'the changed value replaces its row; the same one is kept',
  );
});

test('invalid records refuse the file unless partial; a wrong format or target is 400', async () => {
  const bad = bytes('observation_date,DGS10\n2026-01-02,4.18\nnot-a-date,4.1\n');
  await assert.rejects(imports.importFile({ bytes: bad, fileName: 'bad.csv' }), (error: ImportError) => {
    assert.match(error.message, /^1 of 2 record\(s\) are invalid; nothing was imported\./);
    assert.match(error.problems[0] ?? '', /^line 3, column DGS10: /);
    return true;
  });
  const partial = await imports.importFile({ bytes: bad, fileName: 'bad.csv', partial: true, dryRun: true });
  assert.deepEqual([partial.read, partial.imported, partial.rejected], [2, 1, 1]);
  await assert.rejects(
    imports.importFile({ bytes: fred, fileName: 'x.csv', format: 'nope' }),
    appError('invalid_request', 400),
  );
  await assert.rejects(
    imports.importFile({ bytes: fred, fileName: 'x.csv', dataset: 'equities/stock-prices' }),
    (error: Error & { code: string }) => {
      assert.equal(error.code, 'invalid_request');
      assert.match(
        error.message,
        /^fred-series imports into macro\/fed-h15-series, .*; not into "equities\/stock-prices"\.$/,
      );
      return true;
    },
  );
  assert.ok(imports.formats.some((f) => f.name === 'fred-series'));
});
