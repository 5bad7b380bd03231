/** The Analyze page's state: the saved analyses, the composer's draft, its estimate and result, answers. */
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api.ts';
import { refreshMe } from '../../session.ts';
import type {
  Analysis,
  AnalysisEstimate,
  AnalysisResult,
  AnalysisSpec,
  AssistantAnswer,
} from '../../types.ts';
import { type Draft, draftOf, emptyDraft, specOf } from './draft.ts';
import * as workbench from './workbench-api.ts';

/** Runs one action of the page at a time: busy while it runs, its failure shown as the page's problem. */
function useAction() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const act = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return { error, setError, busy, act };
}

/** Whether the account has the Workbench ('loading' until known; the refusal when not). */
function useLibrary(onError: (e: unknown) => void) {
  const [entitlement, setEntitlement] = useState<'loading' | 'yes' | ApiError>('loading');
  const [planner, setPlanner] = useState('built-in');
  const [saved, setSaved] = useState<Analysis[]>([]);
  useEffect(() => {
    workbench.listAnalyses().then(
      (list) => {
        setSaved(list.saved);
        setPlanner(list.planner);
        setEntitlement('yes');
      },
      (e) => {
        if (e instanceof ApiError && e.code === 'analysis_not_entitled') setEntitlement(e);
        else onError(e);
      },
    );
  }, []);
  return { entitlement, planner, saved, setSaved };
}

export function useWorkbench() {
  const { error, setError, busy, act } = useAction();
  const { entitlement, planner, saved, setSaved } = useLibrary(setError);
  const [current, setCurrent] = useState<Analysis | null>(null);
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [estimate, setEstimate] = useState<AnalysisEstimate | null>(null);
  const [confirmed, setConfirmed] = useState(false);
  const [result, setResult] = useState<AnalysisResult | null>(null);
  const [answer, setAnswer] = useState<AssistantAnswer | null>(null);
  const [answerSaved, setAnswerSaved] = useState(false);

  /** Puts an analysis in the composer: a saved one, or an answer not saved yet (`current` null). */
  const open = (a: Analysis | { name: string; spec: AnalysisSpec }) => {
    setCurrent('id' in a ? a : null);
    setDraft(draftOf(a));
    setEstimate(null);
    setResult(null);
  };

  /** Saves the composer's analysis (a new one, or changes to the one open) and returns it. */
  const save = async (): Promise<Analysis> => {
    const one = await workbench.saveAnalysis(current?.id ?? null, draft.name, specOf(draft));
    setCurrent(one);
    setSaved((list) => [one, ...list.filter((a) => a.id !== one.id)]);
    return one;
  };

  const actions = {
    save: () => act(async () => void (await save())),
    estimateRun: () =>
      act(async () => {
        setEstimate(await workbench.estimateRun((await save()).id));
        setConfirmed(false);
      }),
    run: () =>
      act(async () => {
        setResult(await workbench.run((await save()).id));
        await refreshMe();
      }),
    ask: (question: string) =>
      act(async () => {
        setAnswer(null);
        const body = await workbench.ask(question);
        setAnswer(body);
        setAnswerSaved(false);
        if (body.kind === 'analysis') {
          // Not saved until the user asks: it opens in the composer as a draft.
          open(body);
          setResult(body.result);
          await refreshMe();
        }
      }),
    saveAnswer: () =>
      act(async () => {
        await save();
        setAnswerSaved(true);
      }),
    remove: (a: Analysis) =>
      act(async () => {
        await workbench.deleteAnalysis(a.id);
        setSaved((list) => list.filter((x) => x.id !== a.id));
        if (current?.id === a.id) setCurrent(null);
      }),
    duplicate: (a: Analysis) =>
      act(async () => {
        const copy = await workbench.duplicateAnalysis(a.id);
        setSaved((list) => [copy, ...list]);
        open(copy);
      }),
  };

  const state = {
    entitlement,
    planner,
    saved,
    current,
    draft,
    estimate,
    confirmed,
    result,
    answer,
    answerSaved,
  };
  return { ...state, error, busy, open, setDraft, setConfirmed, ...actions };
}
