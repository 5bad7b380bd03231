/** The account's own keys (not its connections' keys): use, burn this month, expiry, and revoking. */
import type { ComponentChildren } from 'preact';
import { ScrollRegion } from '../../components/scroll-region.tsx';
import type { Key } from '../../types.ts';
import { LastUsed } from './last-used.tsx';
import type { KeyUsage } from './use-keys.ts';
import { when } from './when.ts';

export interface KeysTableProps {
  keys: Key[];
  usage: KeyUsage;
  /** The revoke control of a key, named by `label`. */
  revoke: (key: Key, label: string) => ComponentChildren;
}

export function KeysTable({ keys, usage, revoke }: KeysTableProps) {
  return (
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
          {keys.map((k) => (
            <tr key={k.id}>
              <td class="card-title">{k.name ?? <span class="muted">unnamed</span>}</td>
              <td data-label="Kind">{k.kind}</td>
              <td data-label="Prefix">
                <code>{k.prefix}</code>
              </td>
              <td data-label="Created">{when(k.created_at)}</td>
              <td data-label="Last used" data-testid="last-used">
                <LastUsed at={usage.lastUsed.get(k.id)} />
              </td>
              <td data-label="Recent reads" class="num" data-testid="recent-reads">
                {usage.recentReads.get(k.id) ?? 0}
              </td>
              <td data-label="Burned this month" class="num" data-testid="burned-this-month">
                {k.burned_this_month}
              </td>
              <td data-label="Expires">{when(k.expires_at)}</td>
              <td data-label="Status">{k.status}</td>
              <td>{revoke(k, k.name ?? k.prefix)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
