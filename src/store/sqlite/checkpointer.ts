/**
 * The WAL checkpoints of a file database, mostly off the serving thread. SQLite's automatic checkpoint
 * runs inside the COMMIT that crosses its threshold: under load it stalled the event loop for 3-5 ms
 * every few dozen group commits. The serving connection raises that threshold to a bound it should
 * never reach (SAFETY_CHECKPOINT_PAGES); a worker thread with its own connection copies the WAL's frames
 * into the database, and the serving connection then copies the few frames committed meanwhile. That
 * last step cannot move: the WAL starts over only once every frame is copied, which a checkpoint racing
 * the writer never achieves.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

/** Write commits between checkpoints: about the 1000 WAL pages SQLite's own threshold waits for. */
const COMMITS_PER_CHECKPOINT = 64;

/** SQLite's own threshold, put back on the serving connection if the worker fails. */
const AUTO_CHECKPOINT_PAGES = 1000;

/**
 * The serving connection's threshold meanwhile: a bound on the WAL (about 40 MB) should the cycle above
 * not run, as after one large load with no writes following it.
 */
export const SAFETY_CHECKPOINT_PAGES = 10_000;

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
  /**
   * A PASSIVE checkpoint on the serving connection (the frames committed while the worker copied):
   * true when it copied every frame, so the next write starts the WAL over.
   */
  finish: () => boolean;
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
   * One write committed on the serving connection. The first checkpoint due runs here, whole, as
   * SQLite's own would, and starts the worker (a short-lived process, a `tmd` command, never needs
   * one); so does every checkpoint due while the worker is starting. Never throws: the write it counts
   * is committed.
   */
  committed(): void {
    if (this.#failed || this.#closed || ++this.#commits < COMMITS_PER_CHECKPOINT) return;
    // Still copying: the commits keep counting, and the next checkpoint is due as soon as it is done.
    if (this.#copying) return;
    this.#commits = 0;
    if (this.#online && this.#worker) {
      this.#copying = true;
      this.#worker.postMessage('checkpoint');
      return;
    }
    this.#finish();
    if (this.#worker) return;
    try {
      this.#worker = this.#start();
    } catch {
      // No worker here (a permission model without --allow-worker, say): SQLite's own, then.
      this.#fail();
    }
  }

  #finish(): void {
    try {
      if (this.#steps.finish()) this.#checkpoints += 1;
    } catch {
      // An I/O error here fails the next write too, and is told there; this copy is retried next time.
    }
  }

  #fail(): void {
    if (this.#closed || this.#failed) return;
    this.#failed = true;
    this.#worker = null;
    this.#steps.fallback(AUTO_CHECKPOINT_PAGES);
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
    worker.on('error', () => this.#fail());
    worker.on('exit', () => this.#fail());
    // After the listeners: adding a 'message' listener references the worker again.
    worker.unref();
    return worker;
  }

  /** Whether the worker runs, and the checkpoints that copied every frame (for tests and diagnostics). */
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
