/** The ledger, a page of entries at a time, newest first, with the cursors to page back and forth. */
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { LedgerEntry } from '../../types.ts';

const PAGE = 20;

export function useLedger(onError: (e: unknown) => void) {
  const [ledger, setLedger] = useState<LedgerEntry[]>([]);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [pageIndex, setPageIndex] = useState(0);
  const [next, setNext] = useState<string | null>(null);

  const loadLedger = async (cursor: string | null, index: number) => {
    try {
      const q = new URLSearchParams({ limit: String(PAGE) });
      if (cursor) q.set('cursor', cursor);
      const { body } = await api<{ data: LedgerEntry[]; meta: { next_cursor: string | null } }>(
        `/api/v1/me/ledger?${q}`,
      );
      setLedger(body.data);
      setNext(body.meta.next_cursor);
      setPageIndex(index);
      const c = cursors.slice(0, index + 1);
      c[index + 1] = body.meta.next_cursor;
      setCursors(c);
    } catch (e) {
      onError(e);
    }
  };

  return {
    ledger,
    pageIndex,
    hasOlder: Boolean(next),
    first: () => loadLedger(null, 0),
    newer: () => loadLedger(cursors[pageIndex - 1] ?? null, pageIndex - 1),
    older: () => loadLedger(next, pageIndex + 1),
  };
}
