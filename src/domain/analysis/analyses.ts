/**
 * The Workbench (docs/analyze.md), by capability: the library of saved analyses, their runs (estimated
 * and refused by metering's forecast of several reads, refunded when they fail) and the assistant. One
 * value wires the three together for the composition root; faces call the capability they need.
 */
import type { Catalog } from '../../catalog/catalog.ts';
import type { ServiceFile } from '../../config.ts';
import type { Ledger } from '../../store/port.ts';
import type { MeterDeps } from '../metering.ts';
import type { DataReads } from '../reads.ts';
import { Assistant } from './assistant.ts';
import { AnalysisLibrary } from './library.ts';
import type { Planner } from './planner.ts';
import { AnalysisRuns } from './runs.ts';

export interface AnalysesDeps {
  store: Ledger;
  reads: DataReads;
  catalog: Catalog;
  config: ServiceFile;
  now: () => number;
  /** The metered path's ledger, prices and clock: runs are forecast and refunded through it. */
  meter: MeterDeps;
  builtInPlanner: Planner;
  /** The chat-completions planner, when the operator configured one; else the built-in answers. */
  chatPlanner?: Planner | null;
}

export class Analyses {
  readonly library: AnalysisLibrary;
  readonly runs: AnalysisRuns;
  readonly assistant: Assistant;

  constructor(deps: AnalysesDeps) {
    this.library = new AnalysisLibrary(deps);
    this.runs = new AnalysisRuns({ ...deps, library: this.library });
    this.assistant = new Assistant({ ...deps, library: this.library, runs: this.runs });
  }
}
