/**
 * A minimal metrics registry rendered in the Prometheus text format at GET /metrics. Counters and gauges
 * only, no labels: enough for an operator to alert on a degraded limiter or an unreachable store.
 */

interface Metric {
  type: 'counter' | 'gauge';
  help: string;
  value: number;
}

export class Metrics {
  readonly #metrics = new Map<string, Metric>();

  #get(name: string, type: Metric['type'], help: string): Metric {
    let metric = this.#metrics.get(name);
    if (!metric) {
      metric = { type, help, value: 0 };
      this.#metrics.set(name, metric);
    }
    return metric;
  }

  /** Declares a counter (so it is exported as 0 before it first moves) and returns its incrementer. */
  counter(name: string, help: string): (by?: number) => void {
    const metric = this.#get(name, 'counter', help);
    return (by = 1) => {
      metric.value += by;
    };
  }

  gauge(name: string, help: string): (value: number) => void {
    const metric = this.#get(name, 'gauge', help);
    return (value) => {
      metric.value = value;
    };
  }

  value(name: string): number | undefined {
    return this.#metrics.get(name)?.value;
  }

  render(): string {
    let text = '';
    for (const [name, metric] of this.#metrics) {
      text += `# HELP ${name} ${metric.help}\n# TYPE ${name} ${metric.type}\n${name} ${metric.value}\n`;
    }
    return text;
  }
}
