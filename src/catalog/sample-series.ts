/**
 * Shared sample series: one path per real-world entity (a symbol), the same in every dataset that
 * carries it, so AAPL's sample close on a date is one number whichever dataset is read.
 *
 * The path is a function of the series name, the entity, its level and the date only, never of the
 * dataset or of the span it samples. Its log-offset from the level on a US trading day is a weighted
 * sum of the shocks of the `window` trading days up to it (weights decaying by `1 - reversion` a day),
 * each shock seeded by series, entity and day: a mean-reverting walk that needs no start date, so two
 * datasets with different spans compute the same value with the same floating-point steps. A day off
 * the market calendar takes the value of the trading day before it.
 */
import { isUsTradingDay, tradingDayOnOrBefore } from './sample-calendar.ts';
import { fnv1a, gaussian, mulberry32 } from './sample-random.ts';
import type { SampleSeries } from './types.ts';

interface SeriesParams {
  /** Standard deviation of a day's shock (log scale). */
  sigma: number;
  /** Daily pull back towards the level. */
  reversion: number;
  /** Trading days of shocks summed per value. */
  window: number;
}

const PARAMS: Record<SampleSeries, SeriesParams> = {
  // About 24% a year, staying within some ±20% of the level.
  price: { sigma: 0.015, reversion: 0.01, window: 300 },
  volume: { sigma: 0.3, reversion: 0.3, window: 25 },
};

const weightsCache = new Map<SampleSeries, Float64Array>();

function weightsOf(series: SampleSeries): Float64Array {
  let weights = weightsCache.get(series);
  if (!weights) {
    const { sigma, reversion, window } = PARAMS[series];
    weights = new Float64Array(window);
    for (let k = 0; k < window; k++) weights[k] = sigma * (1 - reversion) ** k;
    weightsCache.set(series, weights);
  }
  return weights;
}

/** One entity's path of one series. */
export class SeriesPath {
  readonly #series: SampleSeries;
  readonly #seed: string;
  readonly #level: number;
  readonly #weights: Float64Array;
  /** Trading days ascending, each with its shock and its index, covering every window asked for. */
  #days: number[] = [];
  #shocks: number[] = [];
  #index = new Map<number, number>();
  readonly #values = new Map<number, number>();
  readonly #bars = new Map<string, number[]>();

  constructor(series: SampleSeries, entity: string, level: number) {
    this.#series = series;
    this.#seed = `${series}|${entity}`;
    this.#level = level;
    this.#weights = weightsOf(series);
  }

  #push(day: number): void {
    this.#index.set(day, this.#days.length);
    this.#days.push(day);
    this.#shocks.push(gaussian(mulberry32(fnv1a(`${this.#seed}|${day}`))));
  }

  /** The position of a trading day, with at least a window of trading days before it covered. */
  #position(trading: number): number {
    const window = this.#weights.length;
    const found = this.#index.get(trading);
    if (found !== undefined && found >= window - 1) return found;
    const first = this.#days[0];
    if (first === undefined || trading - window * 2 < first) {
      // Rebuilt from further back (a window is under 1.5 calendar days per trading day, holidays and all).
      const last = this.#days.at(-1);
      this.#days = [];
      this.#shocks = [];
      this.#index = new Map();
      const to = last === undefined ? trading : Math.max(last, trading);
      for (let d = trading - window * 2; d <= to; d++) if (isUsTradingDay(d)) this.#push(d);
    } else {
      for (let d = (this.#days.at(-1) as number) + 1; d <= trading; d++) if (isUsTradingDay(d)) this.#push(d);
    }
    return this.#index.get(trading) as number;
  }

  /** The value on a day (days since 1970-01-01): the close of its latest trading day. */
  valueOn(day: number): number {
    const trading = tradingDayOnOrBefore(day);
    let value = this.#values.get(trading);
    if (value === undefined) {
      const at = this.#position(trading);
      let offset = 0;
      for (let k = 0; k < this.#weights.length; k++)
        offset += (this.#weights[k] as number) * (this.#shocks[at - k] as number);
      value = this.#level * Math.exp(offset);
      this.#values.set(trading, value);
    }
    return value;
  }

  /** The value on the trading day before this day's latest trading day. */
  previousOn(day: number): number {
    return this.valueOn(tradingDayOnOrBefore(day) - 1);
  }

  /**
   * Bar j of n through a day: a bridge from the previous trading day's value to the day's, with noise
   * that vanishes at both ends, so the last bar ends on the day's value.
   */
  barOn(day: number, j: number, n: number): number {
    if (n <= 1) return this.valueOn(day);
    const trading = tradingDayOnOrBefore(day);
    const key = `${trading}|${n}`;
    let bars = this.#bars.get(key);
    if (!bars) {
      const from = this.previousOn(trading);
      const to = this.valueOn(trading);
      const rng = mulberry32(fnv1a(`${this.#seed}|${trading}|bars|${n}`));
      const walk: number[] = [];
      let w = 0;
      for (let i = 0; i < n; i++) {
        w += gaussian(rng);
        walk.push(w);
      }
      const scale = PARAMS[this.#series].sigma / Math.sqrt(n);
      const end = walk[n - 1] as number;
      bars = walk.map((x, i) => {
        const f = (i + 1) / n;
        return from * Math.exp(f * Math.log(to / from) + scale * (x - f * end));
      });
      bars[n - 1] = to;
      this.#bars.set(key, bars);
    }
    return bars[Math.min(j, n - 1)] as number;
  }

  /** The value before bar j of n: the bar before it, or for the first, the previous trading day's. */
  beforeBar(day: number, j: number, n: number): number {
    return j <= 0 || n <= 1 ? this.previousOn(day) : this.barOn(day, j - 1, n);
  }
}
