/** The read form of a dataset page: its fields, how they are checked, and the query they make. */
import type { Dataset } from '../../types.ts';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export interface ReadForm {
  entities: string;
  from: string;
  to: string;
  fields: string[];
  sort: 'asc' | 'desc';
  limit: string;
  readAs: 'session' | 'key';
  key: string;
}

export const emptyReadForm: ReadForm = {
  entities: '',
  from: '',
  to: '',
  fields: [],
  sort: 'desc',
  limit: '100',
  readAs: 'session',
  key: '',
};

/** Sets one field of the form. */
export type SetReadField = <K extends keyof ReadForm>(k: K, v: ReadForm[K]) => void;

export function invalidInput(form: ReadForm): string | null {
  if (!/^\d{1,4}$/.test(form.limit) || Number(form.limit) < 1 || Number(form.limit) > 1000) {
    return 'Rows per page must be a whole number from 1 to 1000.';
  }
  if (form.from && !DATE.test(form.from)) return 'From must be a date (YYYY-MM-DD).';
  if (form.to && !DATE.test(form.to)) return 'To must be a date (YYYY-MM-DD).';
  if (form.from && form.to && form.from > form.to) return 'From must not be after To.';
  if (form.entities.length > 2000) return 'The entity filter is too long.';
  if (form.readAs === 'key' && !/^\S{8,}$/.test(form.key.trim())) return 'Paste the API key to read with.';
  return null;
}

export function queryOf(ds: Dataset, form: ReadForm, cursor: string | null): string {
  const q = new URLSearchParams();
  const entityField = ds.entity_fields[0];
  const entities = form.entities
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entityField && entities.length > 0) q.set(entityField, entities.join(','));
  if (form.from) q.set('from', form.from);
  if (form.to) q.set('to', form.to);
  if (form.fields.length > 0 && form.fields.length < ds.fields.length) q.set('fields', form.fields.join(','));
  q.set('sort', form.sort);
  q.set('limit', form.limit);
  if (cursor) q.set('cursor', cursor);
  return q.toString();
}

/** The API key option of a request: the pasted key when reading as a key, else the session. */
export const keyOptionOf = (form: ReadForm) => (form.readAs === 'key' ? { key: form.key.trim() } : {});
