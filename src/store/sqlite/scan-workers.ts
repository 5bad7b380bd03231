/**
 * The read workers of a file database (scan-worker.ts): started on the first read that checks rows one
 * by one, one job at a time each; one core fewer than the machine has (at least one), so that scans
 * never take every core from the serving thread. Jobs wait their turn in a ScanGate (row-scan.ts).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { serviceUnavailable } from '../../errors.ts';
import { ScanGate } from '../row-scan.ts';
import type { ScanJob, ScanResult } from './row-sql.ts';

interface Slot {
  worker: Worker;
  running: { id: number; resolve: (result: ScanResult) => void; reject: (error: unknown) => void } | null;
}

const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './scan-worker.ts' : './scan-worker.js',
  import.meta.url,
);

export class ScanWorkers {
  readonly #path: string;
  readonly #gate: ScanGate;
  readonly #slots: Slot[] = [];
  #ids = 0;
  #closed = false;

  constructor(path: string, size = Math.max(1, Math.min(4, availableParallelism() - 1))) {
    this.#path = path;
    this.#gate = new ScanGate(size);
  }

  run(job: ScanJob): Promise<ScanResult> {
    return this.#gate.run(() => {
      if (this.#closed) return Promise.reject(serviceUnavailable('The service is shutting down.'));
      // The gate lets no more jobs run than there may be workers: one is idle, or may start.
      const slot = this.#slots.find((s) => s.running === null) ?? this.#start();
      return new Promise<ScanResult>((resolve, reject) => {
        const id = ++this.#ids;
        slot.running = { id, resolve, reject };
        slot.worker.ref();
        slot.worker.postMessage({ id, job });
      });
    });
  }

  #start(): Slot {
    const worker = new Worker(WORKER_URL, {
      workerData: { path: this.#path },
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
    });
    const slot: Slot = { worker, running: null };
    worker.on('message', (answer: { id: number; result?: ScanResult; error?: { message: string } }) => {
      const job = slot.running;
      slot.running = null;
      worker.unref();
      if (job?.id !== answer.id) return;
      if (answer.error) job.reject(new Error(`read worker: ${answer.error.message}`));
      else job.resolve(answer.result as ScanResult);
    });
    const lost = (error: unknown) => {
      const index = this.#slots.indexOf(slot);
      if (index >= 0) this.#slots.splice(index, 1);
      slot.running?.reject(error instanceof Error ? error : new Error('read worker stopped'));
      slot.running = null;
    };
    worker.on('error', lost);
    worker.on('exit', () => lost(new Error('read worker stopped')));
    worker.unref();
    this.#slots.push(slot);
    return slot;
  }

  /** Workers running now (for tests). */
  get started(): number {
    return this.#slots.length;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(
      this.#slots.splice(0).map(
        (slot) =>
          new Promise<void>((resolve) => {
            slot.worker.once('exit', () => resolve());
            slot.worker.ref();
            slot.worker.postMessage('close');
          }),
      ),
    );
  }
}
