/** Database rows of analyses and their runs, as both adapters read them. */
import type { AnalysisRecord, AnalysisRunRecord } from './analysis-port.ts';
import { big, type DbRow, num, optStr, str } from './rows.ts';

export function analysisFrom(r: DbRow): AnalysisRecord {
  return {
    id: str(r.id),
    accountId: str(r.account_id),
    name: str(r.name),
    spec: str(r.spec),
    transcript: optStr(r.transcript),
    planner: optStr(r.planner),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

export function analysisRunFrom(r: DbRow): AnalysisRunRecord {
  return {
    id: str(r.id),
    accountId: str(r.account_id),
    analysisId: optStr(r.analysis_id),
    kind: str(r.kind) as AnalysisRunRecord['kind'],
    inputsHash: optStr(r.inputs_hash),
    startedAt: num(r.started_at),
    status: str(r.status) as AnalysisRunRecord['status'],
    reads: num(r.reads),
    burnedMicros: big(r.burned_micros),
    result: optStr(r.result),
  };
}

/** The columns an analysis update may set, by field. */
export const analysisColumns = {
  name: 'name',
  spec: 'spec',
  transcript: 'transcript',
  planner: 'planner',
  updatedAt: 'updated_at',
} as const;

/** The WHERE clause of findAnalysisRun after account_id and status, with its values ($n from `first`, or ?). */
export function runFilter(
  query: { inputsHash?: string; analysisId?: string; sinceMs?: number },
  placeholder: (i: number) => string,
  first: number,
): { sql: string; values: (string | number)[] } {
  const parts: string[] = [];
  const values: (string | number)[] = [];
  const add = (column: string, op: string, value: string | number) => {
    parts.push(`${column} ${op} ${placeholder(first + values.length)}`);
    values.push(value);
  };
  if (query.inputsHash !== undefined) add('inputs_hash', '=', query.inputsHash);
  if (query.analysisId !== undefined) add('analysis_id', '=', query.analysisId);
  if (query.sinceMs !== undefined) add('started_at', '>=', query.sinceMs);
  return { sql: parts.map((p) => ` AND ${p}`).join(''), values };
}
