/** What the Workbench's API answers (docs/analyze.md), as the Analyze page reads it. */

export interface SeriesSpec {
  id: string;
  dataset: string;
  entity: Record<string, string | number>;
  field: string;
  from?: string;
  to?: string;
  label?: string;
}

export interface AnalysisSpec {
  series: SeriesSpec[];
  steps: Record<string, unknown>[];
  outputs: { kind: 'line' | 'bar' | 'table' | 'stats'; values: string[]; title?: string }[];
}

export interface Analysis {
  id: string;
  name: string;
  spec: AnalysisSpec;
  planner: string | null;
  created_at: string;
  updated_at: string;
}

export interface AnalysisEstimate {
  reads: { series: string; dataset: string; field: string; token_cost: string; tokens_burned: string }[];
  tokens_burned: string;
  cost_eur: string;
  balance: string;
  balance_after: string;
  confirm_required: boolean;
  would_refuse: string | null;
  refusal_detail: string | null;
  reuse: { run_id: string; started_at: string } | null;
  fair_use: { runs_per_day: number; runs_today: number; reads_per_run: number };
}

type Cell = string | number | null;

export type AnalysisOutput =
  | {
      kind: 'line' | 'bar';
      title: string;
      x: 'date' | 'label';
      series: { name: string; x: string[]; y: (number | null)[] }[];
    }
  | { kind: 'table'; title: string; columns: string[]; rows: Cell[][] }
  | {
      kind: 'stats';
      title: string;
      rows: {
        name: string;
        count: number;
        first_date: string | null;
        last_date: string | null;
        mean: number | null;
        std: number | null;
        min: number | null;
        max: number | null;
        last: number | null;
      }[];
    };

export interface AnalysisResult {
  run_id: string;
  analysis_id: string | null;
  reads: { series: string; dataset: string; rows: number; truncated: boolean; tokens_burned: string }[];
  tokens_burned: string;
  cost_eur: string;
  outputs: AnalysisOutput[];
  problems: { path: string; message: string }[];
  reused_from: { run_id: string; started_at: string; tokens_burned: string } | null;
}

export type AssistantAnswer =
  | {
      kind: 'analysis';
      planner: string;
      explanation: string;
      analysis: Analysis;
      result: AnalysisResult;
      tokens_burned: string;
    }
  | {
      kind: 'clarify';
      planner: string;
      message: string;
      candidates: { label: string; value: string }[];
      tokens_burned: string;
    };
