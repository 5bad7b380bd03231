/** A page of ledger entries: time, kind, amount, balance after, what a burn read, request id and memo. */
import { ScrollRegion } from '../../components/scroll-region.tsx';
import { Link } from '../../router.tsx';
import type { LedgerEntry } from '../../types.ts';

export interface LedgerTableProps {
  ledger: LedgerEntry[];
  /** Key id -> its name, to say which key read. */
  keyNames: Map<string, string>;
}

export function LedgerTable({ ledger, keyNames }: LedgerTableProps) {
  return (
    <ScrollRegion label="Ledger (scrollable)">
      <table class="cards">
        <caption class="visually-hidden">Ledger entries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time (UTC)</th>
            <th scope="col">Kind</th>
            <th scope="col" class="num">
              Amount
            </th>
            <th scope="col" class="num">
              Balance after
            </th>
            <th scope="col">Read</th>
            <th scope="col">Request id / memo</th>
          </tr>
        </thead>
        <tbody>
          {ledger.map((e) => (
            <tr key={e.id}>
              <td class="card-title">{e.created_at.replace('T', ' ').replace(/\.\d+Z$/, '')}</td>
              <td data-label="Kind">{e.kind}</td>
              <td class="num" data-label="Amount" data-testid="ledger-amount">
                {e.amount}
              </td>
              <td class="num" data-label="Balance after">
                {e.balance_after}
              </td>
              <td class="small" data-label="Read" data-testid="ledger-read">
                {e.read && (
                  <>
                    <Link href={`/dataset/${e.read.dataset}`}>{e.read.dataset}</Link> · {e.read.channel} ·{' '}
                    {e.read.key_id === null
                      ? 'session'
                      : `key ${keyNames.get(e.read.key_id) ?? e.read.key_id}`}
                  </>
                )}
              </td>
              <td class="small" data-label="Request id">
                <code>{e.request_id ?? ''}</code> {e.memo ?? ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
