/** What a question would cost, planned by the service as the user types (free: nothing is read). */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { QuestionEstimate as Estimate } from '../../types.ts';

export function useQuestionEstimate(question: string): Estimate | null {
  const [estimate, setEstimate] = useState<Estimate | null>(null);
  useEffect(() => {
    setEstimate(null);
    if (!question.trim()) return;
    let current = true;
    const timer = setTimeout(async () => {
      try {
        const { body } = await api<Estimate>('/api/v1/assistant/estimate', {
          method: 'POST',
          body: { question },
        });
        if (current) setEstimate(body);
      } catch {
        // An estimate is a courtesy: Ask reports any refusal itself.
      }
    }, 400);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [question]);
  return estimate;
}

export interface QuestionEstimateProps {
  estimate: Estimate;
}

export function QuestionEstimate({ estimate }: QuestionEstimateProps) {
  return (
    <p class="small" data-testid="question-estimate" aria-live="polite">
      {estimate.kind === 'estimate' ? (
        <>
          This question will cost about{' '}
          <strong data-testid="question-estimate-total">{estimate.estimate.tokens_burned}</strong> tokens (
          {estimate.estimate.reads.length} metered read
          {estimate.estimate.reads.length === 1 ? '' : 's'}).
          {estimate.estimate.would_refuse && ` It would be refused now: ${estimate.estimate.would_refuse}.`}
        </>
      ) : estimate.kind === 'clarify' ? (
        'This question would not be answered as it stands: asking it is free.'
      ) : (
        estimate.message
      )}
    </p>
  );
}
