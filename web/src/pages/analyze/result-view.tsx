/** What a run gave: its reads and burn (or the result it reused), a CSV link, problems, and the outputs. */
import type { AnalysisResult } from '../../types.ts';
import { OutputView } from './output-view.tsx';

export interface ResultViewProps {
  result: AnalysisResult;
  /** The saved analysis whose result this is (null: an answer not saved), for the CSV link. */
  analysisId: string | null;
}

export function ResultView({ result, analysisId }: ResultViewProps) {
  return (
    <section aria-labelledby="result-title">
      <h2 id="result-title">Result</h2>
      <p role="status">
        {result.reused_from ? (
          <>
            Reused the result paid for at {result.reused_from.started_at} ({result.reused_from.tokens_burned}{' '}
            tokens then): nothing was read, <strong data-testid="run-burned">0</strong> tokens burned now.
          </>
        ) : (
          <>
            {result.reads.length} metered reads,{' '}
            <strong data-testid="run-burned">{result.tokens_burned}</strong> tokens burned ({result.cost_eur}{' '}
            EUR).
          </>
        )}{' '}
        {analysisId && (
          <a href={`/api/v1/analyses/${encodeURIComponent(analysisId)}/result.csv`} download>
            Download CSV
          </a>
        )}
      </p>
      {result.reads.some((r) => r.truncated) && (
        <p class="small muted">Some series had more than 1000 observations: the oldest were left out.</p>
      )}
      {result.problems.length > 0 && (
        <ul class="small" aria-label="Problems">
          {result.problems.map((p) => (
            <li key={p.path}>
              {p.path}: {p.message}
            </li>
          ))}
        </ul>
      )}
      {result.outputs.map((o, i) => (
        <OutputView key={i} output={o} index={i} />
      ))}
    </section>
  );
}
