import { Assistant } from './assistant.ts';
import { AnalysisLibrary } from './library.ts';
import type { Planner } from './planner.ts';
import { AnalysisRuns, type WorkbenchDeps } from './runs.ts';

export interface AnalysesDeps extends WorkbenchDeps {
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
