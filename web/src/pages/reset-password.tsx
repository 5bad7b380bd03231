/**
 * A forgotten password: ask for a link by email (the answer is the same whether or not the email has an
 * account), then, on the link's page (`?token=`), choose a new password. Reachable signed out.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ProblemBox } from '../components/problem-box.tsx';
import { Link } from '../router.tsx';
import { signedOut } from '../session.ts';
import type { PasswordChanged, ResetRequested } from '../types.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function RequestForm() {
  const [email, setEmail] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<ResetRequested | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    const problem = EMAIL.test(email.trim()) ? null : 'Enter an email address like name@example.com.';
    setInvalid(problem);
    setError(null);
    if (problem) return;
    setBusy(true);
    try {
      const { body } = await api<ResetRequested>('/api/v1/auth/password-reset', {
        method: 'POST',
        body: { email: email.trim() },
        signInOn401: false,
      });
      setSent(body);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  if (sent) {
    return (
      <section class="auth" aria-labelledby="reset-title">
        <h1 id="reset-title">Check your email</h1>
        <div class="success" role="status">
          <p>{sent.detail}</p>
        </div>
        <p class="muted small">
          No mail? Look in the spam folder, check the address, or ask again in a few minutes.
        </p>
        <p>
          <Link href="/sign-in">Back to sign in</Link>
        </p>
      </section>
    );
  }

  return (
    <section class="auth" aria-labelledby="reset-title">
      <h1 id="reset-title">Reset your password</h1>
      <p>Enter the email of your account: we mail it a link to choose a new password.</p>
      <form onSubmit={submit} noValidate aria-describedby={invalid ? 'reset-invalid' : undefined}>
        <label>
          Email
          <input
            type="email"
            autocomplete="username"
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
            aria-invalid={invalid ? true : undefined}
            required
          />
        </label>
        {invalid && (
          <p id="reset-invalid" class="problem" role="alert">
            {invalid}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Send the link
        </button>
      </form>
      {error !== null && <ProblemBox error={error} />}
      <p>
        <Link href="/sign-in">Back to sign in</Link>
      </p>
    </section>
  );
}

function NewPasswordForm({ token }: { token: string }) {
  const [password, setPassword] = useState('');
  const [repeated, setRepeated] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<PasswordChanged | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    const problem =
      password.length < 10
        ? 'The password needs at least 10 characters.'
        : password.length > 200
          ? 'The password can have at most 200 characters.'
          : password !== repeated
            ? 'The two passwords differ.'
            : null;
    setInvalid(problem);
    setError(null);
    if (problem) return;
    setBusy(true);
    try {
      const { body } = await api<PasswordChanged>('/api/v1/auth/password-reset/confirm', {
        method: 'POST',
        body: { token, password },
        signInOn401: false,
      });
      // Every session of the account ended, this browser's too.
      signedOut();
      setDone(body);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  if (done) {
    return (
      <section class="auth" aria-labelledby="reset-title">
        <h1 id="reset-title">Password changed</h1>
        <div class="success" role="status">
          <p>
            Your new password is set. Every session of your account has ended
            {done.sessions_ended > 0 ? ` (${done.sessions_ended} signed in before)` : ''}: sign in again with
            the new password. Your API keys keep working.
          </p>
        </div>
        <p>
          <Link href="/sign-in">Sign in</Link>
        </p>
      </section>
    );
  }

  return (
    <section class="auth" aria-labelledby="reset-title">
      <h1 id="reset-title">Choose a new password</h1>
      <form onSubmit={submit} noValidate aria-describedby={invalid ? 'reset-invalid' : undefined}>
        <label>
          New password
          <input
            type="password"
            autocomplete="new-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            minLength={10}
            required
          />
        </label>
        <label>
          Repeat the new password
          <input
            type="password"
            autocomplete="new-password"
            value={repeated}
            onInput={(e) => setRepeated(e.currentTarget.value)}
            required
          />
        </label>
        {invalid && (
          <p id="reset-invalid" class="problem" role="alert">
            {invalid}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Set the new password
        </button>
      </form>
      {error !== null && <ProblemBox error={error} />}
      <p class="muted small">
        Setting it ends every session of your account, in every browser. The link works once.
      </p>
      <p>
        <Link href="/reset-password">Ask for a new link</Link>
      </p>
    </section>
  );
}

export function ResetPasswordPage({ search }: { search: string }) {
  const token = new URLSearchParams(search).get('token');
  return token ? <NewPasswordForm token={token} /> : <RequestForm />;
}
