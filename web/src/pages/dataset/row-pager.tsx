/** Where the reader is among the pages, and the buttons that cost one more read each: back, on, CSV. */
export interface RowPagerProps {
  /** 0 for the first page. */
  pageIndex: number;
  count: number;
  hasNext: boolean;
  busy: boolean;
  /** The price of one more read, when known. */
  tokenCost: string | null;
  onPrevious: () => void;
  onNext: () => void;
  onCsv: () => void;
}

export function RowPager(props: RowPagerProps) {
  const { pageIndex, busy } = props;
  return (
    <div class="row">
      <span>
        Page {pageIndex + 1}, {props.count} rows
      </span>
      <button type="button" class="secondary" disabled={busy || pageIndex === 0} onClick={props.onPrevious}>
        Previous page (one more read)
      </button>
      <button type="button" class="secondary" disabled={busy || !props.hasNext} onClick={props.onNext}>
        Next page (one more read)
      </button>
      <button type="button" class="secondary" disabled={busy} onClick={props.onCsv}>
        Download CSV (one more metered read{props.tokenCost !== null ? `: ${props.tokenCost} tokens` : ''})
      </button>
    </div>
  );
}
