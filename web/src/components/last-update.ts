/** When a dataset's rows last changed, and how, in the words the dataset page shows before a read. */
import type { Dataset } from '../types.ts';

const minute = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** [label, text]: "Updated … from <publisher>" for collected data, the import or generation otherwise. */
export function lastUpdate(status: Dataset['data_status']): [string, string] {
  const run = status.last_import;
  if (run?.format.startsWith('collector:')) {
    let host = '';
    try {
      host = ` (${new URL(run.file).host})`;
    } catch {
      // A run named by something other than a URL: the publisher alone says where from.
    }
    return ['Updated', `${minute(run.imported_at)} from ${run.publisher}${host}`];
  }
  if (run) return ['Last import', minute(run.imported_at)];
  if (status.source === 'sample')
    return ['Generated', status.loaded_at ? minute(status.loaded_at) : 'on the first read'];
  return ['Loaded', status.loaded_at ? minute(status.loaded_at) : '—'];
}
