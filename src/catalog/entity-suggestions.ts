/** Values to suggest for a dataset's entity filters (symbols, series ids, market codes). */
import type { CatalogEntry } from './catalog.ts';

/**
 * The catalog's own values for each entity field: the ones its sample rows are generated from (the
 * first `sample.entities` of them), then the rest it lists. Imported rows may hold others.
 */
export function entitySuggestions(entry: CatalogEntry): Record<string, string[]> {
  const d = entry.dataset;
  const out: Record<string, string[]> = {};
  for (const name of d.entity_fields) {
    const values = d.fields.find((f) => f.name === name)?.sample?.values ?? [];
    out[name] = [...new Set(values.map(String))];
  }
  return out;
}
