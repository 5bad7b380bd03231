/** A refusal as the user needs it: the problem's title and detail, and what to do (a countdown on 429). */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, InputError, whatToDo } from '../api.ts';

export function ProblemBox({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const apiError = error instanceof ApiError ? error : null;
  const [left, setLeft] = useState(apiError?.retryAfterS ?? 0);
  useEffect(() => {
    setLeft(apiError?.retryAfterS ?? 0);
    if (!apiError?.retryAfterS) return;
    const started = Date.now();
    const total = apiError.retryAfterS;
    const timer = setInterval(() => {
      const remaining = Math.max(0, total - Math.floor((Date.now() - started) / 1000));
      setLeft(remaining);
      if (remaining === 0) clearInterval(timer);
    }, 250);
    return () => clearInterval(timer);
  }, [apiError]);
  if (error instanceof InputError) {
    return (
      <div class="problem" role="alert" aria-label="Check your input">
        <h2>Check your input</h2>
        <p>{error.message}</p>
      </div>
    );
  }
  if (!apiError) {
    return (
      <div class="problem" role="alert">
        <h2>Could not reach the service</h2>
        <p>{error instanceof Error ? error.message : String(error)}</p>
        <p class="muted">Check your connection and try again.</p>
      </div>
    );
  }
  const p = apiError.problem;
  const waiting = apiError.status === 429 && left > 0;
  return (
    <div class="problem" role="alert" aria-label={`${p.status} ${p.title}`}>
      <h2>
        {p.status} {p.title} <span class="badge">{p.code}</span>
      </h2>
      <p>{p.detail}</p>
      <p>
        <strong>What to do:</strong> {whatToDo(apiError)}
        {typeof p.buy_url === 'string' && (
          <>
            {' '}
            <a href={p.buy_url}>Buy tokens</a>
          </>
        )}
      </p>
      {apiError.status === 429 && (
        <p aria-live="polite">
          {waiting ? (
            <>
              Try again in <strong data-testid="countdown">{left}</strong> s.
            </>
          ) : (
            'You can try again now.'
          )}
        </p>
      )}
      {p.request_id && <p class="muted small">Request id: {p.request_id}</p>}
      {onRetry && (apiError.status === 429 || apiError.status === 503) && (
        <button type="button" onClick={onRetry} disabled={waiting}>
          Try again
        </button>
      )}
    </div>
  );
}
