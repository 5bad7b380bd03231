import { MS_DAY, samplePeriods } from './sample-calendar.ts';
import { fnv1a, gaussian, mulberry32 } from './sample-random.ts';
import { SeriesPath } from './sample-series.ts';
import type { DatasetDef, FieldDef, Row, SampleStep, Scalar } from './types.ts';

/**
 * Deterministic sample rows for a catalog dataset, so a fresh start serves every dataset.
 *
 * The same definition and `nowMs` always yield the same rows: the randomness is a mulberry32 PRNG
 * seeded with the FNV-1a hash of the dataset key, or of the entity for shared series.
 *
 * Rules beyond the comments in types.ts:
 * - The periods are those of `samplePeriods` (sample-calendar.ts): they end at now (a scheduled sample
 *   keeps its span from `sample.from`), day steps keep to the sample's calendar (US market trading days
 *   for market data), month, quarter and year steps keep the day of month (clamped) of `from`, and a
 *   `from` on a month end stays on month ends, so quarter-end and fiscal-year-end series line up. Rows
 *   timed after now are left out, except in a scheduled sample.
 * - Entity i takes index i (cycling) of every entity field's `values`, so e.g. symbol, company
 *   name and exchange line up.
 * - Datetime time fields with `times` (and a step of a day or more) put row j of entity i at
 *   `times[(i * per_period + j) % times.length]`; so either every entity has its own slot
 *   (one row a period) or every row of a period has its own slot (per_period = times.length).
 *   Without `times`, the rows of a period are spread evenly over the hour or the day.
 * - `series` fields take the shared path of their entity (sample-series.ts), named by the value of
 *   the first entity field and starting from `values[i]`: the value of the day, or with several rows a
 *   day, bar j of per_period through it (the last bar ends on the day's value).
 * - `walk` fields start at `values[i]` for entity i when `values` is given (a per-entity level,
 *   e.g. a stock's price), otherwise inside [min, max]; they move multiplicatively (so a level
 *   never changes sign and a zero stays zero), revert slowly towards the start level and reflect
 *   off min/max when those are given.
 * - Date and datetime fields other than the time field are offsets from the row's time:
 *   `min`/`max` are whole days (default 0), datetimes take a time from `times` or a random one.
 * - Boolean fields pick from `values` (1/0 or "true"/"false"; repeat a value to weight it),
 *   otherwise true or false evenly.
 * - When open, high, low and close exist, close is generated as usual, open follows the previous
 *   close, high/low bracket both, a `vwap` falls between low and high, and an adjusted close
 *   (`adj_close`/`adjusted_close`) equals close: recent sample history has no corporate actions. When
 *   close is a shared series, the previous close is the series' and the draws are seeded by entity and
 *   time, so datasets that agree on the close agree on the whole bar.
 * - String fields without `values` get a value shaped by their name: accession numbers (from the
 *   row's CIK), `*_id` and `guid` (field-date-sequence), `sha256`/`md5`/`etag` (hex), `doi`
 *   (the 10.5555 test prefix, so a sample DOI never resolves) and `url`/`link` (example.com).
 * - Every row has every field, in catalog order; rows are sorted by time, then entity, then their
 *   order within the period.
 * - An `actual` field is null in rows later than now: an event not yet released has no outcome (its
 *   forecast and previous stay).
 */
export function generateSampleRows(def: DatasetDef, nowMs: number): Row[] {
  const rng = mulberry32(fnv1a(def.key));
  const { sample } = def;
  const perPeriod = Math.max(1, sample.per_period ?? 1);
  const timeField = def.fields.find((f) => f.name === def.time_field);
  const timeIsDate = timeField?.type === 'date';
  const timeSlots = (timeField?.sample?.times ?? []).map(hhmmMs);
  const entitySet = new Set(def.entity_fields);
  const entityFields = def.fields.filter((f) => entitySet.has(f.name));
  const otherFields = def.fields.filter((f) => f.name !== def.time_field && !entitySet.has(f.name));
  const ohlc = findOhlc(def.fields, entitySet, def.time_field);
  const otherPlan = otherFields.filter(
    (f) => !(ohlc && (f.name === 'open' || f.name === 'high' || f.name === 'low')),
  );
  const stepSigma = WALK_SIGMA[sample.step] / Math.sqrt(perPeriod);
  const periods = samplePeriods(sample, nowMs);
  const datasetName = def.key.slice(def.key.indexOf('/') + 1);

  // Walk state lives in one array per entity, indexed by the field's position in `otherPlan`.
  const numeric = (f: FieldDef) => f.type === 'integer' || f.type === 'number';
  const isSeries = otherPlan.map((f) => f.sample?.series !== undefined && numeric(f));
  const isWalk = otherPlan.map((f, k) => !isSeries[k] && f.sample?.walk === true && numeric(f));
  const entityNames = entityFields.map((f) => f.name);
  const planNames = otherPlan.map((f) => f.name);
  const entityValues: Scalar[][] = [];
  const walkState: number[][] = [];
  const walkAnchor: number[][] = [];
  const paths: (SeriesPath | null)[][] = [];
  const prevClose: (number | null)[] = [];
  for (let i = 0; i < sample.entities; i++) {
    const values = entityFields.map((f) => entityValue(f, i));
    entityValues.push(values);
    const starts = otherPlan.map((f, k) => (isWalk[k] ? walkStart(f, i, rng) : 0));
    walkState.push(starts);
    walkAnchor.push([...starts]);
    paths.push(otherPlan.map((f, k) => (isSeries[k] ? seriesPath(f, String(values[0]), i) : null)));
    prevClose.push(null);
  }
  const closeIndex = ohlc ? planNames.indexOf(ohlc.close.name) : -1;

  // Every row starts as a copy of one template, so all rows share a shape and keep catalog field order.
  const template: Row = {};
  for (const f of def.fields) template[f.name] = null;
  const keyed: { t: number; e: number; j: number; row: Row }[] = [];
  let seq = 0;
  for (const periodMs of periods) {
    const day = Math.floor(periodMs / MS_DAY);
    for (let i = 0; i < sample.entities; i++) {
      for (let j = 0; j < perPeriod; j++) {
        seq++;
        const timeMs = rowTimeMs(periodMs, sample.step, timeSlots, i, j, perPeriod, timeIsDate);
        const row: Row = { ...template };
        row[def.time_field] = timeIsDate ? isoDate(timeMs) : isoDateTime(timeMs);
        const ev = entityValues[i] ?? [];
        for (let k = 0; k < entityNames.length; k++) row[entityNames[k] as string] = ev[k] ?? null;
        const walks = walkState[i] ?? [];
        const anchors = walkAnchor[i] ?? [];
        const series = paths[i] ?? [];
        for (let k = 0; k < otherPlan.length; k++) {
          const f = otherPlan[k] as FieldDef;
          const path = series[k];
          let value: Scalar;
          if (path) {
            const v = path.barOn(day, j, perPeriod);
            value = f.type === 'integer' ? Math.round(v) : roundTo(v, decimalsOf(f));
          } else if (isWalk[k]) {
            const level = walks[k] ?? 0;
            if (f.sample?.null_rate && rng() < f.sample.null_rate) value = null;
            else {
              walks[k] = walkStep(f, level, anchors[k] ?? level, stepSigma, rng);
              value = f.type === 'integer' ? Math.round(level) : roundTo(level, decimalsOf(f));
            }
          } else {
            value = fieldValue(f, row, timeMs, seq, datasetName, rng);
          }
          row[planNames[k] as string] = value;
        }
        if (ohlc) {
          const closePath = series[closeIndex];
          if (closePath) {
            // The bar of a shared close is drawn from the entity and time alone, so datasets agree on it.
            const before = roundTo(closePath.beforeBar(day, j, perPeriod), decimalsOf(ohlc.close));
            prevClose[i] = before;
            applyOhlc(ohlc, row, i, prevClose, mulberry32(fnv1a(`bar|${String(ev[0])}|${timeMs}`)));
          } else applyOhlc(ohlc, row, i, prevClose, rng);
        }
        if (timeMs > nowMs) {
          if (!sample.scheduled) continue;
          if ('actual' in row) row.actual = null;
        }
        keyed.push({ t: timeMs, e: i, j, row });
      }
    }
  }
  keyed.sort((a, b) => a.t - b.t || a.e - b.e || a.j - b.j);
  return keyed.map((k) => k.row);
}

function seriesPath(f: FieldDef, entity: string, i: number): SeriesPath | null {
  const series = f.sample?.series;
  const values = f.sample?.values;
  if (!series || !values || values.length === 0) return null;
  return new SeriesPath(series, entity, Number(values[i % values.length]));
}

// Relative step size of a walk per period; smaller for slow-moving monthly and quarterly levels.
const WALK_SIGMA: Record<SampleStep, number> = {
  hour: 0.003,
  day: 0.01,
  week: 0.02,
  month: 0.015,
  quarter: 0.015,
  year: 0.03,
};

function hhmmMs(text: string): number {
  const [h, m] = text.split(':');
  return (Number(h) * 60 + Number(m)) * 60_000;
}

function rowTimeMs(
  periodMs: number,
  step: SampleStep,
  times: readonly number[],
  entity: number,
  j: number,
  perPeriod: number,
  timeIsDate: boolean,
): number {
  if (timeIsDate) return periodMs;
  if (step !== 'hour' && times.length > 0) {
    return periodMs + (times[(entity * perPeriod + j) % times.length] ?? 0);
  }
  const spanSeconds = step === 'hour' ? 3600 : 86_400;
  return periodMs + Math.floor((j * spanSeconds) / perPeriod) * 1000;
}

// Formatting dates dominated generation time, so each day's string is built once (the cache holds
// at most the days the catalog's samples span).
const dayStrings = new Map<number, string>();

function isoDate(ms: number): string {
  const day = Math.floor(ms / MS_DAY);
  let text = dayStrings.get(day);
  if (text === undefined) {
    text = new Date(day * MS_DAY).toISOString().slice(0, 10);
    dayStrings.set(day, text);
  }
  return text;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

function isoDateTime(ms: number): string {
  const seconds = Math.floor((ms - Math.floor(ms / MS_DAY) * MS_DAY) / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return `${isoDate(ms)}T${pad2(h)}:${pad2(m)}:${pad2(seconds % 60)}Z`;
}

function roundTo(x: number, decimals: number): number {
  const f = 10 ** decimals;
  const r = Math.round(x * f) / f;
  return r === 0 ? 0 : r; // never -0: it would print as "0" but compare oddly in tests
}

function decimalsOf(f: FieldDef): number {
  return f.type === 'integer' ? 0 : (f.sample?.decimals ?? 2);
}

function coerce(f: FieldDef, v: string | number): Scalar {
  switch (f.type) {
    case 'integer':
      return Math.round(Number(v));
    case 'number':
      return roundTo(Number(v), decimalsOf(f));
    case 'boolean':
      return v === 1 || v === '1' || v === 'true';
    default:
      return String(v);
  }
}

function entityValue(f: FieldDef, i: number): Scalar {
  const values = f.sample?.values;
  if (values && values.length > 0) return coerce(f, values[i % values.length] as string | number);
  switch (f.type) {
    case 'integer':
    case 'number':
      return (f.sample?.min ?? 1) + i;
    case 'boolean':
      return i % 2 === 0;
    case 'date':
      return isoDate(Date.UTC(2020, 0, 1) + i * MS_DAY);
    case 'datetime':
      return isoDateTime(Date.UTC(2020, 0, 1) + i * MS_DAY);
    default:
      return `${f.name.replace(/_/g, '-')}-${i + 1}`;
  }
}

function walkStart(f: FieldDef, i: number, rng: () => number): number {
  const values = f.sample?.values;
  if (values && values.length > 0) return Number(values[i % values.length]);
  const min = f.sample?.min ?? 0;
  const max = f.sample?.max ?? min + (f.type === 'integer' ? 1000 : 100);
  return min + (max - min) * (0.2 + 0.6 * rng());
}

// Pull towards the start level per step: long samples (three years of daily calendar values) stay
// near their real scale instead of drifting off, while a month of prices still moves freely.
const WALK_REVERSION = 0.02;

function walkStep(f: FieldDef, v: number, anchor: number, sigma: number, rng: () => number): number {
  const shock = sigma * gaussian(rng);
  let next =
    v === 0 || anchor === 0 || v / anchor <= 0
      ? v * Math.exp(shock)
      : v * Math.exp(shock + WALK_REVERSION * Math.log(anchor / v));
  const { min, max } = f.sample ?? {};
  if (max !== undefined && next > max) next = Math.max(min ?? -Infinity, 2 * max - next);
  if (min !== undefined && next < min) next = Math.min(max ?? Infinity, 2 * min - next);
  return next;
}

const CIK_FIELDS = ['cik', 'issuer_cik', 'filer_cik', 'registrant_cik', 'reporting_owner_cik'];

function hex(rng: () => number, length: number): string {
  let out = '';
  for (let k = 0; k < length; k++) out += Math.floor(rng() * 16).toString(16);
  return out;
}

function fallbackString(
  f: FieldDef,
  row: Row,
  timeMs: number,
  seq: number,
  datasetName: string,
  rng: () => number,
): string {
  const name = f.name;
  const day = isoDate(timeMs);
  const ymd = day.slice(0, 4) + day.slice(5, 7) + day.slice(8, 10);
  if (name.includes('accession')) {
    const cikField = CIK_FIELDS.find((c) => row[c] !== undefined && row[c] !== null);
    const cik = cikField
      ? String(row[cikField]).replace(/^0+/, '')
      : String(1_000_000 + Math.floor(rng() * 900_000));
    const serial = String(Math.floor(rng() * 1_000_000)).padStart(6, '0');
    return `${cik.padStart(10, '0')}-${ymd.slice(2, 4)}-${serial}`;
  }
  if (name === 'sha256' || name.endsWith('_sha256')) return hex(rng, 64);
  if (name === 'md5' || name.endsWith('_md5') || name.endsWith('_hash') || name === 'etag')
    return hex(rng, 32);
  // 10.5555 is Crossref's test prefix: a sample DOI never resolves to a real work.
  if (name === 'doi' || name.endsWith('_doi')) return `10.5555/${datasetName}.${seq}`;
  if (name === 'id' || name === 'guid' || name.endsWith('_id')) {
    return `${name.replace(/_id$/, '').replace(/_/g, '-')}-${ymd}-${String(seq).padStart(5, '0')}`;
  }
  if (name === 'url' || name.endsWith('_url') || name === 'link')
    return `https://example.com/sample/${datasetName}/${seq}`;
  return `${name.replace(/_/g, '-')}-${1 + Math.floor(rng() * 999)}`;
}

function fieldValue(
  f: FieldDef,
  row: Row,
  timeMs: number,
  seq: number,
  datasetName: string,
  rng: () => number,
): Scalar {
  const s = f.sample;
  if (s?.null_rate && rng() < s.null_rate) return null;
  const values = s?.values;
  if (values && values.length > 0 && f.type !== 'date' && f.type !== 'datetime') {
    return coerce(f, values[Math.floor(rng() * values.length)] as string | number);
  }
  switch (f.type) {
    case 'integer': {
      const min = Math.ceil(s?.min ?? 0);
      const max = Math.floor(s?.max ?? min + 1000);
      return min + Math.floor(rng() * (max - min + 1));
    }
    case 'number': {
      const min = s?.min ?? 0;
      const max = s?.max ?? min + 100;
      return roundTo(min + rng() * (max - min), decimalsOf(f));
    }
    case 'boolean':
      return rng() < 0.5;
    case 'date':
    case 'datetime': {
      if (values && values.length > 0) return String(values[Math.floor(rng() * values.length)]);
      const min = Math.round(s?.min ?? 0);
      const max = Math.round(s?.max ?? min);
      const dayMs =
        Math.floor(timeMs / MS_DAY) * MS_DAY + (min + Math.floor(rng() * (max - min + 1))) * MS_DAY;
      if (f.type === 'date') return isoDate(dayMs);
      const times = s?.times;
      const tod =
        times && times.length > 0
          ? hhmmMs(times[Math.floor(rng() * times.length)] ?? '00:00')
          : Math.floor(rng() * 86_400) * 1000;
      return isoDateTime(dayMs + tod);
    }
    default:
      return fallbackString(f, row, timeMs, seq, datasetName, rng);
  }
}

interface OhlcFields {
  open: FieldDef;
  high: FieldDef;
  low: FieldDef;
  close: FieldDef;
  vwap: FieldDef | undefined;
  adjusted: FieldDef[];
}

function findOhlc(fields: readonly FieldDef[], entity: Set<string>, timeField: string): OhlcFields | null {
  const numeric = (name: string) =>
    fields.find(
      (f) =>
        f.name === name &&
        (f.type === 'number' || f.type === 'integer') &&
        !entity.has(name) &&
        name !== timeField,
    );
  const open = numeric('open');
  const high = numeric('high');
  const low = numeric('low');
  const close = numeric('close');
  if (!open || !high || !low || !close) return null;
  const adjusted = [numeric('adj_close'), numeric('adjusted_close')].filter(
    (f): f is FieldDef => f !== undefined,
  );
  return { open, high, low, close, vwap: numeric('vwap'), adjusted };
}

function applyOhlc(
  o: OhlcFields,
  row: Row,
  entity: number,
  prevClose: (number | null)[],
  rng: () => number,
): void {
  const close = row[o.close.name];
  if (typeof close !== 'number') {
    row[o.open.name] = null;
    row[o.high.name] = null;
    row[o.low.name] = null;
    return;
  }
  const prev = prevClose[entity] ?? close * (1 + 0.004 * gaussian(rng));
  const open = roundTo(prev * (1 + 0.003 * gaussian(rng)), decimalsOf(o.open));
  const top = Math.max(open, close) * (1 + 0.006 * Math.abs(gaussian(rng)));
  const bottom = Math.min(open, close) * (1 - 0.006 * Math.abs(gaussian(rng)));
  // Re-apply max/min after rounding: rounding must never let high fall below open or close.
  const high = Math.max(roundTo(top, decimalsOf(o.high)), open, close);
  const low = Math.min(roundTo(bottom, decimalsOf(o.low)), open, close);
  row[o.open.name] = open;
  row[o.high.name] = high;
  row[o.low.name] = low;
  if (o.vwap && row[o.vwap.name] !== null)
    row[o.vwap.name] = roundTo(low + (high - low) * (0.3 + 0.4 * rng()), decimalsOf(o.vwap));
  for (const adj of o.adjusted) if (row[adj.name] !== null) row[adj.name] = close;
  prevClose[entity] = close;
}
