/**
 * Analyze: the Workbench's composer and assistant (docs/analyze.md). The composer saves an analysis
 * (series, steps, outputs), shows its estimate (every read at the user's Terminal price), runs it and
 * draws its outputs; the assistant turns a question into such an analysis. Accounts without the
 * Workbench package see what it is and which package brings it. The parts are in ./analyze/.
 */
import './analyze.css';
import { ApiError } from '../api.ts';
import { ProblemBox } from '../components/problem-box.tsx';
import { Assistant } from './analyze/assistant.tsx';
import { Composer } from './analyze/composer.tsx';
import { NotEntitled } from './analyze/not-entitled.tsx';
import { ResultView } from './analyze/result-view.tsx';
import { RunEstimate } from './analyze/run-estimate.tsx';
import { SavedList } from './analyze/saved-list.tsx';
import { useWorkbench } from './analyze/use-workbench.ts';

export function AnalyzePage() {
  const wb = useWorkbench();
  const { entitlement, current, estimate, result, error, busy } = wb;

  if (entitlement === 'loading') {
    return (
      <>
        <h1>Analyze</h1>
        {error ? <ProblemBox error={error} /> : <p class="muted">Loading…</p>}
      </>
    );
  }
  if (entitlement instanceof ApiError) {
    return (
      <>
        <h1>Analyze</h1>
        <NotEntitled error={entitlement} />
      </>
    );
  }

  return (
    <>
      <h1>Analyze</h1>
      <Assistant
        planner={wb.planner}
        answer={wb.answer}
        answerSaved={wb.answerSaved}
        busy={busy}
        onAsk={wb.ask}
        onSaveAnswer={wb.saveAnswer}
      />
      {wb.saved.length > 0 && (
        <SavedList
          saved={wb.saved}
          currentId={current?.id ?? null}
          onOpen={wb.open}
          onDuplicate={wb.duplicate}
          onRemove={wb.remove}
        />
      )}
      <Composer
        currentName={current?.name ?? null}
        draft={wb.draft}
        onDraft={wb.setDraft}
        busy={busy}
        runBlocked={estimate?.confirm_required === true && !wb.confirmed}
        onSave={wb.save}
        onEstimate={wb.estimateRun}
        onRun={wb.run}
      >
        {estimate && <RunEstimate estimate={estimate} confirmed={wb.confirmed} onConfirm={wb.setConfirmed} />}
        {error !== null && <ProblemBox error={error} onRetry={wb.run} />}
      </Composer>
      {result && <ResultView result={result} analysisId={result.analysis_id ?? current?.id ?? null} />}
    </>
  );
}
