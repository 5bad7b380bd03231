/** Ask the assistant: a question, what it would cost before asking, and the answer. */
import { useState } from 'preact/hooks';
import type { AssistantAnswer as Answer } from '../../types.ts';
import { AssistantAnswer } from './assistant-answer.tsx';
import { QuestionEstimate, useQuestionEstimate } from './question-estimate.tsx';

export interface AssistantProps {
  /** Which planner answers: "chat" (a configured chat model) or the built-in one. */
  planner: string;
  answer: Answer | null;
  answerSaved: boolean;
  busy: boolean;
  onAsk: (question: string) => void;
  onSaveAnswer: () => void;
}

export function Assistant({ planner, answer, answerSaved, busy, onAsk, onSaveAnswer }: AssistantProps) {
  const [question, setQuestion] = useState('');
  const estimate = useQuestionEstimate(question);
  return (
    <section class="card" aria-labelledby="assistant-title">
      <h2 id="assistant-title">Ask the assistant</h2>
      <form
        class="analyze-ask"
        onSubmit={(e) => {
          e.preventDefault();
          if (question.trim()) onAsk(question);
        }}
      >
        <label for="question">Question</label>
        <input
          id="question"
          value={question}
          placeholder="compare AAPL and MSFT closes since 2026-10-01"
          onInput={(e) => setQuestion((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy}>
          Ask
        </button>
      </form>
      <p class="small muted">
        Answered by the{' '}
        <span data-testid="planner">{planner === 'chat' ? 'configured chat model' : 'built-in planner'}</span>
        . Its reads are metered at your Terminal price; an answered question counts as one run of the day. It
        charts and computes on past data only: a question it asks back or does not answer (a forecast, a
        ranking) is free and not counted. Answers are saved only when you save them.
      </p>
      {estimate && <QuestionEstimate estimate={estimate} />}
      {answer && (
        <AssistantAnswer
          answer={answer}
          saved={answerSaved}
          busy={busy}
          onSave={onSaveAnswer}
          onCandidate={(value) => setQuestion(`${question} ${value}`.trim())}
        />
      )}
    </section>
  );
}
