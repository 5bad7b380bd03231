/**
 * Connect: a hosted agent (Claude, ChatGPT, Cursor…) asks to sign in to the account over OAuth. The
 * signed-in user sees who asks and where it returns to, sets the connection's spending caps and
 * approves or declines; the browser then goes back through the OAuth server to the client.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ProblemBox } from '../components/problem-box.tsx';
import { Link } from '../router.tsx';
import type { PendingConnection } from '../types.ts';

/** A cap as typed: empty for none, else a whole number of tokens. */
function capOf(text: string): { value: number | null } | { error: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { value: null };
  if (!/^\d{1,10}$/.test(trimmed) || Number(trimmed) === 0)
    return { error: 'A cap is a whole number of tokens above 0, or empty for none.' };
  return { value: Number(trimmed) };
}

export function ConnectPage({ uid }: { uid: string }) {
  const [pending, setPending] = useState<PendingConnection | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [daily, setDaily] = useState('100');
  const [monthly, setMonthly] = useState('1000');
  const [invalid, setInvalid] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api<PendingConnection>(`/api/v1/connect/${encodeURIComponent(uid)}`)
      .then((a) => setPending(a.body))
      .catch(setError);
  }, [uid]);

  const go = (to: string) => {
    // The OAuth server takes over: it sends the browser on to the client with the code (or the refusal).
    window.location.assign(to);
  };

  const approve = async (event: Event) => {
    event.preventDefault();
    const d = capOf(daily);
    const m = capOf(monthly);
    const wrong = 'error' in d ? d.error : 'error' in m ? m.error : null;
    setInvalid(wrong);
    if (wrong || 'error' in d || 'error' in m) return;
    setBusy(true);
    setError(null);
    try {
      const { body } = await api<{ redirect_to: string }>(
        `/api/v1/connect/${encodeURIComponent(uid)}/approve`,
        {
          method: 'POST',
          body: { daily_tokens: d.value, monthly_tokens: m.value },
        },
      );
      go(body.redirect_to);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };

  const deny = async () => {
    setBusy(true);
    setError(null);
    try {
      const { body } = await api<{ redirect_to: string }>(`/api/v1/connect/${encodeURIComponent(uid)}/deny`, {
        method: 'POST',
        body: {},
      });
      go(body.redirect_to);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };

  return (
    <>
      <h1>Connect an agent</h1>
      {error !== null && <ProblemBox error={error} />}
      {pending === null && error === null && <p class="muted">Loading the request…</p>}
      {pending && (
        <form class="card" onSubmit={approve} aria-label="Approve the connection" noValidate>
          <p>
            <strong data-testid="client-name">{pending.client_name}</strong> asks to read datasets with your
            account over MCP.
          </p>
          <dl class="facts">
            <dt>Returns to</dt>
            <dd>
              <code data-testid="redirect-host">{pending.redirect_host}</code>
            </dd>
            <dt>Client id</dt>
            <dd>
              <code>{pending.client_id}</code>
            </dd>
            <dt>It may</dt>
            <dd>
              call the MCP endpoint <code>{pending.resource}</code> and spend your wallet at the API price
              (your tier discount, no Terminal surcharge), within the caps below.
            </dd>
          </dl>
          <div class="row">
            <label>
              Cap per day (tokens)
              <input
                inputMode="numeric"
                value={daily}
                onInput={(e) => setDaily(e.currentTarget.value)}
                aria-describedby="caps-help"
              />
            </label>
            <label>
              Cap per month (tokens)
              <input
                inputMode="numeric"
                value={monthly}
                onInput={(e) => setMonthly(e.currentTarget.value)}
                aria-describedby="caps-help"
              />
            </label>
          </div>
          <p id="caps-help" class="muted">
            Leave a cap empty for none. A read past a cap is refused (nothing is charged) until it resets
            (UTC). You can revoke the connection on the <Link href="/keys">Keys</Link> page at any time.
          </p>
          {invalid && (
            <p class="problem" role="alert">
              {invalid}
            </p>
          )}
          <div class="row">
            <button type="submit" disabled={busy}>
              Approve
            </button>
            <button type="button" class="secondary" disabled={busy} onClick={deny}>
              Decline
            </button>
          </div>
        </form>
      )}
    </>
  );
}
