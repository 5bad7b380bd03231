/** Sign in, or register for the public test (account, signup grant, public-test key), then sign in. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ProblemBox } from '../components/problem-box.tsx';
import { navigate } from '../router.tsx';
import { refreshMe } from '../session.ts';

interface Registered {
  key: string;
  window_ends_at: string;
  balance: string;
  grant_credited: boolean;
  expires_at: string | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function validate(email: string, password: string): string | null {
  if (!EMAIL.test(email)) return 'Enter an email address like name@example.com.';
  if (password.length < 10) return 'The password needs at least 10 characters.';
  if (password.length > 200) return 'The password can have at most 200 characters.';
  return null;
}

function nextPath(search: string): string {
  const next = new URLSearchParams(search).get('next');
  // Only a path of the Terminal itself: never an address elsewhere.
  return next?.startsWith('/') && !next.startsWith('//') && !next.startsWith('/sign-in') ? next : '/explorer';
}

export function SignInPage({ search }: { search: string }) {
  const [mode, setMode] = useState<'sign-in' | 'register'>(
    new URLSearchParams(search).get('mode') === 'register' ? 'register' : 'sign-in',
  );
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [registered, setRegistered] = useState<Registered | null>(null);

  const signIn = async () => {
    await api('/api/v1/auth/login', {
      method: 'POST',
      body: { email, password, client: 'terminal' },
      signInOn401: false,
    });
    await refreshMe();
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    const problem = validate(email.trim(), password);
    setInvalid(problem);
    setError(null);
    if (problem) return;
    setBusy(true);
    try {
      if (mode === 'register') {
        const { body } = await api<Registered>('/api/v1/auth/public-test', {
          method: 'POST',
          body: { email: email.trim(), password },
          signInOn401: false,
        });
        await signIn();
        setRegistered(body);
      } else {
        await signIn();
        navigate(nextPath(search), true);
      }
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  if (registered) {
    return (
      <section class="auth" aria-labelledby="registered-title">
        <h1 id="registered-title">Welcome</h1>
        <div class="success">
          <p>
            Your account is ready{registered.grant_credited ? ' with its signup grant' : ''}: balance{' '}
            <strong>{registered.balance}</strong> tokens. You are signed in to the Terminal.
          </p>
        </div>
        <h2>Your public-test key</h2>
        <p class="notice">
          Shown once: copy it now. It reads the free (P0) datasets at no cost until{' '}
          {new Date(registered.window_ends_at).toUTCString()}.
        </p>
        <label>
          Public-test key
          <input readOnly value={registered.key} aria-describedby="key-once" />
        </label>
        <p id="key-once" class="muted small">
          Only its digest is stored; it cannot be shown again.
        </p>
        <div class="row">
          <button type="button" onClick={() => navigator.clipboard?.writeText(registered.key)}>
            Copy key
          </button>
          <button type="button" class="secondary" onClick={() => navigate(nextPath(search), true)}>
            Continue to the explorer
          </button>
        </div>
      </section>
    );
  }

  return (
    <section class="auth" aria-labelledby="auth-title">
      <h1 id="auth-title">{mode === 'sign-in' ? 'Sign in' : 'Register for the public test'}</h1>
      <form onSubmit={submit} noValidate aria-describedby={invalid ? 'form-invalid' : undefined}>
        <label>
          Email
          <input
            type="email"
            autocomplete="username"
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
            aria-invalid={invalid?.includes('email') ? true : undefined}
            required
          />
        </label>
        <label>
          Password
          <input
            type="password"
            autocomplete={mode === 'sign-in' ? 'current-password' : 'new-password'}
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            aria-invalid={invalid?.includes('password') ? true : undefined}
            minLength={10}
            required
          />
        </label>
        {invalid && (
          <p id="form-invalid" class="problem" role="alert">
            {invalid}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {mode === 'sign-in' ? 'Sign in' : 'Register and sign in'}
        </button>
      </form>
      {error !== null && <ProblemBox error={error} />}
      <p>
        {mode === 'sign-in' ? 'No account yet? ' : 'Already registered? '}
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setMode(mode === 'sign-in' ? 'register' : 'sign-in');
            setError(null);
            setInvalid(null);
          }}
        >
          {mode === 'sign-in' ? 'Register for the public test' : 'Sign in instead'}
        </button>
      </p>
      <p class="muted small">
        Registering creates your account with its signup grant and a public-test key for the free (P0)
        datasets. Reads made here in the Terminal are charged to your wallet with the 35% Terminal surcharge
        after your tier discount.
      </p>
    </section>
  );
}
