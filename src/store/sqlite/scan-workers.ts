/**
 * The read workers of a file database (scan-worker.ts): started on the first read that checks rows one
 * by one, one job at a time each; one core fewer than the machine has (at least one), so that scans
 * never take every core from the serving thread. A bounded queue: past it a read is refused as a 503 to retry rather
 * than left to wait behind work it cannot see.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { serviceUnavailable } from '../../errors.ts';
import type { ScanJob, ScanResult } from './row-sql.ts';

/** Jobs waiting for a worker, at most: each is at most SCAN_CAP rows' work. */
const MAX_QUEUED = 256;

interface Job {
  id: number;
  job: ScanJob;
  resolve: (result: ScanResult) => void;
  reject: (error: unknown) => void;
}

interface Slot {
  worker: Worker;
  running: Job | null;
}

const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './scan-worker.ts' : './scan-worker.js',
  import.meta.url,
);

export class ScanWorkers {
  readonly #path: string;
  readonly #size: number;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #ids = 0;
  #closed = false;

  constructor(path: string, size = Math.max(1, Math.min(4, availableParallelism() - 1))) {
    this.#path = path;
    this.#size = size;
  }

  run(job: ScanJob): Promise<ScanResult> {
    if (this.#closed) return Promise.reject(serviceUnavailable('The service is shutting down.'));
    if (this.#queue.length >= MAX_QUEUED)
      return Promise.reject(serviceUnavailable('Too many filtered reads are waiting; nothing was served.'));
    return new Promise<ScanResult>((resolve, reject) => {
      this.#queue.push({ id: ++this.#ids, job, resolve, reject });
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      let slot = this.#slots.find((s) => s.running === null);
      if (!slot && this.#slots.length < this.#size) slot = this.#start();
      if (!slot) return;
      const next = this.#queue.shift() as Job;
      slot.running = next;
      slot.worker.ref();
      slot.worker.postMessage({ id: next.id, job: next.job });
    }
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
      if (job && job.id === answer.id) {
        if (answer.error) job.reject(new Error(`read worker: ${answer.error.message}`));
        else job.resolve(answer.result as ScanResult);
      }
      this.#dispatch();
    });
    const lost = (error: unknown) => {
      const index = this.#slots.indexOf(slot);
      if (index >= 0) this.#slots.splice(index, 1);
      slot.running?.reject(error instanceof Error ? error : new Error('read worker stopped'));
      slot.running = null;
      if (!this.#closed) this.#dispatch();
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
    for (const job of this.#queue.splice(0)) job.reject(serviceUnavailable('The service is shutting down.'));
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
