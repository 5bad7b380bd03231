/**
 * How a page of dataset rows is found, shared by the SQL adapters: which index a read walks and what it
 * checks row by row. Each dataset's entity fields (from the catalog, in its order) are stored as typed
 * key columns k1..k12 beside the row, each with its own index: (dataset, kN, t, id) on SQLite, (kN, t,
 * id) in the dataset's own partition on PostgreSQL. A read for one or several entities walks those
 * indexes in the read's order and stops after the page. A filter no index serves is checked on at most
 * SCAN_CAP stored rows per read; the page then says where the scan stopped.
 */
import type { RowQuery } from '../catalog/types.ts';
import { serviceUnavailable } from '../errors.ts';

/** Entity fields stored as key columns (k1..k12), in catalog order; later ones are checked row by row. */
export const MAX_ENTITY_SLOTS = 12;

export { SCAN_CAP } from '../catalog/read-plan.ts';

/** The key columns, k1..k12. */
export const entityKeyColumns: readonly string[] = Array.from(
  { length: MAX_ENTITY_SLOTS },
  (_, i) => `k${i + 1}`,
);

/**
 * A value as its key column stores it: text as itself, a number as its JSON text (so 1, 1.0 and 01 are
 * one key), a boolean as true or false; null for anything else (no key, never matched by a filter).
 */
export function entityKey(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : null;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return null;
}

/** A row's key columns under a layout: one entry per slot, null where the row has no key. */
export function rowKeys(row: Record<string, unknown>, entityFields: readonly string[]): (string | null)[] {
  return entityKeyColumns.map((_, slot) => {
    const field = entityFields[slot];
    return field === undefined ? null : entityKey(row[field]);
  });
}

/** The layout a dataset's key columns were written for, as dataset_sources.entity_fields keeps it. */
export function layoutText(entityFields: readonly string[]): string {
  return JSON.stringify(entityFields.slice(0, MAX_ENTITY_SLOTS));
}

/** A filter on a key column: the column's slot (1-based) and the keys it accepts. */
export interface KeyFilter {
  column: string;
  keys: string[];
}

export interface ScanPlan {
  /** The key column whose index the read walks (one walk per key, merged in order); null: the time index. */
  index: KeyFilter | null;
  /** Filters on other key columns, checked row by row. */
  keyed: KeyFilter[];
  /** Filters on fields without a key column, checked on the stored JSON row by row. */
  json: { field: string; values: string[] | number[] }[];
  /** Whether rows are checked one by one (then at most SCAN_CAP of them are examined). */
  capped: boolean;
}

/**
 * Which index a query walks: the key column among its filters with the fewest values (fewest walks),
 * the others checked row by row. A query with nothing to check row by row examines only its page.
 */
export function planScan(query: RowQuery, entityFields: readonly string[]): ScanPlan {
  const keyed: KeyFilter[] = [];
  const json: ScanPlan['json'] = [];
  for (const [field, values] of Object.entries(query.filters)) {
    const slot = entityFields.indexOf(field);
    if (slot >= 0 && slot < MAX_ENTITY_SLOTS) {
      const keys = [...new Set((values as (string | number)[]).map((v) => entityKey(v) as string))];
      keyed.push({ column: entityKeyColumns[slot] as string, keys });
    } else {
      json.push({ field, values });
    }
  }
  let index: KeyFilter | null = null;
  for (const filter of keyed) if (index === null || filter.keys.length < index.keys.length) index = filter;
  const rest = keyed.filter((f) => f !== index);
  return { index, keyed: rest, json, capped: rest.length > 0 || json.length > 0 };
}

/**
 * At most `slots` reads that check rows one by one at a time, the others waiting in turn (at most
 * `maxWaiting`, past which a read is refused as a 503 to retry): a node's scans then take at most that
 * share of the database's CPU, and other customers' reads do not queue behind them.
 */
export class ScanGate {
  readonly #slots: number;
  readonly #maxWaiting: number;
  readonly #waiting: (() => void)[] = [];
  #running = 0;

  constructor(slots: number, maxWaiting = 256) {
    this.#slots = Math.max(1, slots);
    this.#maxWaiting = maxWaiting;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#slots) {
      if (this.#waiting.length >= this.#maxWaiting)
        throw serviceUnavailable('Too many filtered reads are waiting; nothing was served.');
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}
