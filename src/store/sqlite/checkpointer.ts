/**
 * The WAL checkpoints of a file database, mostly off the serving thread. SQLite's automatic checkpoint
 * runs inside the COMMIT that crosses its threshold: under load it stalled the event loop for 3-5 ms
 * every few dozen group commits, the largest part of a metered read's p99. The serving connection turns
 * it off; a worker thread with its own connection copies the WAL's frames into the database, and the
 * serving connection then copies the few frames committed meanwhile. That last step cannot move: the WAL
 * starts over only once every frame is copied, which a checkpoint racing the writer never achieves.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

/** Write commits between checkpoints: about the 1000 WAL pages SQLite's own threshold waits for. */
export const COMMITS_PER_CHECKPOINT = 64;

/** A worker still copying after this many checkpoints' worth of commits is behind. */
const BEHIND = 4;

/** SQLite's own threshold, put back on the serving connection if the worker fails. */
const AUTO_CHECKPOINT_PAGES = 1000;

/**
 * The worker's code (CommonJS, evaluated as a string so it runs the same from src/ and from dist/).
 * PASSIVE never waits for readers or the writer; the frames a reader still needs are copied next time.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 5000');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    checkpoint.get();
  } catch {
    // A busy or failed checkpoint copies nothing; the serving connection's own copy still runs.
  }
  parentPort.postMessage('done');
});
`;

export interface CheckpointSteps {
  /** A PASSIVE checkpoint on the serving connection: the frames committed while the worker copied. */
  finish: () => void;
  /** SQLite's automatic checkpoint back on, if the worker cannot start or stops on its own. */
  fallback: (pages: number) => void;
}

export class Checkpointer {
  readonly #path: string;
  readonly #steps: CheckpointSteps;
  #worker: Worker | null = null;
  #commits = 0;
  #online = false;
  #copying = false;
  #failed = false;
  #closed = false;
  #checkpoints = 0;

  constructor(path: string, steps: CheckpointSteps) {
    this.#path = path;
    this.#steps = steps;
  }

  /**
   * One write committed on the serving connection. The first starts the worker. Until it is up (some
   * tens of milliseconds), or when it falls behind (a busy machine), a checkpoint runs here whole, as
   * SQLite's own would: the WAL stays bounded whatever the worker does.
   */
  committed(): void {
    if (this.#failed || this.#closed) return;
    this.#worker ??= this.#start();
    if (++this.#commits < COMMITS_PER_CHECKPOINT) return;
    if (this.#online && !this.#copying) {
      this.#commits = 0;
      this.#copying = true;
      this.#worker.postMessage('checkpoint');
    } else if (!this.#online || this.#commits >= BEHIND * COMMITS_PER_CHECKPOINT) {
      this.#commits = 0;
      this.#finish();
    }
  }

  #finish(): void {
    try {
      this.#steps.finish();
      this.#checkpoints += 1;
    } catch {
      // An I/O error here fails the next write too, and is told there; this copy is retried next time.
    }
  }

  #start(): Worker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path: this.#path },
      // It holds one prepared statement: a small heap keeps its share of the service's memory small.
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 },
    });
    worker.on('online', () => {
      this.#online = true;
    });
    worker.on('message', () => {
      this.#copying = false;
      if (!this.#closed) this.#finish();
    });
    const fail = () => {
      if (this.#closed || this.#failed) return;
      this.#failed = true;
      this.#worker = null;
      this.#steps.fallback(AUTO_CHECKPOINT_PAGES);
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    // After the listeners: adding a 'message' listener references the worker again.
    worker.unref();
    return worker;
  }

  /** Whether the worker runs, and the checkpoints completed (for tests and diagnostics). */
  get stats(): { running: boolean; checkpoints: number } {
    return { running: this.#worker !== null, checkpoints: this.#checkpoints };
  }

  /** Stops the worker; its connection closes before the serving one, which checkpoints what is left. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = null;
    if (!worker) return;
    const exited = once(worker, 'exit').catch(() => undefined);
    // Unreferenced while serving, so it never holds the process open; referenced until it has closed.
    worker.ref();
    worker.postMessage('close');
    await exited;
  }
}
