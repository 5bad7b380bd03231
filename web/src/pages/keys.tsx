/** Keys: list, create a wallet key (shown once), revoke with confirmation; Connect snippets. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ProblemBox } from '../components/problem-box.tsx';
import { ScrollRegion } from '../components/scroll-region.tsx';
import { useSession } from '../session.ts';
import type { Connection, Key } from '../types.ts';
import { ConnectSnippets } from './connect-snippets.tsx';

/** How many of the newest usage events are searched for each key's last read. */
const USAGE_WINDOW = 500;

const when = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '—');

function Copy({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={() => {
        navigator.clipboard?.writeText(text).then(
          () => setDone(true),
          () => setDone(false),
        );
      }}
    >
      {done ? `${label}: copied` : label}
    </button>
  );
}

export function KeysPage() {
  const { me } = useSession();
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [name, setName] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const [created, setCreated] = useState<(Key & { key: string }) | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [mcpUrl, setMcpUrl] = useState<string | null>(null);

  const [lastUsed, setLastUsed] = useState<Map<string, string>>(new Map());
  /** Reads by key among the account's newest USAGE_WINDOW usage events. */
  const [recentReads, setRecentReads] = useState<Map<string, number>>(new Map());
  const [connections, setConnections] = useState<Connection[]>([]);

  const load = () => {
    api<{ data: Key[] }>('/api/v1/keys')
      .then((a) => setKeys(a.body.data))
      .catch(setError);
    api<{ data: Connection[] }>('/api/v1/connections')
      .then((a) => setConnections(a.body.data))
      .catch(setError);
    // When each key last read: the newest of the account's recent usage events that names it.
    api<{ data: { key_id: string | null; at: string }[] }>(`/api/v1/me/usage?limit=${USAGE_WINDOW}`)
      .then((a) => {
        const seen = new Map<string, string>();
        const counts = new Map<string, number>();
        for (const event of a.body.data) {
          if (!event.key_id) continue;
          if (!seen.has(event.key_id)) seen.set(event.key_id, event.at);
          counts.set(event.key_id, (counts.get(event.key_id) ?? 0) + 1);
        }
        setLastUsed(seen);
        setRecentReads(counts);
      })
      .catch(setError);
  };
  useEffect(() => {
    load();
    api<{ mcp_url: string }>('/api/v1/auth/sandbox')
      .then((a) => setMcpUrl(a.body.mcp_url))
      .catch(() => setMcpUrl(null));
  }, []);

  const create = async (event: Event) => {
    event.preventDefault();
    setError(null);
    const trimmed = name.trim();
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
    if (trimmed.length > 100 || /[\u0000-\u001f\u007f]/.test(trimmed)) {
      setInvalid('A key name has at most 100 characters and no control characters.');
      return;
    }
    setInvalid(null);
    try {
      const { body } = await api<Key & { key: string }>('/api/v1/keys', {
        method: 'POST',
        body: trimmed ? { name: trimmed } : {},
      });
      setCreated(body);
      setName('');
      load();
    } catch (e) {
      setError(e);
    }
  };

  const revoke = async (key: Pick<Key, 'id'>) => {
    setError(null);
    try {
      await api(`/api/v1/keys/${encodeURIComponent(key.id)}`, { method: 'DELETE' });
      setConfirming(null);
      load();
    } catch (e) {
      setError(e);
    }
  };

  const connectionKeys = new Set(connections.map((c) => c.key.id));
  const ownKeys = keys?.filter((k) => !connectionKeys.has(k.id));
  const revokeControl = (k: Pick<Key, 'id' | 'status'>, label: string) =>
    k.status === 'active' &&
    (confirming === k.id ? (
      <span>
        Revoke for good?{' '}
        <button type="button" class="danger" onClick={() => revoke(k)}>
          Yes, revoke
        </button>{' '}
        <button type="button" class="secondary" onClick={() => setConfirming(null)}>
          Cancel
        </button>
      </span>
    ) : (
      <button
        type="button"
        class="secondary"
        aria-label={`Revoke ${label}`}
        onClick={() => setConfirming(k.id)}
      >
        Revoke
      </button>
    ));
  const cap = (tokens: string | null) => (tokens === null ? 'none' : `${tokens} tokens`);

  const base = location.origin;
  const mcp = mcpUrl ?? `${base}/mcp/jsonrpc`;
  const publicTest = keys?.find((k) => k.kind === 'public_test' && k.status === 'active');
  return (
    <>
      <h1>Keys</h1>
      {error !== null && <ProblemBox error={error} />}
      {publicTest && (
        <p class="notice">
          Your public-test key <code>{publicTest.prefix}</code> expires{' '}
          <strong data-testid="public-test-expires">{when(publicTest.expires_at)}</strong>.
          {me?.account?.public_test_window_ends_at && (
            <>
              {' '}
              Public-test window: free reads of P0 datasets until{' '}
              <strong data-testid="public-test-window">{when(me.account.public_test_window_ends_at)}</strong>.
            </>
          )}
        </p>
      )}
      <form class="card row" onSubmit={create} aria-label="Create a wallet key" noValidate>
        <label>
          New key name (optional)
          <input value={name} maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit">Create wallet key</button>
        {invalid && (
          <p class="problem" role="alert">
            {invalid}
          </p>
        )}
      </form>
      {created && (
        <section class="success" aria-labelledby="created-title">
          <h2 id="created-title">New key {created.name ? `“${created.name}”` : ''}</h2>
          <p>
            <strong>Copy it now: it is shown once.</strong> Only its digest is stored. It spends your wallet
            at the API price (your tier discount, no Terminal surcharge).
          </p>
          <div class="row">
            <label>
              New key
              <input readOnly value={created.key} size={60} />
            </label>
            <Copy text={created.key} label="Copy the new key" />
            <button type="button" class="secondary" onClick={() => setCreated(null)}>
              I have copied it
            </button>
          </div>
        </section>
      )}
      <ScrollRegion label="Keys (scrollable)">
        <table class="cards">
          <caption class="visually-hidden">Your keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Prefix</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col" class="num">
                Recent reads
              </th>
              <th scope="col" class="num">
                Burned this month
              </th>
              <th scope="col">Expires</th>
              <th scope="col">Status</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {ownKeys?.map((k) => (
              <tr key={k.id}>
                <td class="card-title">{k.name ?? <span class="muted">unnamed</span>}</td>
                <td data-label="Kind">{k.kind}</td>
                <td data-label="Prefix">
                  <code>{k.prefix}</code>
                </td>
                <td data-label="Created">{when(k.created_at)}</td>
                <td data-label="Last used" data-testid="last-used">
                  {lastUsed.has(k.id) ? (
                    when(lastUsed.get(k.id) ?? null)
                  ) : (
                    <span class="muted">not recently</span>
                  )}
                </td>
                <td data-label="Recent reads" class="num" data-testid="recent-reads">
                  {recentReads.get(k.id) ?? 0}
                </td>
                <td data-label="Burned this month" class="num" data-testid="burned-this-month">
                  {k.burned_this_month}
                </td>
                <td data-label="Expires">{when(k.expires_at)}</td>
                <td data-label="Status">{k.status}</td>
                <td>{revokeControl(k, k.name ?? k.prefix)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>

      <h2>Agent connections</h2>
      <p>
        Hosted agents (Claude, ChatGPT, Cursor) connect to the MCP URL below by signing in: you approve each
        one here in the Terminal, with its own spending caps. A connection reads at the API price, like a key.
      </p>
      {connections.length === 0 ? (
        <p class="muted" data-testid="no-connections">
          No agent has connected yet.
        </p>
      ) : (
        <ScrollRegion label="Agent connections (scrollable)">
          <table class="cards">
            <caption class="visually-hidden">Agent connections</caption>
            <thead>
              <tr>
                <th scope="col">Client</th>
                <th scope="col">Returns to</th>
                <th scope="col">Connected</th>
                <th scope="col">Last used</th>
                <th scope="col">Caps (day / month)</th>
                <th scope="col">Status</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {connections.map((c) => (
                <tr key={c.key.id} data-testid="connection">
                  <td class="card-title">{c.client_name}</td>
                  <td data-label="Returns to">
                    <code>{c.redirect_host}</code>
                  </td>
                  <td data-label="Connected">{when(c.connected_at)}</td>
                  <td data-label="Last used">
                    {lastUsed.has(c.key.id) ? (
                      when(lastUsed.get(c.key.id) ?? null)
                    ) : (
                      <span class="muted">not recently</span>
                    )}
                  </td>
                  <td data-label="Caps (day / month)">
                    {cap(c.key.spending_caps.daily)} / {cap(c.key.spending_caps.monthly)}
                  </td>
                  <td data-label="Status">{c.key.status}</td>
                  <td>{revokeControl(c.key, c.client_name)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}

      <ConnectSnippets base={base} mcp={mcp} />
      <h3>The cost headers of every read</h3>
      <dl class="facts">
        <dt>
          <code>X-Token-Cost</code>
        </dt>
        <dd>What the read costs you: list price less your tier discount (×1.35 from the Terminal).</dd>
        <dt>
          <code>X-Request-Tokens</code>
        </dt>
        <dd>Tokens actually burned (0 for a public-test key's free reads).</dd>
        <dt>
          <code>X-Request-Cost-EUR</code>
        </dt>
        <dd>The burn in euros.</dd>
        <dt>
          <code>X-Credits-Remaining</code>
        </dt>
        <dd>Your wallet balance after the read.</dd>
      </dl>
    </>
  );
}
