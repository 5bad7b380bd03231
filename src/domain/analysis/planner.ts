/**
 * The Planner port: turns a question in plain English into an analysis, or asks back. Two adapters: the
 * built-in deterministic planner (built-in-planner.ts, no network) and an OpenAI-compatible
 * chat-completions model (src/planners/chat-planner.ts) that plans with tool calls.
 */
import type { AnalysisSpec } from './spec.ts';

/** A candidate the user can pick when the question was ambiguous (a symbol, a market, a dataset). */
export interface Candidate {
  label: string;
  /** What to put in the question instead, e.g. `AAPL` or `GOLD - COMMODITY EXCHANGE INC.`. */
  value: string;
}

/** One message of the assistant's transcript, saved with the analysis (never a key or a credential). */
export interface TranscriptEntry {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; name: string; arguments: string }[];
  tool_call_id?: string;
}

export type PlanOutcome =
  | {
      kind: 'analysis';
      name: string;
      spec: AnalysisSpec;
      /** What will be read and computed, in a sentence or two. */
      explanation: string;
      transcript: TranscriptEntry[];
    }
  | {
      kind: 'clarify';
      /** The question back to the user. */
      message: string;
      candidates: Candidate[];
      /** No question form fits: not a question this planner answers (rather than one to name better). */
      unsupported?: boolean;
      transcript: TranscriptEntry[];
    };

/** What a read through a planner's tools returns to it: the rows and what the read cost. */
export interface ToolRead {
  rows: Record<string, unknown>[];
  nextCursor: string | null;
  tokenCost: string;
  tokensBurned: string;
}

/**
 * The tools a planner may use, bound to the asking account: the catalog's list and describe (free), a
 * price estimate (free), a metered read, and running an analysis (metered). A tool that refuses throws
 * the AppError the REST route would answer with; nothing refused is charged.
 */
export interface PlannerTools {
  search(query: string): { dataset: string; title: string; list_cost: number }[];
  describe(dataset: string): Record<string, unknown>;
  estimate(dataset: string): Promise<Record<string, unknown>>;
  read(
    dataset: string,
    params: { filters?: Record<string, string | number>; from?: string; to?: string; limit?: number },
  ): Promise<ToolRead>;
  /** Runs the analysis (its reads metered); returns a short summary for the model. */
  runAnalysis(spec: AnalysisSpec): Promise<Record<string, unknown>>;
}

export interface Planner {
  /** Named in answers, so the page can say which planner answered: `built-in` or `chat`. */
  readonly name: string;
  /** `today` (YYYY-MM-DD, UTC) anchors relative dates such as "last 52 weeks". */
  plan(question: string, tools: PlannerTools, today: string): Promise<PlanOutcome>;
}
