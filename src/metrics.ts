/**
 * The process's metrics (prom-client), served at GET /metrics in the Prometheus text format or, when
 * the scraper asks for it, OpenMetrics. Every family is declared at start, so a dashboard or an alert
 * finds it at 0 before it first moves.
 */
import client from 'prom-client';
import type { MeterObserver } from './domain/metering.ts';
import type { Limiter } from './limits/port.ts';
import type { Channel } from './store/port.ts';

const MICROS_PER_TOKEN = 1_000_000;

/** A read's list cost as a label of few values: 0 (free P0), 1, 2-5, 6-20, 21-100, over 100 tokens. */
export function costClass(listCost: number): string {
  if (listCost <= 0) return '0';
  if (listCost <= 1) return '1';
  if (listCost <= 5) return '2-5';
  if (listCost <= 20) return '6-20';
  if (listCost <= 100) return '21-100';
  return '100+';
}

/** Pool figures a PostgreSQL store reports (SQLite has none). */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/**
 * prom-client renames a counter in place when it renders OpenMetrics (`x_total` becomes family `x`), so
 * each exposition has a registry and counters and gauges of its own; every update goes to both.
 */
class Twin<T> {
  readonly parts: [T, T];
  constructor(registries: readonly [AnyRegistry, AnyRegistry], make: (register: AnyRegistry) => T) {
    this.parts = [make(registries[0]), make(registries[1])];
  }
  each(update: (part: T) => void): void {
    for (const part of this.parts) update(part);
  }
}

type AnyRegistry = client.Registry<client.RegistryContentType>;

const COST_CLASSES = ['0', '1', '2-5', '6-20', '21-100', '100+'];

interface TallyCell {
  labels: { channel: string; cost_class: string };
  reads: number;
  burnedMicros: bigint;
  /** What each exposition's counters have been handed so far. */
  readsHanded: [number, number];
  burnsHanded: [bigint, bigint];
}

/**
 * Reads served and tokens burned per channel and cost class, counted in plain numbers on the read path
 * and handed to the two expositions' counters when they are collected (a scrape): a read does no label
 * hashing. Every cell a dashboard plots exists, at 0, from the start.
 */
class ReadTally {
  readonly #cells = new Map<string, TallyCell>();

  constructor() {
    for (const channel of ['rest', 'mcp', 'terminal'] satisfies Channel[]) {
      for (const cost of COST_CLASSES) {
        this.#cells.set(`${channel} ${cost}`, {
          labels: { channel, cost_class: cost },
          reads: 0,
          burnedMicros: 0n,
          readsHanded: [0, 0],
          burnsHanded: [0n, 0n],
        });
      }
    }
  }

  add(channel: Channel, cost: string, burnedMicros: bigint): void {
    const cell = this.#cells.get(`${channel} ${cost}`);
    if (!cell) return;
    cell.reads += 1;
    cell.burnedMicros += burnedMicros;
  }

  handReads(counter: client.Counter<'channel' | 'cost_class'>, part: number): void {
    for (const cell of this.#cells.values()) {
      counter.inc(cell.labels, cell.reads - (cell.readsHanded[part] as number));
      cell.readsHanded[part] = cell.reads;
    }
  }

  handBurns(counter: client.Counter<'channel' | 'cost_class'>, part: number): void {
    for (const cell of this.#cells.values()) {
      const micros = cell.burnedMicros - (cell.burnsHanded[part] as bigint);
      counter.inc(cell.labels, Number(micros) / MICROS_PER_TOKEN);
      cell.burnsHanded[part] = cell.burnedMicros;
    }
  }
}

/** A limiter whose admissions are timed; everything else goes straight through. */
class TimedLimiter implements Limiter {
  readonly #limiter: Limiter;
  readonly #duration: client.Histogram;

  constructor(limiter: Limiter, duration: client.Histogram) {
    this.#limiter = limiter;
    this.#duration = duration;
  }

  async admit(request: Parameters<Limiter['admit']>[0]): ReturnType<Limiter['admit']> {
    const started = performance.now();
    try {
      return await this.#limiter.admit(request);
    } finally {
      this.#duration.observe((performance.now() - started) / 1000);
    }
  }

  release(slotKey: string, slotId: string): Promise<void> {
    return this.#limiter.release(slotKey, slotId);
  }

  renew(slotKey: string, slotId: string, leaseMs: number, now: number): Promise<boolean> {
    return this.#limiter.renew(slotKey, slotId, leaseMs, now);
  }

  hit(key: string, limit: number, windowMs: number, now: number): ReturnType<Limiter['hit']> {
    return this.#limiter.hit(key, limit, windowMs, now);
  }

  peek(key: string, limit: number, windowMs: number, now: number): ReturnType<Limiter['peek']> {
    return this.#limiter.peek(key, limit, windowMs, now);
  }

  inFlight(slotKey: string, now: number): Promise<number> {
    return this.#limiter.inFlight(slotKey, now);
  }

  close(): Promise<void> {
    return this.#limiter.close();
  }
}

type Labels<L extends string> = Partial<Record<L, string>>;

export class Metrics {
  readonly #prometheus: AnyRegistry = new client.Registry();
  readonly #openMetrics: AnyRegistry = new client.Registry();
  readonly #registries: readonly [AnyRegistry, AnyRegistry];
  #poolStats: (() => PoolStats) | null = null;

  /** Histograms render alike in both expositions: one object each, registered in both. */
  readonly #httpDuration: client.Histogram<'route' | 'method' | 'status_class'>;
  readonly #tally = new ReadTally();
  readonly #refusals: Twin<client.Counter<'code'>>;
  readonly #debitDuration: client.Histogram;
  readonly #admissionDuration: client.Histogram;
  /** Per collector source: when it last succeeded, rows it wrote, runs that failed (set in the constructor). */
  readonly collected: (run: {
    source: string;
    outcome: string;
    finishedAt: number;
    rowsNew: number;
    rowsChanged: number;
  }) => void;

  constructor() {
    this.#openMetrics.setContentType(client.openMetricsContentType);
    this.#registries = [this.#prometheus, this.#openMetrics];
    for (const register of this.#registries) client.collectDefaultMetrics({ register });
    this.#httpDuration = new client.Histogram({
      name: 'tmd_http_request_duration_seconds',
      help: 'HTTP requests by route pattern, method and status class, from arrival to the response handed on',
      labelNames: ['route', 'method', 'status_class'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [...this.#registries],
    });
    const tally = this.#tally;
    const registries = this.#registries;
    this.#twin(
      (register) =>
        new client.Counter({
          name: 'tmd_reads_total',
          help: 'Metered reads served (charged, notional or grandfathered), by channel and list-cost class',
          labelNames: ['channel', 'cost_class'],
          registers: [register],
          collect() {
            tally.handReads(this, registries.indexOf(register));
          },
        }),
    );
    this.#twin(
      (register) =>
        new client.Counter({
          name: 'tmd_tokens_burned_total',
          help: 'Tokens burned by metered reads, by channel and list-cost class',
          labelNames: ['channel', 'cost_class'],
          registers: [register],
          collect() {
            tally.handBurns(this, registries.indexOf(register));
          },
        }),
    );
    this.#refusals = this.#twin(
      (register) =>
        new client.Counter({
          name: 'tmd_refusals_total',
          help: 'Requests answered with a problem (4xx and 5xx), by error code',
          labelNames: ['code'],
          registers: [register],
        }),
    );
    this.#debitDuration = new client.Histogram({
      name: 'tmd_ledger_debit_duration_seconds',
      help: 'Time to commit a debit (or a zero-burn usage record) in the ledger',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [...this.#registries],
    });
    this.#admissionDuration = new client.Histogram({
      name: 'tmd_limiter_admission_duration_seconds',
      help: 'Time the limiter takes to admit or refuse a request (a Redis round trip, or in process)',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [...this.#registries],
    });
    const poolStats = () => this.#poolStats?.() ?? { total: 0, idle: 0, waiting: 0 };
    this.#twin(
      (register) =>
        new client.Gauge({
          name: 'tmd_store_pool_connections',
          help: 'PostgreSQL pool connections of this process: total, idle, and requests waiting for one (0 on SQLite)',
          labelNames: ['state'],
          registers: [register],
          collect() {
            const stats = poolStats();
            this.set({ state: 'total' }, stats.total);
            this.set({ state: 'idle' }, stats.idle);
            this.set({ state: 'waiting' }, stats.waiting);
          },
        }),
    );
    {
      const lastSuccess = this.#twin(
        (register) =>
          new client.Gauge({
            name: 'tmd_collector_last_success_timestamp_seconds',
            help: 'When each collector source last finished a run without error (Unix seconds)',
            labelNames: ['source'],
            registers: [register],
          }),
      );
      const rows = this.#twin(
        (register) =>
          new client.Counter({
            name: 'tmd_collector_rows_total',
            help: 'Rows each collector source wrote (new or changed)',
            labelNames: ['source'],
            registers: [register],
          }),
      );
      const failures = this.#twin(
        (register) =>
          new client.Counter({
            name: 'tmd_collector_failures_total',
            help: 'Collector runs that failed, by source',
            labelNames: ['source'],
            registers: [register],
          }),
      );
      this.collected = (run) => {
        const labels = { source: run.source };
        rows.each((c) => c.inc(labels, run.rowsNew + run.rowsChanged));
        if (run.outcome === 'failed') failures.each((c) => c.inc(labels));
        else lastSuccess.each((g) => g.set(labels, run.finishedAt / 1000));
      };
    }
  }

  #twin<T>(make: (register: AnyRegistry) => T): Twin<T> {
    return new Twin(this.#registries, make);
  }

  /** Declares a counter (exported as 0 before it first moves) and returns its incrementer. */
  counter(name: string, help: string): (by?: number) => void {
    const counter = this.#twin((register) => new client.Counter({ name, help, registers: [register] }));
    return (by = 1) => counter.each((c) => c.inc(by));
  }

  gauge(name: string, help: string): (value: number) => void {
    const gauge = this.#twin((register) => new client.Gauge({ name, help, registers: [register] }));
    return (value) => gauge.each((g) => g.set(value));
  }

  /** One HTTP request, when its response has been handed on. */
  request(labels: Labels<'route' | 'method' | 'status_class'>, seconds: number): void {
    this.#httpDuration.observe(labels, seconds);
  }

  /** One request answered with a problem. */
  refused(code: string): void {
    this.#refusals.each((c) => c.inc({ code }));
  }

  /** Reports the PostgreSQL pool in tmd_store_pool_connections. */
  observePool(stats: () => PoolStats): void {
    this.#poolStats = stats;
  }

  /** What the metering reports: reads served and tokens burned, and how long debits take. */
  readonly meterObserver: MeterObserver = {
    served: (channel, listCost, burnedMicros) => this.#tally.add(channel, costClass(listCost), burnedMicros),
    debited: (seconds) => this.#debitDuration.observe(seconds),
  };

  /** The limiter with its admissions timed. */
  timedLimiter(limiter: Limiter): Limiter {
    return new TimedLimiter(limiter, this.#admissionDuration);
  }

  /** The exposition a scraper asked for: OpenMetrics when its Accept names it, else Prometheus text. */
  async render(accept: string | undefined): Promise<{ contentType: string; body: string }> {
    const registry = accept?.includes('application/openmetrics-text') ? this.#openMetrics : this.#prometheus;
    return { contentType: registry.contentType, body: await registry.metrics() };
  }

  /** The current value of an unlabelled metric (tests). */
  async value(name: string): Promise<number | undefined> {
    const metric = this.#prometheus.getSingleMetric(name);
    return (await metric?.get())?.values[0]?.value;
  }
}
