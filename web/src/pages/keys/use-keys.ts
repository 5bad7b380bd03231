/** The Keys page's data: the account's keys, its agent connections, and each key's recent reads. */
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Connection, Key } from '../../types.ts';

/** How many of the newest usage events are searched for each key's last read. */
const USAGE_WINDOW = 500;

export interface KeyUsage {
  /** When each key last read. */
  lastUsed: Map<string, string>;
  /** Reads by key among the account's newest USAGE_WINDOW usage events. */
  recentReads: Map<string, number>;
}

export function useKeys(onError: (e: unknown) => void) {
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [connections, setConnections] = useState<Connection[]>([]);
  const [usage, setUsage] = useState<KeyUsage>({ lastUsed: new Map(), recentReads: new Map() });
  const load = () => {
    api<{ data: Key[] }>('/api/v1/keys')
      .then((a) => setKeys(a.body.data))
      .catch(onError);
    api<{ data: Connection[] }>('/api/v1/connections')
      .then((a) => setConnections(a.body.data))
      .catch(onError);
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
        setUsage({ lastUsed: seen, recentReads: counts });
      })
      .catch(onError);
  };
  return { keys, connections, usage, load };
}
