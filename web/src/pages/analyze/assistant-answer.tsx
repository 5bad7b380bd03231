/** The assistant's answer: an analysis (opened in the composer, saved on request) or a question back. */
import type { AssistantAnswer as Answer } from '../../types.ts';

export interface AssistantAnswerProps {
  answer: Answer;
  /** Whether the user has saved the answer's analysis. */
  saved: boolean;
  busy: boolean;
  onSave: () => void;
  /** A candidate the assistant offers, added to the question. */
  onCandidate: (value: string) => void;
}

export function AssistantAnswer({ answer, saved, busy, onSave, onCandidate }: AssistantAnswerProps) {
  return (
    <div role="status" aria-label="Assistant answer">
      <p class="small muted">
        Answered by the {answer.planner === 'chat' ? 'chat model' : 'built-in planner'}.
      </p>
      {answer.kind === 'analysis' ? (
        <>
          <p data-testid="explanation">{answer.explanation}</p>
          {saved || answer.analysis ? (
            <p class="small">Saved to your analyses.</p>
          ) : (
            <button type="button" class="secondary" disabled={busy} onClick={onSave}>
              Save this analysis
            </button>
          )}
        </>
      ) : (
        <>
          <p data-testid="clarification">{answer.message}</p>
          {answer.candidates.length > 0 && (
            <ul class="row" aria-label="Candidates">
              {answer.candidates.map((c) => (
                <li key={c.value}>
                  <button type="button" class="secondary" onClick={() => onCandidate(c.value)}>
                    {c.label}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </div>
  );
}
