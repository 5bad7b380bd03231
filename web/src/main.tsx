/** The Terminal's shell: the header bar (balance, tier, sign out), the pages, and the sign-in guard. */
import './tokens.css';
import './app.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, configureClient } from './api.ts';
import { AnalyzePage } from './pages/analyze.tsx';
import { ConnectPage } from './pages/connect.tsx';
import { DatasetPage } from './pages/dataset.tsx';
import { ExplorerPage } from './pages/explorer.tsx';
import { KeysPage } from './pages/keys.tsx';
import { LandingPage } from './pages/landing.tsx';
import { PackagesPage } from './pages/packages.tsx';
import { ResetPasswordPage } from './pages/reset-password.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { WalletPage } from './pages/wallet.tsx';
import { currentLocation, Link, match, navigate, useLocation } from './router.tsx';
import { refreshMe, setBalance, signedOut, useSession } from './session.ts';

/** Pages for whoever is not signed in: the landing page, signing in, resetting a forgotten password. */
const signedOutPages = new Set(['/', '/sign-in', '/reset-password']);

/** Sends the user to sign-in, to come back to where they were afterwards. */
function toSignIn(): void {
  const { path, search } = currentLocation();
  if (signedOutPages.has(path)) return;
  signedOut();
  const back = path === '/' ? '' : `?next=${encodeURIComponent(path + search)}`;
  navigate(`/sign-in${back}`, true);
}

configureClient({ unauthenticated: toSignIn, balance: setBalance });

const pages = [
  { path: '/explorer', label: 'Explorer' },
  { path: '/wallet', label: 'Wallet' },
  { path: '/keys', label: 'Keys' },
  { path: '/analyze', label: 'Analyze' },
  { path: '/packages', label: 'Packages' },
];

function Header({ path }: { path: string }) {
  const { me, balance } = useSession();
  // On a phone the links and the account sit behind a Menu button; it closes on every page change.
  const [open, setOpen] = useState(false);
  useEffect(() => setOpen(false), [path]);
  const signOut = async () => {
    try {
      await api('/api/v1/auth/logout', { method: 'POST', signInOn401: false });
    } finally {
      signedOut();
      navigate('/sign-in', true);
    }
  };
  return (
    <header class="topbar">
      <Link class="brand" href={me ? '/explorer' : '/'}>
        TMD Terminal
      </Link>
      {me === null && path !== '/sign-in' && (
        <Link class="signin-link" href="/sign-in">
          Sign in
        </Link>
      )}
      {me && (
        <span class="balance balance-short" aria-hidden="true">
          <strong>{balance}</strong>
        </span>
      )}
      {me && (
        <button
          type="button"
          class="secondary menu-toggle"
          aria-expanded={open}
          aria-controls="topnav"
          onClick={() => setOpen(!open)}
        >
          Menu
        </button>
      )}
      {me && (
        <div id="topnav" class={open ? 'topnav open' : 'topnav'}>
          <nav aria-label="Main">
            <ul>
              {pages.map((p) => (
                <li key={p.path}>
                  <Link
                    href={p.path}
                    aria-current={path === p.path || path.startsWith(`${p.path}/`) ? 'page' : undefined}
                  >
                    {p.label}
                  </Link>
                </li>
              ))}
              <li>
                <a href="/manual/">Manual</a>
              </li>
              <li>
                <a href="/docs">API</a>
              </li>
            </ul>
          </nav>
          <span class="spacer" />
          <span class="balance" aria-live="polite">
            Balance <strong data-testid="header-balance">{balance}</strong> tokens
          </span>
          <span title={`Tier ${me.tier.level}`}>
            <span aria-hidden="true">{me.tier.medal}</span> {me.tier.name}
          </span>
          <span class="muted account-email">{me.account?.email}</span>
          <button type="button" class="secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      )}
    </header>
  );
}

function Page({ path, search, signedIn }: { path: string; search: string; signedIn: boolean }) {
  if (path === '/sign-in') return <SignInPage search={search} />;
  if (path === '/' && !signedIn) return <LandingPage />;
  if (path === '/reset-password') return <ResetPasswordPage search={search} />;
  if (path === '/' || path === '/explorer') return <ExplorerPage search={search} />;
  const dataset = match('/dataset/:domain/:name', path);
  if (dataset) return <DatasetPage dsKey={`${dataset.domain}/${dataset.name}`} search={search} />;
  if (path === '/wallet') return <WalletPage />;
  if (path === '/keys') return <KeysPage />;
  if (path === '/packages') return <PackagesPage />;
  if (path === '/analyze') return <AnalyzePage />;
  const connect = match('/connect/:uid', path);
  if (connect) return <ConnectPage uid={connect.uid as string} />;
  return (
    <>
      <h1>Not found</h1>
      <p>
        There is no page {path}. <Link href="/explorer">Go to the explorer</Link>.
      </p>
    </>
  );
}

function App() {
  const { path, search } = useLocation();
  const { me } = useSession();
  useEffect(() => {
    refreshMe().catch(() => undefined);
  }, []);
  useEffect(() => {
    if (me === null && !signedOutPages.has(path)) toSignIn();
    if (me && path === '/') navigate('/explorer', true);
  }, [me, path]);
  useEffect(() => {
    const title =
      path === '/sign-in'
        ? 'Sign in'
        : path === '/reset-password'
          ? 'Reset password'
          : path.split('/')[1] || (me ? 'Explorer' : 'Welcome');
    document.title = `${title.charAt(0).toUpperCase()}${title.slice(1)} · TMD Terminal`;
  }, [path]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Header path={path} />
      <main id="main" tabIndex={-1}>
        {me === undefined ? (
          <p class="muted">Loading…</p>
        ) : me === null && !signedOutPages.has(path) ? null : (
          <Page path={path} search={search} signedIn={Boolean(me)} />
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
