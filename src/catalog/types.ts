/** Shapes of the dataset catalog (config/catalog.json) after validation. */

export const fieldTypes = ['string', 'integer', 'number', 'date', 'datetime', 'boolean'] as const;
export type FieldType = (typeof fieldTypes)[number];

/** How sample rows are generated for one field. All optional; the generator has type-based fallbacks. */
export interface FieldSample {
  /** Pick from these values (strings, or numbers for numeric fields). Entity fields cycle through them. */
  values?: readonly (string | number)[];
  /** Numeric range for integer/number fields. */
  min?: number;
  max?: number;
  /** Decimal places for number fields (default 2). */
  decimals?: number;
  /** Numeric fields: move as a random walk per entity (prices, levels) instead of independent draws. */
  walk?: boolean;
  /** Times of day (HH:MM, UTC) for datetime fields; the generator spreads rows over them. */
  times?: readonly string[];
  /** Probability in [0,1] that the value is null. */
  null_rate?: number;
  /**
   * Numeric fields of a daily sample: follow one shared series per real-world entity (named by the
   * value of the first entity field, e.g. a symbol) instead of a walk of this dataset's own, so every
   * dataset that carries the entity agrees on its value for a date. `values` give each entity's level.
   */
  series?: SampleSeries;
}

/** Shared per-entity series: `price` a slowly reverting daily price, `volume` a noisy daily volume. */
export const sampleSeriesNames = ['price', 'volume'] as const;
export type SampleSeries = (typeof sampleSeriesNames)[number];

export interface FieldDef {
  name: string;
  type: FieldType;
  unit?: string;
  description: string;
  sample?: FieldSample;
}

export const sampleSteps = ['hour', 'day', 'week', 'month', 'quarter', 'year'] as const;
export type SampleStep = (typeof sampleSteps)[number];

/** Days a daily sample has: US market trading days, or Monday to Friday; without one, every day. */
export const sampleCalendars = ['us-market', 'weekdays'] as const;
export type SampleCalendar = (typeof sampleCalendars)[number];

export interface DatasetSample {
  /**
   * First period (YYYY-MM-DD) of a scheduled sample. Otherwise the sample ends now and `from` sets the
   * phase of its periods: the weekday of a weekly sample, the day of month (or month end) of the others.
   */
  from: string;
  step: SampleStep;
  /** Day steps: the days that have rows (see SampleCalendar). */
  calendar?: SampleCalendar;
  /** Rows are scheduled events (release calendars): keep the span from `from`, into the future. */
  scheduled?: boolean;
  /** Number of periods per entity (the latest ones up to now, unless scheduled). */
  periods: number;
  /** Number of distinct entities (taken in order from the entity fields' sample values). */
  entities: number;
  /** Rows per entity per period (default 1); calendar datasets use more than one event a day. */
  per_period?: number;
}

export interface DatasetDef {
  /** Canonical key, domain/name. */
  key: string;
  /** Other domain/name keys that serve the same dataset; each keeps its own price and P0 status. */
  aliases: readonly string[];
  title: string;
  description: string;
  source: string;
  frequency: string;
  time_field: string;
  entity_fields: readonly string[];
  fields: readonly FieldDef[];
  sample: DatasetSample;
}

export type Scalar = string | number | boolean | null;
export type Row = Record<string, Scalar>;

/** One page of a dataset's rows, as the read plan asks the store for it. */
export interface RowQuery {
  dataset: string;
  /** Inclusive lower bound on the time column (string compare on ISO dates). */
  from?: string;
  /** Exclusive upper bound on the time column. */
  toExclusive?: string;
  /**
   * Field name -> accepted values (OR within a field, AND across fields). Text values match the stored
   * value's JSON text (a boolean as true/false); numbers match a stored JSON number of the same value.
   */
  filters: Record<string, string[] | number[]>;
  descending: boolean;
  /** Keyset position of the last row of the previous page. */
  after?: { t: string; id: number };
  limit: number;
  /**
   * `csvColumnsKey` of the columns a CSV answer needs: each row then carries its stored CSV line when the
   * dataset was loaded with exactly those columns, else null. Checked in the same statement as the rows.
   */
  csvColumns?: string;
}
