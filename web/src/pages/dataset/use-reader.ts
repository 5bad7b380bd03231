/** The metered reads of a dataset page: a page of rows, paging back and forth, and the CSV download. */
import { useEffect, useState } from 'preact/hooks';
import { api, apiText, type CostHeaders } from '../../api.ts';
import { refreshMe } from '../../session.ts';
import type { Dataset, ReadPage } from '../../types.ts';
import { invalidInput, keyOptionOf, queryOf, type ReadForm } from './read-query.ts';

export interface Reader {
  page: ReadPage | null;
  cost: CostHeaders | null;
  csvCost: CostHeaders | null;
  readError: unknown;
  invalid: string | null;
  busy: boolean;
  /** 0 for the first page. */
  pageIndex: number;
  readFirst: () => void;
  /** Reads the page again (after a refusal). */
  retry: () => void;
  previous: () => void;
  next: () => void;
  downloadCsv: () => Promise<void>;
}

/** Saves `text` as a file the browser downloads. */
function saveFile(text: string, name: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function useReader(dsKey: string, ds: Dataset | null, form: ReadForm, afterRead: () => void): Reader {
  const [invalid, setInvalid] = useState<string | null>(null);
  const [page, setPage] = useState<ReadPage | null>(null);
  const [cost, setCost] = useState<CostHeaders | null>(null);
  const [readError, setReadError] = useState<unknown>(null);
  /** The cursor of each page read so far (null: the first), for paging back and forth. */
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [pageIndex, setPageIndex] = useState(0);
  const [busy, setBusy] = useState(false);
  const [csvCost, setCsvCost] = useState<CostHeaders | null>(null);

  useEffect(() => {
    setPage(null);
    setCost(null);
  }, [dsKey]);

  /** Runs a metered request; the balance and the price are asked again after it, whatever happened. */
  const metered = async (work: (ds: Dataset) => Promise<void>) => {
    if (!ds) return;
    setBusy(true);
    setReadError(null);
    try {
      await work(ds);
    } catch (e) {
      setReadError(e);
    } finally {
      setBusy(false);
      if (form.readAs === 'session') refreshMe().catch(() => undefined);
      afterRead();
    }
  };

  const read = async (from: (string | null)[], cursor: string | null, index: number) => {
    if (!ds) return;
    const problem = invalidInput(form);
    setInvalid(problem);
    if (problem) return;
    await metered(async (ds) => {
      const answer = await api<ReadPage>(
        `/api/v1/data/${ds.key}?${queryOf(ds, form, cursor)}`,
        keyOptionOf(form),
      );
      setPage(answer.body);
      setCost(answer.cost);
      setCsvCost(null);
      const next = from.slice(0, index + 1);
      next[index + 1] = answer.body.meta.next_cursor;
      setCursors(next);
      setPageIndex(index);
    });
  };

  const downloadCsv = async () => {
    if (!page) return;
    await metered(async (ds) => {
      const answer = await apiText(
        `/api/v1/data/${ds.key}?${queryOf(ds, form, cursors[pageIndex] ?? null)}`,
        {
          ...keyOptionOf(form),
          accept: 'text/csv',
        },
      );
      setCsvCost(answer.cost);
      saveFile(answer.body, `${ds.key.replace('/', '_')}.csv`);
    });
  };

  return {
    page,
    cost,
    csvCost,
    readError,
    invalid,
    busy,
    pageIndex,
    readFirst: () => {
      setCursors([null]);
      read([null], null, 0);
    },
    retry: () => read(cursors, cursors[pageIndex] ?? null, pageIndex),
    previous: () => read(cursors, cursors[pageIndex - 1] ?? null, pageIndex - 1),
    next: () => read(cursors, page?.meta.next_cursor ?? null, pageIndex + 1),
    downloadCsv,
  };
}
