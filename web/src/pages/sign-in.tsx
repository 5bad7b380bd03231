/**
 * Sign in, or register for the public test (account, signup grant, public-test key), then sign in. An
 * email that already has an account is offered sign-in, a password reset, or, once the user confirms
 * what it does, a new public-test key in place of the one the account has.
 */
import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { ProblemBox } from '../components/problem-box.tsx';
import { utcTime } from '../dates.ts';
import { Link, navigate } from '../router.tsx';
import { refreshMe } from '../session.ts';
import type { Registered } from '../types.ts';

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

/** After registering: the key, shown once, its own expiry, and the account's public-test window apart. */
function Welcome({ registered, onContinue }: { registered: Registered; onContinue: () => void }) {
  return (
    <section class="auth" aria-labelledby="registered-title">
      <h1 id="registered-title">{registered.rotated ? 'Your new public-test key' : 'Welcome'}</h1>
      <div class="success">
        <p>
          {registered.rotated
            ? 'The key your account had is revoked: apps using it get 401 key_revoked until you give them this one.'
            : `Your account is ready${registered.grant_credited ? ' with its signup grant' : ''}.`}{' '}
          Balance <strong>{registered.balance}</strong> tokens. You are signed in to the Terminal.
        </p>
      </div>
      {!registered.rotated && <h2>Your public-test key</h2>}
      <p class="notice">Shown once: copy it now.</p>
      <label>
        Public-test key
        <input readOnly value={registered.key} aria-describedby="key-once" />
      </label>
      <p id="key-once" class="muted small">
        Only its digest is stored; it cannot be shown again.
      </p>
      <dl class="facts">
        <dt>Key expires</dt>
        <dd data-testid="key-expires">{utcTime(registered.expires_at)}</dd>
        <dt>Public-test window</dt>
        <dd data-testid="window-ends">
          free reads of P0 datasets until {utcTime(registered.window_ends_at)} (a new key can be had until
          then)
        </dd>
      </dl>
      <div class="row">
        <button type="button" onClick={() => navigator.clipboard?.writeText(registered.key)}>
          Copy key
        </button>
        <button type="button" class="secondary" onClick={onContinue}>
          Continue to the explorer
        </button>
      </div>
    </section>
  );
}

/** Registering an email that has an account: sign in, reset the password, or (confirmed) a new key. */
function AccountExists(props: { busy: boolean; onSignIn: () => void; onRotate: () => void }) {
  const [confirming, setConfirming] = useState(false);
  return (
    <div class="problem" role="alert" aria-labelledby="exists-title">
      <h2 id="exists-title">An account with this email exists</h2>
      <p>Sign in with its password, or reset the password if you forgot it.</p>
      <div class="row">
        <button type="button" onClick={props.onSignIn} disabled={props.busy}>
          Sign in instead
        </button>
        <Link href="/reset-password">Forgot password?</Link>
      </div>
      {confirming ? (
        <>
          <p>
            <strong>Replace the account's public-test key?</strong> The key it has now stops working at once
            (apps and agents using it get 401 key_revoked), and a new one is shown here, once. The password is
            checked first; the balance and the signup grant do not change.
          </p>
          <div class="row">
            <button type="button" class="danger" onClick={props.onRotate} disabled={props.busy}>
              Yes, replace the key
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </>
      ) : (
        <p>
          Registered before and need a new public-test key?{' '}
          <button type="button" class="secondary" onClick={() => setConfirming(true)}>
            Get a new public-test key…
          </button>
        </p>
      )}
    </div>
  );
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
  const exists = error instanceof ApiError && error.code === 'account_exists';

  const signIn = async () => {
    await api('/api/v1/auth/login', {
      method: 'POST',
      body: { email: email.trim(), password, client: 'terminal' },
      signInOn401: false,
    });
    await refreshMe();
  };

  const register = async (rotateKey: boolean) => {
    const { body } = await api<Registered>('/api/v1/auth/public-test', {
      method: 'POST',
      body: { email: email.trim(), password, ...(rotateKey ? { rotate_key: true } : {}) },
      signInOn401: false,
    });
    await signIn();
    setRegistered(body);
  };

  const run = async (work: () => Promise<void>) => {
    setError(null);
    setBusy(true);
    try {
      await work();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    const problem = validate(email.trim(), password);
    setInvalid(problem);
    setError(null);
    if (problem) return;
    await run(async () => {
      if (mode === 'register') await register(false);
      else {
        await signIn();
        navigate(nextPath(search), true);
      }
    });
  };

  const signInInstead = () => {
    setMode('sign-in');
    void run(async () => {
      await signIn();
      navigate(nextPath(search), true);
    });
  };

  if (registered) {
    return <Welcome registered={registered} onContinue={() => navigate(nextPath(search), true)} />;
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
      {exists ? (
        <AccountExists busy={busy} onSignIn={signInInstead} onRotate={() => run(() => register(true))} />
      ) : (
        error !== null && <ProblemBox error={error} />
      )}
      {mode === 'sign-in' && (
        <p>
          <Link href="/reset-password">Forgot password?</Link>
        </p>
      )}
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
