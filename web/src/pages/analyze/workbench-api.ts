/** The Workbench's routes, as the Analyze page calls them. */
import { api } from '../../api.ts';
import type {
  Analysis,
  AnalysisEstimate,
  AnalysisResult,
  AnalysisSpec,
  AssistantAnswer,
} from '../../types.ts';

const path = (id: string) => `/api/v1/analyses/${encodeURIComponent(id)}`;

export async function listAnalyses(): Promise<{ saved: Analysis[]; planner: string }> {
  const { body } = await api<{ data: Analysis[]; meta: { planner: string } }>('/api/v1/analyses');
  return { saved: body.data, planner: body.meta.planner };
}

/** Saves a new analysis, or changes to the one with `id`. */
export async function saveAnalysis(id: string | null, name: string, spec: AnalysisSpec): Promise<Analysis> {
  const body = { name: name.trim() || 'Untitled analysis', spec };
  const answer = id
    ? await api<Analysis>(path(id), { method: 'PATCH', body })
    : await api<Analysis>('/api/v1/analyses', { method: 'POST', body });
  return answer.body;
}

export const estimateRun = async (id: string) => (await api<AnalysisEstimate>(`${path(id)}/estimate`)).body;

export const run = async (id: string) =>
  (await api<AnalysisResult>(`${path(id)}/run`, { method: 'POST', body: {} })).body;

export const duplicateAnalysis = async (id: string) =>
  (await api<Analysis>(`${path(id)}/duplicate`, { method: 'POST', body: {} })).body;

export const deleteAnalysis = async (id: string) => void (await api(path(id), { method: 'DELETE' }));

export const ask = async (question: string) =>
  (await api<AssistantAnswer>('/api/v1/assistant/ask', { method: 'POST', body: { question } })).body;
