/** The agents connected by signing in: where they return to, their caps, use, and revoking. */
import type { ComponentChildren } from 'preact';
import { ScrollRegion } from '../../components/scroll-region.tsx';
import type { Connection, Key } from '../../types.ts';
import { LastUsed } from './last-used.tsx';
import { when } from './when.ts';

export interface ConnectionsTableProps {
  connections: Connection[];
  lastUsed: Map<string, string>;
  revoke: (key: Pick<Key, 'id' | 'status'>, label: string) => ComponentChildren;
}

const cap = (tokens: string | null) => (tokens === null ? 'none' : `${tokens} tokens`);

export function ConnectionsTable({ connections, lastUsed, revoke }: ConnectionsTableProps) {
  if (connections.length === 0) {
    return (
      <p class="muted" data-testid="no-connections">
        No agent has connected yet.
      </p>
    );
  }
  return (
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
                <LastUsed at={lastUsed.get(c.key.id)} />
              </td>
              <td data-label="Caps (day / month)">
                {cap(c.key.spending_caps.daily)} / {cap(c.key.spending_caps.monthly)}
              </td>
              <td data-label="Status">{c.key.status}</td>
              <td>{revoke(c.key, c.client_name)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
