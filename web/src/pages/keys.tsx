/** Keys: list, create a wallet key (shown once), revoke with confirmation; Connect snippets. Parts: ./keys/. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ProblemBox } from '../components/problem-box.tsx';
import { useSession } from '../session.ts';
import type { Key } from '../types.ts';
import { ConnectSnippets } from './connect-snippets.tsx';
import { ConnectionsTable } from './keys/connections-table.tsx';
import { CostHeaders } from './keys/cost-headers.tsx';
import { CreateKey } from './keys/create-key.tsx';
import { KeysTable } from './keys/keys-table.tsx';
import { PublicTestNotice } from './keys/public-test-notice.tsx';
import { RevokeControl } from './keys/revoke-control.tsx';
import { useKeys } from './keys/use-keys.ts';

export function KeysPage() {
  const { me } = useSession();
  const [error, setError] = useState<unknown>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [mcpUrl, setMcpUrl] = useState<string | null>(null);
  const { keys, connections, usage, load } = useKeys(setError);

  useEffect(() => {
    load();
    api<{ mcp_url: string }>('/api/v1/auth/sandbox')
      .then((a) => setMcpUrl(a.body.mcp_url))
      .catch(() => setMcpUrl(null));
  }, []);

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
  const revokeControl = (k: Pick<Key, 'id' | 'status'>, label: string) => (
    <RevokeControl
      credential={k}
      label={label}
      confirming={confirming === k.id}
      onConfirm={(open) => setConfirming(open ? k.id : null)}
      onRevoke={() => revoke(k)}
    />
  );

  const connectionKeys = new Set(connections.map((c) => c.key.id));
  const ownKeys = keys?.filter((k) => !connectionKeys.has(k.id)) ?? [];
  const base = location.origin;
  const publicTest = keys?.find((k) => k.kind === 'public_test' && k.status === 'active');
  return (
    <>
      <h1>Keys</h1>
      {error !== null && <ProblemBox error={error} />}
      {publicTest && (
        <PublicTestNotice publicTest={publicTest} windowEndsAt={me?.account?.public_test_window_ends_at} />
      )}
      <CreateKey onCreated={load} onError={setError} />
      <KeysTable keys={ownKeys} usage={usage} revoke={revokeControl} />

      <h2>Agent connections</h2>
      <p>
        Hosted agents (Claude, ChatGPT, Cursor) connect to the MCP URL below by signing in: you approve each
        one here in the Terminal, with its own spending caps. A connection reads at the API price, like a key.
      </p>
      <ConnectionsTable connections={connections} lastUsed={usage.lastUsed} revoke={revokeControl} />

      <ConnectSnippets base={base} mcp={mcpUrl ?? `${base}/mcp/jsonrpc`} />
      <CostHeaders />
    </>
  );
}
