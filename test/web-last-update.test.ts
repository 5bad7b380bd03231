/** The dataset page's "updated … from …" line, before a read: collected, imported, generated. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lastUpdate } from '../web/src/components/last-update.ts';
import type { Dataset } from '../web/src/types.ts';

type Status = Dataset['data_status'];
const run = (format: string, file: string) => ({
  id: 7,
  format,
  publisher: 'U.S. Securities and Exchange Commission',
  file,
  sha256: '',
  imported_at: '2026-11-28T06:30:12.000Z',
  licence: 'public domain',
  attribution: null,
});
const base = {
  source: 'import',
  rows: 10,
  first: '2026-11-01',
  last: '2026-11-27',
  loaded_at: null,
} as const;

test('collected data says when and from whom it was updated', () => {
  const status = {
    ...base,
    last_import: run(
      'collector:sec-index',
      'https://www.sec.gov/Archives/edgar/daily-index/2026/QTR4/form.20261127.idx',
    ),
  } as unknown as Status;
  assert.deepEqual(lastUpdate(status), [
    'Updated',
    '2026-11-28 06:30 UTC from U.S. Securities and Exchange Commission (www.sec.gov)',
  ]);
});

test('an imported file, generated sample rows and rows loaded otherwise keep their own words', () => {
  const imported = { ...base, last_import: run('edgar-form4', 'form4.txt') } as unknown as Status;
  assert.deepEqual(lastUpdate(imported), ['Last import', '2026-11-28 06:30 UTC']);
  const sample = { ...base, source: 'sample', last_import: null } as unknown as Status;
  assert.deepEqual(lastUpdate(sample), ['Generated', 'on the first read']);
});
